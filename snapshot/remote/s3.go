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
	c, bucket, key, err := s3Client(loc)
	if err != nil {
		return "", err
	}
	u, err := c.PresignedGetObject(ctx, bucket, key, presignFor, nil)
	if err != nil {
		return "", fmt.Errorf("remote: %s: %w", loc, err)
	}
	return u.String(), nil
}

// s3Client returns a client for the s3://BUCKET/KEY location loc, from
// the standard AWS environment, and its bucket and key.
func s3Client(loc string) (c *minio.Client, bucket, key string, err error) {
	bucket, key, ok := strings.Cut(strings.TrimPrefix(loc, "s3://"), "/")
	if !strings.HasPrefix(loc, "s3://") || !ok || bucket == "" || key == "" {
		return nil, "", "", fmt.Errorf("remote: %q: want s3://BUCKET/KEY", loc)
	}
	endpoint, secure, pathStyle := "s3.amazonaws.com", true, false
	if e := firstEnv("AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL"); e != "" {
		u, err := url.Parse(e)
		if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
			return nil, "", "", fmt.Errorf("remote: endpoint %q: want http(s)://HOST[:PORT]", e)
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
	c, err = minio.New(endpoint, opts)
	if err != nil {
		return nil, "", "", fmt.Errorf("remote: %s: %w", loc, err)
	}
	return c, bucket, key, nil
}

// maxCopy is the largest object S3 copies in one request (5 GiB).
const maxCopy = 5 << 30

// Upload publishes the snapshot file at path to the s3://BUCKET/KEY
// location loc, so that readers of KEY see the previous object or the new
// one whole, never a part: the file is verified first (header and every
// section checksum: a file a server would refuse is never published),
// uploaded to a temporary key beside KEY (KEY.upload-…), checked there
// (size), copied over KEY by the store itself, and the temporary object
// removed. Files over 5 GiB, more than one copy request takes, are
// uploaded to KEY directly, as one multipart upload (S3 makes an object
// visible only once its upload completes). A failed Upload leaves KEY as
// it was.
func Upload(ctx context.Context, path, loc string) error {
	if !strings.HasPrefix(loc, "s3://") {
		return fmt.Errorf("remote: %q: uploads go to s3://BUCKET/KEY", loc)
	}
	if err := Verify(path); err != nil {
		return fmt.Errorf("remote: %s: not uploaded: %w", path, err)
	}
	c, bucket, key, err := s3Client(loc)
	if err != nil {
		return err
	}
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	opts := minio.PutObjectOptions{ContentType: "application/octet-stream"}
	if st.Size() > maxCopy {
		if _, err := c.PutObject(ctx, bucket, key, f, st.Size(), opts); err != nil {
			return fmt.Errorf("remote: upload %s: %w", loc, err)
		}
		return nil
	}
	tmp := fmt.Sprintf("%s.upload-%d-%d", key, os.Getpid(), time.Now().UnixNano())
	defer c.RemoveObject(context.WithoutCancel(ctx), bucket, tmp, minio.RemoveObjectOptions{})
	if _, err := c.PutObject(ctx, bucket, tmp, f, st.Size(), opts); err != nil {
		return fmt.Errorf("remote: upload %s: %w", loc, err)
	}
	info, err := c.StatObject(ctx, bucket, tmp, minio.StatObjectOptions{})
	if err != nil {
		return fmt.Errorf("remote: upload %s: %w", loc, err)
	}
	if info.Size != st.Size() {
		return fmt.Errorf("remote: upload %s: the store holds %d bytes of %d", loc, info.Size, st.Size())
	}
	if _, err := c.CopyObject(ctx, minio.CopyDestOptions{Bucket: bucket, Object: key}, minio.CopySrcOptions{Bucket: bucket, Object: tmp}); err != nil {
		return fmt.Errorf("remote: publish %s: %w", loc, err)
	}
	return nil
}

func firstEnv(names ...string) string {
	for _, n := range names {
		if v := os.Getenv(n); v != "" {
			return v
		}
	}
	return ""
}
