package negocios

import (
	"strconv"
	"time"

	"github.com/pregao/pregao/engine"
)

// Action is a row's update action (AcaoAtualizacao, UpdActn).
type Action uint8

// The update actions B3 publishes. Other codes are read as they are and
// refused by the Aggregator (Stats.BadAction).
const (
	ActionNew    Action = 0 // a new trade
	ActionCancel Action = 2 // the cancellation of the trade with the same id
)

// Session is a row's trading session (TipoSessaoPregao, TradgSsnId).
type Session uint8

// The trading sessions of the cash equity market. Other codes are read as
// they are and refused by the Aggregator (Stats.BadSession).
const (
	SessionRegular     Session = 1 // the regular session, opening and closing calls included
	SessionAfterMarket Session = 6 // the after-market
)

// LocalOffset is the fixed offset of the files' times (HoraFechamento,
// NtryTm) from UTC: B3's local time, UTC−03:00 (Brazil has had no
// daylight saving time since 2019).
const LocalOffset = -3 * time.Hour

// PriceScale is the number of Price units per BRL: prices are read and
// written with exactly three decimals, as every file seen carries them.
const PriceScale = 1000

// Trade is one row of a trade file: a trade, or the cancellation of one.
// Buyer and Seller are the participant (broker) codes, 0 when the file
// leaves them empty or has no such column.
type Trade struct {
	RefDate   engine.Date // DataReferencia (RptDt): the session the file reports
	TradeDate engine.Date // DataNegocio (TradDt): the trade's own date
	Ticker    string      // CodigoInstrumento (TckrSymb)
	Action    Action      // AcaoAtualizacao (UpdActn)
	Session   Session     // TipoSessaoPregao (TradgSsnId)
	// Price is BRL per share in thousandths (PriceScale): 23,480 is
	// 23480. It can be negative on some derivatives.
	Price    int64
	Quantity int64 // shares (QuantidadeNegociada, TradQty)
	// Time is the trade's time (HoraFechamento, NtryTm: HHMMSSfff at
	// UTC−03:00) on TradeDate, in unix milliseconds, UTC.
	Time int64
	// ID is the trade number (CodigoIdentificadorNegocio, TradId),
	// unique per instrument and trade date only.
	ID     int64
	Buyer  int32 // CodigoParticipanteComprador; 0 when empty
	Seller int32 // CodigoParticipanteVendedor; 0 when empty
}

// Minute returns the start of the 1-minute bar holding t, in unix
// seconds, UTC.
func (t *Trade) Minute() int64 { return floorDiv(t.Time, 60000) * 60 }

// LocalTime returns the time of day of t as the file writes it
// (HHMMSSfff, UTC−03:00), in milliseconds since local midnight of
// TradeDate.
func (t *Trade) LocalTime() int64 {
	return t.Time - int64(t.TradeDate)*86400000 + offsetMilli
}

// UnixMilli returns the unix milliseconds, UTC, of the local time of day
// ms (milliseconds since local midnight, UTC−03:00) on day d.
func UnixMilli(d engine.Date, ms int64) int64 {
	return int64(d)*86400000 + ms - offsetMilli
}

// offsetMilli is LocalOffset in milliseconds.
const offsetMilli = int64(LocalOffset / time.Millisecond)

// FormatPrice appends p (thousandths of BRL) as the files write it, with a
// decimal comma and three decimals (23,480; -0,035).
func FormatPrice(dst []byte, p int64) []byte {
	u := uint64(p)
	if p < 0 {
		dst = append(dst, '-')
		u = uint64(-p) // also right for math.MinInt64
	}
	dst = strconv.AppendUint(dst, u/PriceScale, 10)
	f := u % PriceScale
	return append(dst, ',', byte('0'+f/100), byte('0'+f/10%10), byte('0'+f%10))
}

// PriceNum returns p (thousandths of BRL) as an engine.Num in BRL: the
// float nearest to the decimal, the same float as a price parsed from its
// decimal text.
func PriceNum(p int64) engine.Num { return engine.Num(float64(p) / PriceScale) }

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}
