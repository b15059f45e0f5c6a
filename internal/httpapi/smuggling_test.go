package httpapi_test

import (
	"bufio"
	"crypto/tls"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/internal/testkit"
)

// smuggled is a request framed both ways: by its chunks it ends at "0", by
// its length it ends after "0\r\n\r\nG", and either way the GET after it
// is a second request that a proxy framing by length never saw.
const smuggled = "POST /api/v1/gateway/request-qrcode HTTP/1.1\r\nHost: x\r\nContent-Length: 6\r\nTransfer-Encoding: chunked\r\n\r\n" +
	"0\r\n\r\nGET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"

// TestBothFramingsRefused: a request with Content-Length and
// Transfer-Encoding is refused with the JSON 400 and the connection is
// closed (RFC 9112 §6.1), so the smuggled request behind it is never
// answered: first on a connection, after served requests on a reused one
// (a body by length and one by chunks, each holding text that looks like
// such a header), and over TLS.
func TestBothFramingsRefused(t *testing.T) {
	t.Parallel()
	addr := rawServer(t, nil)
	tc := testkit.SelfSignedTLS(t)
	tlsAddr := rawServer(t, &tls.Config{Certificates: []tls.Certificate{tc.Cert}, MinVersion: tls.VersionTLS12, NextProtos: []string{"h2", "http/1.1"}})

	lookalike := "x\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n"
	byLength := "POST /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 52\r\n\r\n" + lookalike
	byChunks := "POST /healthz HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n" +
		"34;ext=1\r\n" + lookalike + "\r\n0\r\nX-Trailer: 1\r\n\r\n"
	require.Len(t, lookalike, 0x34)

	for _, tc := range []struct {
		label  string
		dial   func() (net.Conn, error)
		before []string // served requests on the connection first
	}{
		{"first request", func() (net.Conn, error) { return net.Dial("tcp", addr) }, nil},
		{"after served requests", func() (net.Conn, error) { return net.Dial("tcp", addr) }, []string{byLength, byChunks}},
		{"TLS", func() (net.Conn, error) {
			return tls.Dial("tcp", tlsAddr, &tls.Config{RootCAs: tc.Pool, NextProtos: []string{"http/1.1"}})
		}, []string{byChunks}},
	} {
		conn, err := tc.dial()
		require.NoError(t, err)
		require.NoError(t, conn.SetDeadline(time.Now().Add(10*time.Second)))
		// Everything in one write, as a proxy forwards it.
		all := ""
		for _, r := range tc.before {
			all += r
		}
		_, err = io.WriteString(conn, all+smuggled)
		require.NoError(t, err)
		rd := bufio.NewReader(conn)
		for i := range tc.before {
			resp, err := http.ReadResponse(rd, nil)
			require.NoError(t, err, "%s: request %d", tc.label, i+1)
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			require.NotEqual(t, http.StatusBadRequest, resp.StatusCode, "%s: request %d is served", tc.label, i+1)
			require.False(t, resp.Close, "%s: request %d keeps the connection", tc.label, i+1)
		}
		resp, err := http.ReadResponse(rd, nil)
		require.NoError(t, err, tc.label)
		raw, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusBadRequest, resp.StatusCode, "%s: %s", tc.label, raw)
		require.True(t, resp.Close, "%s: Connection: close", tc.label)
		require.Equal(t, "application/json", resp.Header.Get("Content-Type"))
		require.NotEmpty(t, resp.Header.Get("X-Request-Id"))
		var body map[string]any
		require.NoError(t, json.Unmarshal(raw, &body))
		require.Equal(t, map[string]any{"statusCode": float64(400), "error": "Bad Request",
			"message": "Malformed request: Content-Length and Transfer-Encoding together"}, body, tc.label)

		// The connection closes: the smuggled GET gets no answer.
		rest, err := io.ReadAll(rd)
		require.False(t, errors.Is(err, os.ErrDeadlineExceeded), "%s: the connection is closed, not left open", tc.label)
		require.Empty(t, rest, "%s: nothing answers the smuggled request", tc.label)
		conn.Close()
	}
}
