package remote

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// TestFetchS3 fetches from an in-process S3-compatible server through the
// standard AWS environment variables: a first fetch, an unchanged one (a
// 304), a corrupt publication refused.
func TestFetchS3(t *testing.T) {
	backend := s3mem.New()
	var notModified atomic.Int64
	faker := gofakes3.New(backend).Server()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := &statusRecorder{ResponseWriter: w}
		faker.ServeHTTP(rec, r)
		if rec.status == http.StatusNotModified {
			notModified.Add(1)
		}
	}))
	defer srv.Close()
	ctx := context.Background()
	c := s3Env(t, srv)
	put := func(b []byte) {
		if _, err := c.PutObject(ctx, "snaps", "demo/latest.snap", bytes.NewReader(b), int64(len(b)), minio.PutObjectOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	put(snapBytes(t))
	f := &Fetcher{URL: "s3://snaps/demo/latest.snap", Path: filepath.Join(t.TempDir(), "local.snap")}
	if changed, err := f.Fetch(ctx); err != nil || !changed {
		t.Fatalf("first: %v %v", changed, err)
	}
	if got, _ := os.ReadFile(f.Path); !bytes.Equal(got, snapBytes(t)) {
		t.Fatal("local copy differs")
	}
	if changed, err := f.Fetch(ctx); err != nil || changed || notModified.Load() != 1 {
		t.Fatalf("unchanged: %v %v, %d answers 304", changed, err, notModified.Load())
	}
	// A corrupt publication (another ETag) is refused; the copy stays.
	bad := bytes.Clone(snapBytes(t))
	bad[len(bad)-10] ^= 0xff
	put(bad)
	if changed, err := f.Fetch(ctx); err == nil || changed {
		t.Fatalf("a corrupt publication: %v %v", changed, err)
	}
	put(snapBytes(t))
	if got, _ := os.ReadFile(f.Path); !bytes.Equal(got, snapBytes(t)) {
		t.Fatal("the local copy changed")
	}
	if _, err := (&Fetcher{URL: "s3://snaps/missing.snap", Path: f.Path}).Fetch(ctx); err == nil {
		t.Error("a missing object fetched")
	}
	if _, err := (&Fetcher{URL: "s3://nokey", Path: f.Path}).Fetch(ctx); err == nil {
		t.Error("s3:// without a key accepted")
	}
}

type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (r *statusRecorder) WriteHeader(s int) { r.status = s; r.ResponseWriter.WriteHeader(s) }

// Upload publishes a verified file over KEY through a temporary key that
// it removes; a corrupt file, or a store that fails mid-way, leaves KEY
// as it was.
func TestUploadS3(t *testing.T) {
	var failPuts atomic.Bool
	faker := gofakes3.New(s3mem.New()).Server()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if failPuts.Load() && r.Method == http.MethodPut && r.Header.Get("X-Amz-Copy-Source") == "" {
			http.Error(w, "store down", http.StatusInternalServerError)
			return
		}
		faker.ServeHTTP(w, r)
	}))
	defer srv.Close()
	ctx := context.Background()
	c := s3Env(t, srv)
	dir := t.TempDir()
	good := filepath.Join(dir, "good.snap")
	if err := os.WriteFile(good, snapBytes(t), 0o644); err != nil {
		t.Fatal(err)
	}
	const loc = "s3://snaps/prod/pregao.snap"
	if err := Upload(ctx, good, loc); err != nil {
		t.Fatal(err)
	}
	object := func() []byte {
		t.Helper()
		o, err := c.GetObject(ctx, "snaps", "prod/pregao.snap", minio.GetObjectOptions{})
		if err != nil {
			t.Fatal(err)
		}
		defer o.Close()
		var b bytes.Buffer
		if _, err := b.ReadFrom(o); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
	if !bytes.Equal(object(), snapBytes(t)) {
		t.Fatal("published object differs from the file")
	}
	var keys []string
	for o := range c.ListObjects(ctx, "snaps", minio.ListObjectsOptions{Recursive: true}) {
		keys = append(keys, o.Key)
	}
	if len(keys) != 1 || keys[0] != "prod/pregao.snap" {
		t.Errorf("objects after the upload: %v, want only the key", keys)
	}

	corrupt := append([]byte(nil), snapBytes(t)...)
	corrupt[len(corrupt)-1] ^= 0xff
	bad := filepath.Join(dir, "bad.snap")
	if err := os.WriteFile(bad, corrupt, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Upload(ctx, bad, loc); err == nil {
		t.Error("a corrupt file was uploaded")
	}
	failPuts.Store(true)
	if err := Upload(ctx, good, loc); err == nil {
		t.Error("upload to a failing store: no error")
	}
	failPuts.Store(false)
	if !bytes.Equal(object(), snapBytes(t)) {
		t.Error("a refused upload changed the published object")
	}
	if err := Upload(ctx, good, "https://example.com/x.snap"); err == nil {
		t.Error("upload to an https URL: no error")
	}
}

// s3Env points the standard AWS environment at the S3-compatible server
// srv and returns a client of it with the bucket "snaps" made.
func s3Env(t *testing.T, srv *httptest.Server) *minio.Client {
	t.Helper()
	t.Setenv("AWS_ENDPOINT_URL", srv.URL)
	t.Setenv("AWS_ACCESS_KEY_ID", "pregao")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "pregao-secret")
	t.Setenv("AWS_REGION", "us-east-1")
	c, err := minio.New(srv.Listener.Addr().String(), &minio.Options{Creds: credentials.NewStaticV4("pregao", "pregao-secret", ""), BucketLookup: minio.BucketLookupPath})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.MakeBucket(context.Background(), "snaps", minio.MakeBucketOptions{}); err != nil {
		t.Fatal(err)
	}
	return c
}
