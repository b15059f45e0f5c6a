package httpapi_test

import (
	"bufio"
	"crypto/tls"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/internal/gateway"
	"github.com/pixgate/pixgate/internal/httpapi"
	"github.com/pixgate/pixgate/internal/provider/sandbox"
	"github.com/pixgate/pixgate/internal/ratelimit"
	"github.com/pixgate/pixgate/internal/testkit"
)

// rawServer serves the API over loopback through the listener wrappers, as
// serve does; with config it speaks TLS. It returns the address.
func rawServer(t *testing.T, config *tls.Config) string {
	t.Helper()
	log := slog.New(slog.DiscardHandler)
	gw, err := gateway.New(gateway.Config{DB: testkit.OpenSQLite(t), Env: "sandbox",
		ChargeTTL: 24 * time.Hour, Log: log, Provider: sandbox.New(sandbox.Config{PixKey: "pix@pixgate.dev", MerchantName: "Loja", MerchantCity: "São Paulo", Delay: time.Hour})})
	require.NoError(t, err)
	api, err := httpapi.New(httpapi.Options{Gateway: gw, Log: log, Limiter: ratelimit.NewMemory(100)})
	require.NoError(t, err)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	if config != nil {
		ln = api.TLSListener(ln, config)
	} else {
		ln = api.Listener(ln)
	}
	srv := &http.Server{Handler: api.Handler(), ReadHeaderTimeout: 5 * time.Second, MaxHeaderBytes: 4 << 10}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return ln.Addr().String()
}

// rawExchange writes request on conn and reads the whole response.
func rawExchange(t *testing.T, conn net.Conn, request string) *http.Response {
	t.Helper()
	require.NoError(t, conn.SetDeadline(time.Now().Add(10*time.Second)))
	_, err := io.WriteString(conn, request)
	require.NoError(t, err)
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	require.NoError(t, err, "a well-formed HTTP response")
	return resp
}

// requireJSONError requires the documented gateway error body for status,
// with X-Request-Id.
func requireJSONError(t *testing.T, resp *http.Response, status int, label string) {
	t.Helper()
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, status, resp.StatusCode, "%s: %s", label, raw)
	require.Equal(t, "application/json", resp.Header.Get("Content-Type"), label)
	require.Regexp(t, `^[0-9a-f]{24}$`, resp.Header.Get("X-Request-Id"), label)
	var body map[string]any
	require.NoError(t, json.Unmarshal(raw, &body), "%s: %s", label, raw)
	require.Equal(t, float64(status), body["statusCode"], label)
	require.Equal(t, http.StatusText(status), body["error"], label)
	require.NotEmpty(t, body["message"], label)
	require.Len(t, body, 3, label)
}

// TestServerOwnErrorsAreJSON: the responses net/http writes itself, for
// requests it cannot read, carry the documented JSON body and X-Request-Id
// (checked over a real connection, with the bytes a client would send).
func TestServerOwnErrorsAreJSON(t *testing.T) {
	t.Parallel()
	addr := rawServer(t, nil)
	for _, tc := range []struct {
		label, request string
		status         int
	}{
		{"control character in a header", "GET /api/v1/wallet/balance HTTP/1.1\r\nHost: x\r\nstpi: a\x01b\r\n\r\n", http.StatusBadRequest},
		{"NUL in a header", "GET /healthz HTTP/1.1\r\nHost: x\r\nIdempotency-Key: a\x00b\r\n\r\n", http.StatusBadRequest},
		{"bad header name", "GET /healthz HTTP/1.1\r\nHost: x\r\nBad Name: v\r\n\r\n", http.StatusBadRequest},
		{"missing Host", "GET /healthz HTTP/1.1\r\n\r\n", http.StatusBadRequest},
		{"bad request line", "NONSENSE\r\n\r\n", http.StatusBadRequest},
		{"headers too large", "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: " + strings.Repeat("a", 8<<10) + "\r\n\r\n", http.StatusRequestHeaderFieldsTooLarge},
		{"unknown transfer coding", "POST /healthz HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", http.StatusNotImplemented},
		{"unsupported version", "GET /healthz HTTP/2.5\r\nHost: x\r\n\r\n", http.StatusHTTPVersionNotSupported},
		{"unknown expectation", "GET /healthz HTTP/1.1\r\nHost: x\r\nExpect: something\r\n\r\n", http.StatusExpectationFailed},
	} {
		conn, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		requireJSONError(t, rawExchange(t, conn, tc.request), tc.status, tc.label)
		conn.Close()
	}

	// A handler's responses pass untouched, also on a reused connection
	// whose later request is refused by net/http; net/http's own answer to
	// "OPTIONS *" gets an X-Request-Id and keeps the connection.
	conn, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer conn.Close()
	resp := rawExchange(t, conn, "OPTIONS * HTTP/1.1\r\nHost: x\r\n\r\n")
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.NotEmpty(t, resp.Header.Get("X-Request-Id"))
	resp = rawExchange(t, conn, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.NotEmpty(t, resp.Header.Get("X-Request-Id"))
	resp = rawExchange(t, conn, "GET /nothing HTTP/1.1\r\nHost: x\r\n\r\n")
	requireJSONError(t, resp, http.StatusNotFound, "a handler's 404")
	requireJSONError(t, rawExchange(t, conn, "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Bad: \x7f\r\n\r\n"), http.StatusBadRequest, "refused after a served request")
}

// TestServerOwnErrorsAreJSONOverTLS: the same over TLS, where net/http
// writes to the TLS connection; plain HTTP sent to the TLS port gets the
// JSON 400 too, and HTTP/2 and Request.TLS (HSTS) still work.
func TestServerOwnErrorsAreJSONOverTLS(t *testing.T) {
	t.Parallel()
	tc := testkit.SelfSignedTLS(t)
	cert, pool := tc.Cert, tc.Pool
	addr := rawServer(t, &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12, NextProtos: []string{"h2", "http/1.1"}})

	conn, err := tls.Dial("tcp", addr, &tls.Config{RootCAs: pool, NextProtos: []string{"http/1.1"}})
	require.NoError(t, err)
	requireJSONError(t, rawExchange(t, conn, "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Bad: a\x01b\r\n\r\n"), http.StatusBadRequest, "TLS, control character")
	conn.Close()

	plain, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	requireJSONError(t, rawExchange(t, plain, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"), http.StatusBadRequest, "plain HTTP to the TLS port")
	plain.Close()

	for _, h2 := range []bool{false, true} {
		client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, ForceAttemptHTTP2: h2}}
		resp, err := client.Get("https://" + addr + "/healthz")
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode)
		require.Equal(t, h2, resp.ProtoMajor == 2, "HTTP/2 is kept")
		require.Contains(t, resp.Header.Get("Strict-Transport-Security"), "max-age=", "Request.TLS is set")
		client.CloseIdleConnections()
	}
}
