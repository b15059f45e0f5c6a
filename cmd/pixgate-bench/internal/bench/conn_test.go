package bench_test

import (
	"bufio"
	"context"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/cmd/pixgate-bench/internal/bench"
)

// echo answers every request with its method and body.
var echo = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	_, _ = io.WriteString(w, r.Method+" "+string(b))
})

// countingServer is an unstarted echo server that counts the connections
// opened to it.
func countingServer() (*httptest.Server, *atomic.Int64) {
	conns := new(atomic.Int64)
	srv := httptest.NewUnstartedServer(echo)
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	return srv, conns
}

func TestDirectTransportKeepsOneConnectionAlive(t *testing.T) {
	for _, tlsOn := range []bool{false, true} {
		name := map[bool]string{false: "http", true: "https"}[tlsOn]
		t.Run(name, func(t *testing.T) {
			srv, conns := countingServer()
			var roots *x509.CertPool
			if tlsOn {
				srv.StartTLS()
				roots = x509.NewCertPool()
				roots.AddCert(srv.Certificate())
			} else {
				srv.Start()
			}
			defer srv.Close()
			tr := bench.NewDirectTransport(4, time.Minute, roots)
			defer tr.CloseIdleConnections()
			client := &http.Client{Transport: tr}
			for i := range 20 {
				method, body := http.MethodGet, ""
				if i%2 == 1 {
					method, body = http.MethodPost, `{"n":1}`
				}
				req, err := http.NewRequest(method, srv.URL+"/x", strings.NewReader(body))
				require.NoError(t, err)
				resp, err := client.Do(req)
				require.NoError(t, err)
				b, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				require.NoError(t, err)
				require.Equal(t, http.StatusOK, resp.StatusCode)
				require.Equal(t, method+" "+body, string(b))
			}
			require.EqualValues(t, 1, conns.Load(), "sequential requests must share one kept-alive connection")
		})
	}
}

func TestDirectTransportDropsConnectionsIdleTooLong(t *testing.T) {
	srv, conns := countingServer()
	srv.Start()
	defer srv.Close()
	client := &http.Client{Transport: bench.NewDirectTransport(4, 50*time.Millisecond, nil)}
	get := func() {
		resp, err := client.Get(srv.URL)
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode)
	}
	get()
	get()
	require.EqualValues(t, 1, conns.Load())
	time.Sleep(150 * time.Millisecond)
	get()
	require.EqualValues(t, 2, conns.Load(), "a connection idle past idleKeep must not be reused")
}

// closingServer answers one request per connection, as if keeping it
// alive, then closes the connection: the next request on it finds it closed.
func closingServer(t *testing.T) (url string, requests map[string]*atomic.Int64) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { ln.Close() })
	requests = map[string]*atomic.Int64{http.MethodGet: {}, http.MethodPost: {}}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				req, err := http.ReadRequest(bufio.NewReader(c))
				if err != nil {
					return
				}
				_, _ = io.Copy(io.Discard, req.Body)
				requests[req.Method].Add(1)
				_, _ = io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
			}()
		}
	}()
	return "http://" + ln.Addr().String(), requests
}

func TestDirectTransportResendsOnlyWhatCannotHaveBeenActedOn(t *testing.T) {
	url, requests := closingServer(t)
	client := &http.Client{Transport: bench.NewDirectTransport(4, time.Minute, nil)}
	send := func(method string, header http.Header) (*http.Response, error) {
		req, err := http.NewRequest(method, url, strings.NewReader(`{}`))
		require.NoError(t, err)
		for k, v := range header {
			req.Header[k] = v
		}
		resp, err := client.Do(req)
		time.Sleep(50 * time.Millisecond) // the server's close reaches the client
		return resp, err
	}

	// A GET on a connection the server closed is sent again on a new one.
	for range 3 {
		resp, err := send(http.MethodGet, nil)
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, resp.StatusCode)
	}
	require.EqualValues(t, 3, requests[http.MethodGet].Load())

	// A POST without an Idempotency-Key is not: with no answer, the client
	// cannot know whether the server acted on it.
	_, err := send(http.MethodPost, nil)
	require.Error(t, err)
	require.EqualValues(t, 0, requests[http.MethodPost].Load())

	// The failed POST closed its connection; this one dials anew and succeeds.
	resp, err := send(http.MethodPost, nil)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.EqualValues(t, 1, requests[http.MethodPost].Load())

	// With an Idempotency-Key, a POST may be sent twice: it is.
	resp, err = send(http.MethodPost, http.Header{"Idempotency-Key": {"k1"}})
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.EqualValues(t, 2, requests[http.MethodPost].Load())
}

// slowServer answers nothing for 5 s (or until its client goes away), and
// client reaches it through the direct transport.
func slowServer(t *testing.T) (*httptest.Server, *http.Client) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
	}))
	t.Cleanup(srv.Close)
	return srv, &http.Client{Transport: bench.NewDirectTransport(4, time.Minute, nil)}
}

func TestDirectTransportHonoursTheRequestDeadline(t *testing.T) {
	srv, client := slowServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
	require.NoError(t, err)
	start := time.Now()
	_, err = client.Do(req)
	require.Error(t, err)
	require.True(t, errors.Is(err, context.DeadlineExceeded), "error: %v", err)
	require.Less(t, time.Since(start), 4*time.Second, "the deadline must interrupt the wait for the answer")
}

func TestDirectTransportStopsWhenTheRequestIsCancelled(t *testing.T) {
	srv, client := slowServer(t)
	ctx, cancel := context.WithCancel(context.Background()) // no deadline: only the cancel can stop it
	time.AfterFunc(100*time.Millisecond, cancel)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
	require.NoError(t, err)
	start := time.Now()
	_, err = client.Do(req)
	require.ErrorIs(t, err, context.Canceled)
	require.Less(t, time.Since(start), 4*time.Second, "cancelling must interrupt the wait for the answer")
}
