package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"slices"
	"sync"
	"time"
)

// LoadConfig describes a bounded load run against a loopback server.
type LoadConfig struct {
	URL         string        // full request URL; its host must be a loopback address
	Method      string        // GET (default) or POST
	Body        []byte        // request body (POST)
	Key         string        // API key sent as Authorization: Bearer <Key>
	Requests    int           // stop after this many requests (at most 1,000,000)
	Duration    time.Duration // or after this long (at most 5 minutes)
	Concurrency int           // parallel clients (default 4, at most 256)
	// Rate, when > 0, starts requests at this many a second (open loop:
	// each on its own connection slot, at most Concurrency in flight; a
	// request due while Concurrency are in flight waits for one) instead
	// of each client sending its next request as its last is answered.
	Rate float64
	// Wire, where the kernel reports when a connection's data arrived
	// (Linux), also measures each answer on the wire: from the request's
	// start to the kernel's receipt of the answer's last byte, leaving
	// out how long the client's own threads then waited for a CPU to
	// read it (LoadResult.Wire).
	Wire bool
}

// LoadResult summarizes a load run.
type LoadResult struct {
	Requests  int
	Errors    int // transport errors and non-200 answers
	Refused   int // of which 429 answers
	Failed    int // of which 5xx answers
	Elapsed   time.Duration
	P50, P99  time.Duration
	Max       time.Duration
	PerSecond float64
	// Latencies are those of every answered request, ascending.
	Latencies []time.Duration
	// Wire are the answered requests' latencies on the wire
	// (LoadConfig.Wire), ascending; nil when not measured.
	Wire []time.Duration
}

func (r LoadResult) String() string {
	return fmt.Sprintf("%d requests (%d errors: %d 429, %d 5xx) in %v: %.0f req/s, p50 %v, p99 %v, max %v",
		r.Requests, r.Errors, r.Refused, r.Failed, r.Elapsed.Round(time.Millisecond), r.PerSecond, r.P50, r.P99, r.Max)
}

// Load runs cfg: bounded by count and time, loopback only.
func Load(ctx context.Context, cfg LoadConfig) (LoadResult, error) {
	u, err := url.Parse(cfg.URL)
	if err != nil {
		return LoadResult{}, err
	}
	host := u.Hostname()
	if ip := net.ParseIP(host); !(host == "localhost" || ip != nil && ip.IsLoopback()) {
		return LoadResult{}, errors.New("load: only loopback addresses are allowed")
	}
	if cfg.Requests <= 0 && cfg.Duration <= 0 {
		return LoadResult{}, errors.New("load: set Requests or Duration")
	}
	if cfg.Requests <= 0 || cfg.Requests > 1_000_000 {
		cfg.Requests = 1_000_000
	}
	if cfg.Duration <= 0 || cfg.Duration > 5*time.Minute {
		cfg.Duration = 5 * time.Minute
	}
	if cfg.Concurrency <= 0 {
		cfg.Concurrency = 4
	}
	cfg.Concurrency = min(cfg.Concurrency, 256)
	if cfg.Method == "" {
		cfg.Method = http.MethodGet
	}
	ctx, cancel := context.WithTimeout(ctx, cfg.Duration)
	defer cancel()
	tr := &http.Transport{MaxIdleConnsPerHost: cfg.Concurrency}
	wire := false
	if cfg.Wire {
		tr.DialContext, wire = rxStampDialer()
	}
	client := &http.Client{Transport: tr, Timeout: 30 * time.Second}
	defer client.CloseIdleConnections()

	var (
		mu                    sync.Mutex
		lats, wires           []time.Duration
		errs, refused, failed int
		next                  int
		wg                    sync.WaitGroup
		start                 = time.Now()
		tick                  <-chan time.Time
	)
	if cfg.Rate > 0 {
		t := time.NewTicker(time.Duration(float64(time.Second) / cfg.Rate))
		defer t.Stop()
		tick = t.C
	}
	take := func() bool {
		if tick != nil {
			select {
			case <-tick:
			case <-ctx.Done():
				return false
			}
		}
		mu.Lock()
		defer mu.Unlock()
		if next >= cfg.Requests || ctx.Err() != nil {
			return false
		}
		next++
		return true
	}
	for w := 0; w < cfg.Concurrency; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			local := make([]time.Duration, 0, 1024)
			var localWire []time.Duration
			bad, r429, r5xx := 0, 0, 0
			var conn net.Conn // the connection of the request being made
			reqCtx := ctx
			if wire {
				reqCtx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{GotConn: func(i httptrace.GotConnInfo) { conn = i.Conn }})
			}
			for take() {
				req, _ := http.NewRequestWithContext(reqCtx, cfg.Method, cfg.URL, bytes.NewReader(cfg.Body))
				if cfg.Key != "" {
					req.Header.Set("Authorization", "Bearer "+cfg.Key)
				}
				t0 := time.Now()
				resp, err := client.Do(req)
				if err != nil {
					if ctx.Err() == nil {
						bad++
					}
					continue
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				local = append(local, time.Since(t0))
				if rc, ok := conn.(*rxConn); ok {
					if at, ok := rc.received(); ok {
						localWire = append(localWire, at.Sub(t0))
					}
				}
				switch {
				case resp.StatusCode == http.StatusOK:
				case resp.StatusCode == http.StatusTooManyRequests:
					bad++
					r429++
				case resp.StatusCode >= 500:
					bad++
					r5xx++
				default:
					bad++
				}
			}
			mu.Lock()
			lats = append(lats, local...)
			wires = append(wires, localWire...)
			errs, refused, failed = errs+bad, refused+r429, failed+r5xx
			mu.Unlock()
		}()
	}
	wg.Wait()
	res := LoadResult{Requests: len(lats), Errors: errs, Refused: refused, Failed: failed, Elapsed: time.Since(start)}
	if len(lats) > 0 {
		slices.Sort(lats)
		res.P50 = lats[len(lats)/2]
		res.P99 = lats[min(len(lats)-1, len(lats)*99/100)]
		res.Max = lats[len(lats)-1]
		res.PerSecond = float64(len(lats)) / res.Elapsed.Seconds()
		res.Latencies = lats
	}
	if wire {
		slices.Sort(wires)
		res.Wire = wires
	}
	return res, nil
}
