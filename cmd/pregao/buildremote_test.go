package main

import (
	"bytes"
	"context"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// pregao build --out s3://BUCKET/KEY builds locally and publishes the
// snapshot to the store: the object is the snapshot a local build writes,
// and serve --snapshot s3://… loads it.
func TestBuildToS3(t *testing.T) {
	srv := httptest.NewServer(gofakes3.New(s3mem.New()).Server())
	defer srv.Close()
	t.Setenv("AWS_ENDPOINT_URL", srv.URL)
	t.Setenv("AWS_ACCESS_KEY_ID", "pregao")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "pregao-secret")
	ctx := context.Background()
	c, err := minio.New(srv.Listener.Addr().String(), &minio.Options{Creds: credentials.NewStaticV4("pregao", "pregao-secret", ""), BucketLookup: minio.BucketLookupPath})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.MakeBucket(ctx, "snaps", minio.MakeBucketOptions{}); err != nil {
		t.Fatal(err)
	}
	dir := tinyBundle(t)
	var stdout, stderr bytes.Buffer
	if err := run(ctx, []string{"build", "--from", dir, "--out", "s3://snaps/pregao.snap"}, &stdout, &stderr); err != nil {
		t.Fatalf("build: %v\n%s", err, stderr.String())
	}
	if !strings.Contains(stdout.String(), "wrote s3://snaps/pregao.snap") {
		t.Errorf("output:\n%s", stdout.String())
	}
	local := filepath.Join(t.TempDir(), "local.snap")
	if err := run(ctx, []string{"build", "--from", dir, "--out", local}, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	want, _ := os.ReadFile(local)
	o, err := c.GetObject(ctx, "snaps", "pregao.snap", minio.GetObjectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	if _, err := got.ReadFrom(o); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Bytes(), want) {
		t.Errorf("published %d bytes, a local build writes %d", got.Len(), len(want))
	}
	if err := run(ctx, []string{"build", "--from", dir, "--out", "https://example.com/x.snap"}, &stdout, &stderr); err == nil || !strings.Contains(err.Error(), "s3://") {
		t.Errorf("build --out https://: %v", err)
	}
}
