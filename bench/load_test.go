package bench

import (
	"context"
	"net/http/httptest"
	"os"
	"testing"
	"time"
)

func TestLoadRefusesRemote(t *testing.T) {
	if _, err := Load(context.Background(), LoadConfig{URL: "http://example.com/", Requests: 1}); err == nil {
		t.Error("a non-loopback address was accepted")
	}
}

// BenchmarkLoadIndexHighs runs a short loopback load (PREGAO_LOAD=1) over
// real HTTP connections and logs p50/p99 and requests per second.
func BenchmarkLoadIndexHighs(b *testing.B) {
	if os.Getenv("PREGAO_LOAD") == "" {
		b.Skip("set PREGAO_LOAD=1 to run the loopback load")
	}
	a, _ := setup(b)
	srv := httptest.NewServer(a)
	defer srv.Close()
	for i := 0; i < b.N; i++ {
		res, err := Load(context.Background(), LoadConfig{URL: srv.URL + "/v2/indexes/IBOV/highs", Key: benchKey, Requests: 20000, Duration: 10 * time.Second, Concurrency: 8})
		if err != nil {
			b.Fatal(err)
		}
		b.Log(res)
	}
}
