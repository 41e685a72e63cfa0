package httpapi

import (
	"fmt"
	"math"
	"net/http"
	"strconv"
	"time"

	"golang.org/x/time/rate"
)

// Limit is a request-rate limit: a token bucket refilled at PerSecond
// tokens a second holding at most Burst; each request takes one token.
// PerSecond 0 means no limit.
type Limit struct {
	PerSecond float64 `json:"per_second"`
	Burst     int     `json:"burst,omitempty"` // default: PerSecond rounded up, at least 1
}

// check validates l and fills in its default burst.
func (l *Limit) check() error {
	switch {
	case math.IsNaN(l.PerSecond) || l.PerSecond < 0 || math.IsInf(l.PerSecond, 0):
		return fmt.Errorf("per_second %v: want a number ≥ 0 (0: no limit)", l.PerSecond)
	case l.Burst < 0:
		return fmt.Errorf("burst %d: want ≥ 1", l.Burst)
	case l.PerSecond > 0 && l.Burst == 0:
		l.Burst = max(1, int(math.Ceil(l.PerSecond)))
	}
	return nil
}

// limiter is the token bucket of one key. It is shared by every request of
// the key and carried across keys-file reloads while the key's name and
// limit stay the same.
type limiter struct {
	limit Limit
	lim   *rate.Limiter
	limH  []string // RateLimit-Limit value, computed once
}

func newLimiter(l Limit) *limiter {
	return &limiter{limit: l, lim: rate.NewLimiter(rate.Limit(l.PerSecond), l.Burst), limH: []string{strconv.Itoa(l.Burst)}}
}

// take takes a token for a request at now and sets the RateLimit-*
// headers on h. When the bucket is empty it takes nothing and returns how
// long until a token is available.
func (l *limiter) take(now time.Time, h http.Header) (wait time.Duration, ok bool) {
	h["Ratelimit-Limit"] = l.limH
	if l.lim.AllowN(now, 1) {
		left := l.lim.TokensAt(now)
		h["Ratelimit-Remaining"] = []string{strconv.Itoa(int(left))}
		h["Ratelimit-Reset"] = []string{strconv.Itoa(secondsUp(time.Duration((float64(l.limit.Burst) - left) / l.limit.PerSecond * float64(time.Second))))}
		return 0, true
	}
	r := l.lim.ReserveN(now, 1)
	wait = r.DelayFrom(now)
	r.CancelAt(now)
	h["Ratelimit-Remaining"] = []string{"0"}
	h["Ratelimit-Reset"] = []string{strconv.Itoa(secondsUp(wait))}
	return wait, false
}

// secondsUp is d in whole seconds, rounded up.
func secondsUp(d time.Duration) int {
	return int((d + time.Second - 1) / time.Second)
}
