package httpapi

import (
	"errors"

	"github.com/pregao/pregao/engine"
)

// LiveSink receives the batches of the push endpoints (POST /admin/live/bars
// and /admin/live/trades). Its methods are called concurrently; an
// implementation serializes them.
type LiveSink interface {
	// NextSeq is the sequence number the next pushed batch must carry.
	NextSeq() uint64
	// PushBars applies a batch of whole 1-minute bars numbered seq.
	PushBars(seq uint64, bars []engine.LiveBar) error
	// PushTrades aggregates a batch of trades numbered seq into bars and
	// applies them.
	PushTrades(seq uint64, trades []LiveTrade) error
}

// LiveTrade is one trade (or its cancellation) of the live session.
type LiveTrade struct {
	Ticker      string
	Time        int64 // unix milliseconds, UTC
	Price       engine.Num
	Quantity    int64
	ID          string // the trade's id, unique per ticker and day
	Cancel      bool   // cancels the trade ID
	AfterMarket bool   // the after-market session (B3 session 6)
}

// ErrLiveSeq is what a LiveSink's Push methods return (wrapped or not) for
// a batch whose seq is not NextSeq: nothing of it is applied, and the push
// endpoints answer 409 naming NextSeq.
var ErrLiveSeq = errors.New("live batch out of sequence")

// ErrLiveUnavailable is what a LiveSink's Push methods return (wrapped)
// when a batch cannot be made durable for now (the live stream is
// unreachable): nothing of it is applied, and the push endpoints answer
// 503; the client sends the same batch again.
var ErrLiveUnavailable = errors.New("live feed unavailable for now")

// SetLiveSink makes s receive the batches of the push endpoints. Until it
// is called, or after SetLiveSink(nil), they answer 503 ("no push feed").
// It is safe for concurrent use with requests.
func (a *API) SetLiveSink(s LiveSink) {
	if s == nil {
		a.sink.Store(nil)
		return
	}
	a.sink.Store(&s)
}
