package main

import (
	"io"
	"net/http"
	"slices"
	"sync"
	"time"
)

// loadSample is one request of an open-loop load: when it was scheduled
// (from the start), its latency counted from then, and whether it got a
// 200.
type loadSample struct {
	at, lat time.Duration
	ok      bool
}

// openLoad sends rate GET requests a second for dur to base+paths[i %
// len(paths)] with key, on schedule whatever the answers' latency (open
// loop: a stalled server is not hidden by waiting clients), and returns
// the samples once every request ended. It starts at start.
func openLoad(base string, paths []string, key string, rate float64, dur time.Duration, start time.Time) []loadSample {
	n := int(rate * dur.Seconds())
	samples := make([]loadSample, n)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 256, MaxConnsPerHost: 256}, Timeout: 10 * time.Second}
	var wg sync.WaitGroup
	sem := make(chan struct{}, 256)
	for i := range n {
		at := time.Duration(float64(i) / rate * float64(time.Second))
		if d := time.Until(start.Add(at)); d > 0 {
			time.Sleep(d)
		}
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			req, _ := http.NewRequest("GET", base+paths[i%len(paths)], nil)
			req.Header.Set("Authorization", "Bearer "+key)
			resp, err := client.Do(req)
			ok := err == nil
			if ok {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				ok = resp.StatusCode == 200
			}
			samples[i] = loadSample{at: at, lat: time.Since(start.Add(at)), ok: ok}
		}()
	}
	wg.Wait()
	return samples
}

// quantile returns the q quantile of d (sorting it).
func quantile(d []time.Duration, q float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	slices.Sort(d)
	return d[min(len(d)-1, int(q*float64(len(d))))]
}
