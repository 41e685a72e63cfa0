package httpapi

import (
	"hash/maphash"
	"log/slog"
	"net"
	"net/netip"
	"sync"
	"time"
)

// Requests without a valid key are limited per client address, so that
// keys cannot be tried at the full rate of the server: each address has a
// token bucket, and a request refused 401 takes a token. With the bucket
// empty the answer is still the 401 the specification gives a request
// without valid credentials (a client retrying a mistyped key is told its
// key is wrong, not to slow down), with Retry-After: the seconds until the
// address may be refused again. Such a request is only counted
// (pregao_auth_failures_total{result="limited"}); the trip is logged once,
// when the bucket is first found empty: it ends once the bucket is full
// again (the address sent no request without a valid key for Burst ÷
// PerSecond seconds), and the next empty bucket is a new trip. Requests
// with a valid key never touch the buckets: they are not slowed, whatever
// their address's failures. The address is the connection's (behind a
// proxy, the proxy's: put the limit in the proxy there); an IPv6
// address counts as its /64 (clientOf).
//
// The buckets live in a fixed table (authSlots), so that their memory is
// bounded whatever the number of addresses; an address whose slot another
// takes starts with a full bucket.

// DefaultAuthFailures is the default limit of requests without a valid key
// per client address.
var DefaultAuthFailures = Limit{PerSecond: 5, Burst: 20}

// authSlots is the number of client addresses whose buckets are kept.
const authSlots = 4096

// authLimiter is the table of the per-address buckets. Safe for
// concurrent use.
type authLimiter struct {
	limit Limit // PerSecond 0: no limit
	log   *slog.Logger
	seed  maphash.Seed

	mu    sync.Mutex
	slots []authBucket // made on first use
}

// authBucket is the bucket of one address.
type authBucket struct {
	addr    string
	tokens  float64
	last    time.Time // when tokens was counted
	tripped bool      // a trip is under way: found empty, not full since (logged once)
}

// clientOf returns the client a connection's "host:port" counts as: its
// IPv4 address (also when written as IPv4-mapped IPv6), or the /64 of its
// IPv6 address, which a host is given whole and picks addresses in at
// will (one bucket an address would give it a fresh burst with each).
func clientOf(remote string) string {
	host := remote
	if h, _, err := net.SplitHostPort(remote); err == nil {
		host = h
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return host
	}
	ip = ip.Unmap().WithZone("")
	if ip.Is4() {
		return ip.String()
	}
	return netip.PrefixFrom(ip, 64).Masked().String()
}

func newAuthLimiter(l Limit, log *slog.Logger) *authLimiter {
	return &authLimiter{limit: l, log: log, seed: maphash.MakeSeed()}
}

// fail takes a token of remote's bucket (a connection's "host:port") for a
// request refused at now; when there is none, it takes nothing and
// returns how long until there is one, logging the trip when it begins.
func (al *authLimiter) fail(remote string, now time.Time) (wait time.Duration, ok bool) {
	if al == nil || al.limit.PerSecond <= 0 {
		return 0, true
	}
	addr := clientOf(remote)
	al.mu.Lock()
	defer al.mu.Unlock()
	if al.slots == nil {
		al.slots = make([]authBucket, authSlots)
	}
	b := &al.slots[maphash.String(al.seed, addr)%authSlots]
	burst := float64(al.limit.Burst)
	if b.addr != addr {
		*b = authBucket{addr: addr, tokens: burst, last: now}
	}
	b.tokens = min(burst, b.tokens+now.Sub(b.last).Seconds()*al.limit.PerSecond)
	b.last = now
	if b.tokens >= burst {
		b.tripped = false // full again: the trip, if any, is over
	}
	if b.tokens >= 1 {
		b.tokens--
		return 0, true
	}
	if !b.tripped {
		b.tripped = true
		al.log.Warn("requests without a valid API key limited", "remote", addr, "per_second", al.limit.PerSecond, "burst", al.limit.Burst)
	}
	return time.Duration((1 - b.tokens) / al.limit.PerSecond * float64(time.Second)), false
}
