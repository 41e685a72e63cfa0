package httpapi

import (
	"errors"
	"fmt"
	"net/http"
)

// Error is an HTTP-level error: a status code and a message for the client.
// Every 4xx and 5xx answer has the body {"error":{"status":N,"message":"..."}}
// with Content-Type application/json, the shape of the per-ticker error of
// batch quotes.
type Error struct {
	Status  int
	Message string
}

func (e *Error) Error() string { return fmt.Sprintf("%d: %s", e.Status, e.Message) }

// errorf returns an *Error with status and a formatted message.
func errorf(status int, format string, args ...any) error {
	return &Error{Status: status, Message: fmt.Sprintf(format, args...)}
}

func badRequest(format string, args ...any) error {
	return errorf(http.StatusBadRequest, format, args...)
}

func notFound(format string, args ...any) error {
	return errorf(http.StatusNotFound, format, args...)
}

// statusOf maps err to an HTTP status and a client message: *Error as is,
// the engine's not-found and invalid sentinels to 404 and 400 with err's
// text, anything else to 500 (the caller logs it; the client sees a generic
// message).
func statusOf(err error) (int, string) {
	var e *Error
	switch {
	case errors.As(err, &e):
		return e.Status, e.Message
	case isNotFound(err):
		return http.StatusNotFound, err.Error()
	case isInvalid(err):
		return http.StatusBadRequest, err.Error()
	}
	return http.StatusInternalServerError, "internal server error"
}

// appendError appends the JSON error body.
func appendError(dst []byte, status int, msg string) []byte {
	dst = append(dst, `{"error":{"status":`...)
	dst = appendInt(dst, int64(status))
	dst = append(dst, `,"message":`...)
	dst = appendString(dst, msg)
	return append(dst, "}}"...)
}
