package bundle

// Meter receives the progress of a long Read or Write (snapshot.Progress
// is one): Begin names a phase with its unit and total (0: unknown), Add
// counts units done. Its methods are called from several goroutines.
type Meter interface {
	Begin(phase, unit string, total int64)
	Add(n int64)
}

// noMeter is the Meter of options that set none.
type noMeter struct{}

func (noMeter) Begin(string, string, int64) {}
func (noMeter) Add(int64)                   {}

func meterOr(m Meter) Meter {
	if m == nil {
		return noMeter{}
	}
	return m
}
