// Package stream owns what long HTTP responses need beyond net/http: a
// body streamed for longer than the server's WriteTimeout while its reader
// keeps reading (statements of 10^6 movements), still cut when the reader
// stops.
package stream

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"time"
)

// WriteTimeout is how long one write of a streamed body may block.
const WriteTimeout = 30 * time.Second

// Writer writes to an http.ResponseWriter, pushing the connection's write
// deadline Timeout past now as writes go through (at most once a second).
type Writer struct {
	w       io.Writer
	rc      *http.ResponseController
	timeout time.Duration
	next    time.Time // when the deadline is pushed again
	started bool
}

// Started reports whether anything was written: after that the status and
// headers are sent, and a failure can only abort the response.
func (d *Writer) Started() bool { return d.started }

// NewWriter returns a Writer on w with WriteTimeout.
func NewWriter(w http.ResponseWriter) *Writer {
	return &Writer{w: w, rc: http.NewResponseController(w), timeout: WriteTimeout}
}

// Write pushes the deadline when due, then writes p.
func (d *Writer) Write(p []byte) (int, error) {
	if now := time.Now(); !now.Before(d.next) {
		d.next = now.Add(time.Second)
		// Without deadline support (a test recorder) there is none to push.
		if err := d.rc.SetWriteDeadline(now.Add(d.timeout)); err != nil && !errors.Is(err, http.ErrNotSupported) {
			return 0, err
		}
	}
	d.started = true
	return d.w.Write(p)
}

// Attachment is the Content-Disposition of a download named name, each
// character of it outside A-Z a-z 0-9 . _ - replaced by '_' so that no
// quoting or header syntax can arise from the name.
func Attachment(name string) string {
	return `attachment; filename="` + strings.Map(func(c rune) rune {
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-' {
			return c
		}
		return '_'
	}, name) + `"`
}
