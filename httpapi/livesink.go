package httpapi

import "github.com/pregao/pregao/engine"

// SetLiveSink makes s receive the batches of the push endpoints. Until it
// is called, or after SetLiveSink(nil), they answer 503 ("no push feed").
// It is safe for concurrent use with requests.
func (a *API) SetLiveSink(s engine.LiveSink) {
	if s == nil {
		a.sink.Store(nil)
		return
	}
	a.sink.Store(&s)
}
