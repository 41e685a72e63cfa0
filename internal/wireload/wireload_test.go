package wireload

import (
	"bufio"
	"io"
	"strings"
	"testing"
)

// ReadAnswer takes a 200 framed by Content-Length, whatever the case of
// the header's name, and leaves the reader at the next answer; anything
// else is an error.
func TestReadAnswer(t *testing.T) {
	for _, c := range []struct {
		name, in string
		n        int
		ok       bool
	}{
		{"200", "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhelloNEXT", 5, true},
		{"lower-case length", "HTTP/1.1 200 OK\r\ncontent-length:  3 \r\nX: y\r\n\r\nabcNEXT", 3, true},
		{"empty body", "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\nNEXT", 0, true},
		{"not 200", "HTTP/1.1 404 Not Found\r\nContent-Length: 2\r\n\r\nnoNEXT", 0, false},
		{"no length", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 0, false},
		{"bad length", "HTTP/1.1 200 OK\r\nContent-Length: x\r\n\r\n", 0, false},
		{"cut short", "HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\nabc", 0, false},
		{"cut in the head", "HTTP/1.1 200 OK\r\nContent-Le", 0, false},
	} {
		br := bufio.NewReader(strings.NewReader(c.in))
		n, err := ReadAnswer(br)
		if c.ok {
			rest, _ := io.ReadAll(br)
			if err != nil || n != c.n || string(rest) != "NEXT" {
				t.Errorf("%s: %d, %v, rest %q; want %d and NEXT", c.name, n, err, rest, c.n)
			}
		} else if err == nil {
			t.Errorf("%s: %d bytes, no error", c.name, n)
		}
	}
}
