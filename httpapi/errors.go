package httpapi

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/pregao/pregao/engine"
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

// errorf returns an *Error with status and a formatted message. Values
// quoted with %q are the client's input: those longer than maxEcho bytes
// are cut (truncateEcho), so that an answer never grows with its input.
func errorf(status int, format string, args ...any) error {
	return &Error{Status: status, Message: fmt.Sprintf(format, truncateEchoes(format, args)...)}
}

// maxEcho is the most bytes of one input value an error message repeats.
const maxEcho = 64

// maxMessage caps a whole client message in bytes (messages built from
// other errors included).
const maxMessage = 1024

// truncateEchoes returns args with each string or []byte argument of a %q
// verb of format longer than maxEcho replaced by its truncation; args
// itself when none is.
func truncateEchoes(format string, args []any) []any {
	var out []any
	n := 0 // index of the argument of the next verb
	for i := 0; i < len(format) && n < len(args); i++ {
		if format[i] != '%' {
			continue
		}
		i++
		for i < len(format) && strings.IndexByte("+-# 0123456789.", format[i]) >= 0 {
			i++
		}
		if i >= len(format) || format[i] == '%' {
			continue
		}
		if format[i] == 'q' {
			var t string
			switch v := args[n].(type) {
			case string:
				t = v
			case []byte:
				t = string(v)
			}
			if len(t) > maxEcho {
				if out == nil {
					out = append([]any(nil), args...)
				}
				out[n] = truncateEcho(t)
			}
		}
		n++
	}
	if out == nil {
		return args
	}
	return out
}

// truncateEcho cuts s to at most maxEcho bytes on a rune boundary and says
// how long it was: "AAAA…(1048576 bytes)".
func truncateEcho(s string) string {
	cut := maxEcho
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…(" + strconv.Itoa(len(s)) + " bytes)"
}

// echo is s as an error message quotes the client's input: s itself, or
// its truncation when longer than maxEcho bytes (for messages built
// without errorf).
func echo(s string) string {
	if len(s) > maxEcho {
		return truncateEcho(s)
	}
	return s
}

// capMessage cuts msg to maxMessage bytes on a rune boundary.
func capMessage(msg string) string {
	if len(msg) <= maxMessage {
		return msg
	}
	cut := maxMessage
	for cut > 0 && !utf8.RuneStart(msg[cut]) {
		cut--
	}
	return msg[:cut] + "…"
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
		return e.Status, capMessage(e.Message)
	case errors.Is(err, engine.ErrNotFound):
		return http.StatusNotFound, capMessage(err.Error())
	case errors.Is(err, engine.ErrInvalid):
		return http.StatusBadRequest, capMessage(err.Error())
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
