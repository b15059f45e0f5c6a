package webhook_test

import (
	"bufio"
	"context"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/internal/testkit"
	"github.com/pixgate/pixgate/internal/webhook"
)

// rawServer accepts connections on loopback and hands each to serve; it
// stands for receivers that do not speak HTTP properly.
func rawServer(t *testing.T, serve func(net.Conn)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { defer c.Close(); serve(c) }()
		}
	}()
	return "http://" + ln.Addr().String()
}

// closedPort returns a loopback URL on which nothing listens.
func closedPort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	return "http://" + addr
}

// TestAttemptErrorsAreClasses: every failed attempt records one class of a
// small fixed set, never the transport error's text (which can name the
// resolver's internal address or the URL with its query); the cause goes to
// the server log, without the URL's query. Each failure is real, over
// loopback (the unresolvable name uses the reserved .invalid domain, which
// never resolves).
func TestAttemptErrorsAreClasses(t *testing.T) {
	t.Parallel()
	status := func(code int) string {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(code) }))
		t.Cleanup(srv.Close)
		return srv.URL
	}
	untrusted := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) }))
	t.Cleanup(untrusted.Close)
	release := make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(func() { close(release); slow.Close() })
	hangUp := rawServer(t, func(c net.Conn) {
		_, _ = bufio.NewReader(c).ReadString('\n') // read the request line, then close
	})
	garbage := rawServer(t, func(c net.Conn) {
		_, _ = bufio.NewReader(c).ReadString('\n')
		_, _ = c.Write([]byte("hello, this is not HTTP\r\n\r\n"))
	})

	tests := []struct {
		name, url, want string
		code            int
	}{
		{"refused port", closedPort(t), webhook.ClassRefused, 0},
		{"untrusted certificate", untrusted.URL, webhook.ClassTLS, 0},
		{"503", status(http.StatusServiceUnavailable), webhook.ClassHTTP5xx, 503},
		{"404", status(http.StatusNotFound), webhook.ClassHTTP4xx, 404},
		{"timeout", slow.URL, webhook.ClassTimeout, 0},
		{"unresolvable name", "http://nonexistent.invalid/hook", webhook.ClassDNS, 0},
		{"connection closed", hangUp, webhook.ClassReset, 0},
		{"not HTTP", garbage, webhook.ClassInvalidResponse, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := setup(t, testkit.OpenSQLite(t))
			var logs testkit.Buffer
			f.disp.Log = slog.New(slog.NewJSONHandler(&logs, nil))
			// Short for the slow receiver; roomy for the others, whose
			// failures must not turn into timeouts on a loaded machine.
			f.disp.Timeout = 5 * time.Second
			if tc.want == webhook.ClassTimeout {
				f.disp.Timeout = 500 * time.Millisecond
			}
			id := f.paidCharge(t, "c", tc.url+"?token=s3cr3t-token")
			n, err := f.disp.DeliverDue(context.Background())
			require.NoError(t, err)
			require.Equal(t, 1, n)

			d := f.deliveries(t, id)[0]
			require.Len(t, d.Attempts, 1)
			a := d.Attempts[0]
			require.NotNil(t, a.Error)
			require.Equal(t, tc.want, *a.Error)
			if tc.code != 0 {
				require.NotNil(t, a.StatusCode)
				require.Equal(t, tc.code, *a.StatusCode)
			} else {
				require.Nil(t, a.StatusCode)
			}

			// The log names the class and keeps a cause for the operator,
			// but never the URL's query.
			line := logs.String()
			require.Contains(t, line, `"error":"`+tc.want+`"`)
			if tc.code == 0 {
				require.Contains(t, line, `"detail":`)
			}
			require.NotContains(t, line, "s3cr3t-token")
		})
	}
}

// TestAttemptErrorHidesResolver: the stored class of a DNS failure holds no
// address, where the resolver's own error names its server ("lookup x on
// 10.0.0.2:53: no such host").
func TestAttemptErrorHidesResolver(t *testing.T) {
	t.Parallel()
	f := setup(t, testkit.OpenSQLite(t))
	id := f.paidCharge(t, "c", "https://nonexistent.invalid/hook")
	_, err := f.disp.DeliverDue(context.Background())
	require.NoError(t, err)
	a := f.deliveries(t, id)[0].Attempts[0]
	require.NotNil(t, a.Error)
	require.Equal(t, webhook.ClassDNS, *a.Error)
	for _, leak := range []string{":53", "lookup", "nonexistent.invalid"} {
		require.NotContains(t, *a.Error, leak)
	}
	for i := 0; i < 10; i++ {
		require.NotContains(t, *a.Error, strconv.Itoa(i), "no address of any kind")
	}
	require.False(t, strings.ContainsAny(*a.Error, ":/"), "no host or URL: %q", *a.Error)
}
