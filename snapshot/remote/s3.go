package remote

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// An s3://BUCKET/KEY location is fetched through a presigned GET URL, so
// that the conditional, resumable and verified download above serves it
// as it serves any URL. The client follows the standard AWS environment:
// AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN, AWS_REGION
// (or AWS_DEFAULT_REGION), and AWS_ENDPOINT_URL_S3 or AWS_ENDPOINT_URL for
// any S3-compatible store (path-style addressing then); without an
// endpoint, AWS S3 itself.

// presignFor is how long a presigned URL is valid: one fetch.
const presignFor = 15 * time.Minute

// resolve returns the http(s) URL a fetch of loc uses: loc itself, or a
// presigned URL for an s3:// location.
func resolve(ctx context.Context, loc string) (string, error) {
	if !strings.HasPrefix(loc, "s3://") {
		return loc, nil
	}
	bucket, key, ok := strings.Cut(strings.TrimPrefix(loc, "s3://"), "/")
	if !ok || bucket == "" || key == "" {
		return "", fmt.Errorf("remote: %q: want s3://BUCKET/KEY", loc)
	}
	endpoint, secure, pathStyle := "s3.amazonaws.com", true, false
	if e := firstEnv("AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL"); e != "" {
		u, err := url.Parse(e)
		if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
			return "", fmt.Errorf("remote: endpoint %q: want http(s)://HOST[:PORT]", e)
		}
		endpoint, secure, pathStyle = u.Host, u.Scheme == "https", true
	}
	opts := &minio.Options{
		Creds:  credentials.NewEnvAWS(),
		Secure: secure,
		Region: firstEnv("AWS_REGION", "AWS_DEFAULT_REGION"),
	}
	if opts.Region == "" {
		opts.Region = "us-east-1"
	}
	if pathStyle {
		opts.BucketLookup = minio.BucketLookupPath
	}
	c, err := minio.New(endpoint, opts)
	if err != nil {
		return "", fmt.Errorf("remote: %s: %w", loc, err)
	}
	u, err := c.PresignedGetObject(ctx, bucket, key, presignFor, nil)
	if err != nil {
		return "", fmt.Errorf("remote: %s: %w", loc, err)
	}
	return u.String(), nil
}

func firstEnv(names ...string) string {
	for _, n := range names {
		if v := os.Getenv(n); v != "" {
			return v
		}
	}
	return ""
}
