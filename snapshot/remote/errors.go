// errors.go owns what a failed fetch says: its reason (the label of a
// metric), and a message that never holds a URL's query string or
// credentials (a presigned s3:// URL carries an access key id and a
// signature in its query).

package remote

import (
	"context"
	"errors"
	"net/url"
	"regexp"
	"strings"
	"syscall"
)

// Reasons a fetch fails, as FetchError.Reason (and a metric's label).
const (
	ReasonNetwork   = "network"   // connection, DNS, TLS or reading the answer failed
	ReasonStatus    = "status"    // an answer other than 200, 206 or 304 (or a 206 that does not continue the part)
	ReasonTruncated = "truncated" // the body ended before its Content-Length
	ReasonTooLarge  = "too_large" // larger than MaxBytes (by its Content-Length or as it came)
	ReasonNoSpace   = "no_space"  // the file system would keep less than MinFree bytes free
	ReasonStalled   = "stalled"   // no byte for StallTimeout
	ReasonTimeout   = "timeout"   // the fetch's own deadline (its context, or the client's timeout) passed
	ReasonRedirect  = "redirect"  // a redirect to another host (without CrossHostRedirects) or from https to http
	ReasonVerify    = "verify"    // the file downloaded is not a valid snapshot
	ReasonLocal     = "local"     // writing the local files failed
	ReasonConfig    = "config"    // the location or the S3 environment is not usable
	ReasonCanceled  = "canceled"  // the caller canceled the fetch (a shutdown): not the origin's failure
)

// Reasons lists every reason a FetchError may carry, for a caller that
// exports a counter by reason from the start.
var Reasons = []string{ReasonNetwork, ReasonStatus, ReasonTruncated, ReasonTooLarge, ReasonNoSpace, ReasonStalled, ReasonTimeout, ReasonRedirect, ReasonVerify, ReasonLocal, ReasonConfig, ReasonCanceled}

// FetchError is a failed fetch. Its message has every URL's query string,
// fragment and user information removed (Redact); Unwrap gives the cause
// (ErrVerify for a file that does not verify, context errors...), whose
// own message may not be so cleaned: print the FetchError, not its cause.
type FetchError struct {
	Reason string // one of Reasons
	msg    string
	err    error
}

func (e *FetchError) Error() string { return e.msg }
func (e *FetchError) Unwrap() error { return e.err }

// failure returns a FetchError of reason for err, its message cleaned;
// err itself when it is one.
func failure(reason string, err error) *FetchError {
	if fe, ok := err.(*FetchError); ok {
		return fe
	}
	return &FetchError{Reason: reason, msg: scrub(err.Error()), err: err}
}

// ReasonOf returns the reason of a FetchError in err's chain ("" when
// there is none).
func ReasonOf(err error) string {
	var fe *FetchError
	if errors.As(err, &fe) {
		return fe.Reason
	}
	return ""
}

// Redact returns the location s without what may be a secret: its query
// string, fragment and user information (https://u:p@h/k?X-Amz-Signature=…
// is https://h/k). An s3:// location stays as it is (it holds none).
func Redact(s string) string {
	u, err := url.Parse(s)
	if err != nil || u.Scheme == "" {
		return scrub(s)
	}
	u.User, u.RawQuery, u.ForceQuery, u.Fragment, u.RawFragment = nil, "", false, "", ""
	return u.String()
}

var (
	urlUser  = regexp.MustCompile(`(?i)\b([a-z][a-z0-9+.-]*://)[^/\s"'@]*@`)
	urlQuery = regexp.MustCompile(`(?i)\b([a-z][a-z0-9+.-]*://[^\s"'?#]*)[?#][^\s"']*`)
)

// scrub removes the user information, query strings and fragments of
// every URL in the message s.
func scrub(s string) string {
	s = urlUser.ReplaceAllString(s, "$1")
	return urlQuery.ReplaceAllString(s, "$1")
}

// classify returns the reason of err, a failure of a request (or of
// reading its answer) made with the attempt's context actx under the
// fetch's context ctx.
func classify(ctx, actx context.Context, err error) string {
	var re *redirectError
	switch {
	case errors.As(err, &re):
		return ReasonRedirect
	case errors.Is(context.Cause(actx), errStalled):
		return ReasonStalled
	case errors.Is(ctx.Err(), context.Canceled):
		return ReasonCanceled
	case errors.Is(ctx.Err(), context.DeadlineExceeded), errors.Is(err, context.DeadlineExceeded), isTimeout(err):
		return ReasonTimeout
	case errors.Is(err, syscall.ENOSPC):
		return ReasonNoSpace
	}
	return ReasonNetwork
}

func isTimeout(err error) bool {
	var t interface{ Timeout() bool }
	return errors.As(err, &t) && t.Timeout() || strings.Contains(err.Error(), "Client.Timeout")
}

// errStalled is the cause of an attempt canceled for its stall timeout.
var errStalled = errors.New("no byte received for the stall timeout")

// redirectError is a redirect CheckRedirect refused.
type redirectError struct{ msg string }

func (e *redirectError) Error() string { return e.msg }
