package bench

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"sync"
	"time"
)

// directTransport is the load generator's HTTP/1.1 client: keep-alive
// connections to the one target, each request written and its answer read on
// the calling goroutine (Request.Write, http.ReadResponse).
//
// net/http's Transport gives every connection two goroutines of its own (a
// reader and a writer), so each request wakes three goroutines in turn. The
// load generator shares the machine with the server and the database it
// measures: with the Transport, those hand-offs and their context switches
// were about a quarter of its CPU at 16 payout workers. Answers are read
// whole (they are small), so a connection goes back to the pool as soon as
// RoundTrip returns.
type directTransport struct {
	dialer   net.Dialer
	maxIdle  int
	idleKeep time.Duration // a connection idle longer is closed, not reused
	tls      *tls.Config   // for https targets; nil: system roots

	mu   sync.Mutex
	idle []*directConn // most recently used last
}

type directConn struct {
	c        net.Conn
	br       *bufio.Reader
	bw       *bufio.Writer
	lastUsed time.Time
}

// maxAnswer bounds how much of an answer the load generator reads.
const maxAnswer = 8 << 20

// newDirectTransport returns a transport keeping at most maxIdle idle
// connections. https targets are dialed with TLS (system roots).
func newDirectTransport(maxIdle int) *directTransport {
	return &directTransport{dialer: net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second},
		maxIdle: maxIdle, idleKeep: 5 * time.Second}
}

// RoundTrip sends req on an idle connection (or a new one) and returns its
// answer with the body already read.
func (t *directTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL.Scheme != "http" && req.URL.Scheme != "https" {
		return nil, fmt.Errorf("bench transport: unsupported scheme %q", req.URL.Scheme)
	}
	ctx := req.Context()
	for attempt := 0; ; attempt++ {
		pc, reused, err := t.get(ctx, req.URL)
		if err != nil {
			return nil, err
		}
		resp, unsent, err := t.exchange(ctx, pc, req)
		if err == nil {
			return resp, nil
		}
		pc.c.Close()
		// A kept-alive connection the server closed meanwhile fails before
		// the request reached it: that one is sent again, once, on a new
		// connection. Anything else may have reached the server.
		if !reused || !unsent || attempt > 0 || ctx.Err() != nil {
			return nil, err
		}
		if req.Body != nil {
			if req.GetBody == nil {
				return nil, err
			}
			if req.Body, err = req.GetBody(); err != nil {
				return nil, err
			}
		}
	}
}

// exchange writes req on pc and reads its answer. unsent reports, on error,
// that the server cannot have acted on req: writing it failed (the
// connection was closed), or the connection closed with no answer and req
// is one that may be sent twice (as net/http's Transport decides: GET, HEAD,
// or an Idempotency-Key).
func (t *directTransport) exchange(ctx context.Context, pc *directConn, req *http.Request) (resp *http.Response, unsent bool, err error) {
	if dl, ok := ctx.Deadline(); ok {
		if err := pc.c.SetDeadline(dl); err != nil {
			return nil, false, err
		}
	} else if err := pc.c.SetDeadline(time.Time{}); err != nil {
		return nil, false, err
	}
	if ctx.Done() != nil {
		// Cancelling ctx interrupts a read or write in progress.
		stop := context.AfterFunc(ctx, func() { _ = pc.c.SetDeadline(time.Unix(1, 0)) })
		defer stop()
	}
	if err := req.Write(pc.bw); err != nil {
		return nil, !isTimeout(err), fmt.Errorf("write request: %w", ctxErr(ctx, err))
	}
	if err := pc.bw.Flush(); err != nil {
		return nil, !isTimeout(err), fmt.Errorf("send request: %w", ctxErr(ctx, err))
	}
	// Nothing of the answer yet: the server may have closed the idle
	// connection before it read the request.
	if _, err := pc.br.Peek(1); err != nil {
		return nil, !isTimeout(err) && replayable(req), fmt.Errorf("read answer: %w", ctxErr(ctx, err))
	}
	resp, err = http.ReadResponse(pc.br, req)
	if err != nil {
		return nil, false, fmt.Errorf("read answer: %w", ctxErr(ctx, err))
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	resp.Body.Close()
	if err != nil {
		return nil, false, fmt.Errorf("read answer body: %w", ctxErr(ctx, err))
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	if resp.Close || req.Close || len(body) == maxAnswer {
		pc.c.Close()
	} else {
		t.put(pc)
	}
	return resp, false, nil
}

// ctxErr is err, or ctx's error if ctx ended: the connection's deadline is
// ctx's, and may fire just before ctx reports it.
func ctxErr(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if dl, ok := ctx.Deadline(); ok && isTimeout(err) && !time.Now().Before(dl) {
		return fmt.Errorf("%w: %w", context.DeadlineExceeded, err)
	}
	return err
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

func replayable(req *http.Request) bool {
	return req.Method == http.MethodGet || req.Method == http.MethodHead || req.Header.Get("Idempotency-Key") != ""
}

// get returns an idle connection (reused) or dials u's host.
func (t *directTransport) get(ctx context.Context, u *url.URL) (pc *directConn, reused bool, err error) {
	now := time.Now()
	t.mu.Lock()
	for len(t.idle) > 0 {
		pc := t.idle[len(t.idle)-1]
		t.idle = t.idle[:len(t.idle)-1]
		if now.Sub(pc.lastUsed) <= t.idleKeep {
			t.mu.Unlock()
			return pc, true, nil
		}
		pc.c.Close()
	}
	t.mu.Unlock()
	port := u.Port()
	if port == "" {
		port = "80"
		if u.Scheme == "https" {
			port = "443"
		}
	}
	c, err := t.dialer.DialContext(ctx, "tcp", net.JoinHostPort(u.Hostname(), port))
	if err != nil {
		return nil, false, fmt.Errorf("connect to %s: %w", u.Host, err)
	}
	if u.Scheme == "https" {
		cfg := &tls.Config{}
		if t.tls != nil {
			cfg = t.tls.Clone()
		}
		cfg.ServerName, cfg.NextProtos = u.Hostname(), []string{"http/1.1"}
		tc := tls.Client(c, cfg)
		if err := tc.HandshakeContext(ctx); err != nil {
			c.Close()
			return nil, false, fmt.Errorf("TLS with %s: %w", u.Host, err)
		}
		c = tc
	}
	return &directConn{c: c, br: bufio.NewReaderSize(c, 16<<10), bw: bufio.NewWriterSize(c, 8<<10)}, false, nil
}

// put keeps pc for the next request, or closes it if enough are idle.
func (t *directTransport) put(pc *directConn) {
	pc.lastUsed = time.Now()
	t.mu.Lock()
	if len(t.idle) < t.maxIdle {
		t.idle = append(t.idle, pc)
		pc = nil
	}
	t.mu.Unlock()
	if pc != nil {
		pc.c.Close()
	}
}

// CloseIdleConnections closes every idle connection.
func (t *directTransport) CloseIdleConnections() {
	t.mu.Lock()
	idle := t.idle
	t.idle = nil
	t.mu.Unlock()
	for _, pc := range idle {
		pc.c.Close()
	}
}
