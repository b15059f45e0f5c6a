package httpapi

import (
	"bytes"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestPanicBecomesSpecBody: a panic in a handler answers the spec's 500 body
// for the path's family, and neither the response nor the log holds a stack
// trace or the panic's message.
func TestPanicBecomesSpecBody(t *testing.T) {
	t.Parallel()
	var logs bytes.Buffer
	s := &Server{log: slog.New(slog.NewJSONHandler(&logs, nil))}
	h := s.observe(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
		panic("secret sk_test_abc in SELECT * FROM clients")
	}))
	for path, want := range map[string]string{
		"/api/v1/gateway/request-qrcode": `{"statusCode":500,"message":"Internal server error","error":"Internal Server Error"}`,
		"/api/v1/wallet/balance":         `{"statusCode":500,"message":"Erro interno."}`,
	} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
		require.Equal(t, http.StatusInternalServerError, rec.Code)
		require.JSONEq(t, want, rec.Body.String())
		require.NotEmpty(t, rec.Header().Get("X-Request-Id"))
	}
	require.Contains(t, logs.String(), "panic serving request")
	for _, leak := range []string{"sk_test_abc", "SELECT", "goroutine", ".go:"} {
		require.NotContains(t, logs.String(), leak)
	}
}

func TestRequestIDIsKeptWhenSane(t *testing.T) {
	t.Parallel()
	s := &Server{log: slog.New(slog.NewJSONHandler(&bytes.Buffer{}, nil))}
	h := s.observe(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(204) }))
	rec := httptest.NewRecorder()
	req := httptest.NewRequest("GET", "/x", nil)
	req.Header.Set("X-Request-Id", "abc-123")
	h.ServeHTTP(rec, req)
	require.Equal(t, "abc-123", rec.Header().Get("X-Request-Id"))
	rec = httptest.NewRecorder()
	req.Header.Set("X-Request-Id", "bad id\n")
	h.ServeHTTP(rec, req)
	require.Regexp(t, `^[0-9a-f]{24}$`, rec.Header().Get("X-Request-Id"))
}
