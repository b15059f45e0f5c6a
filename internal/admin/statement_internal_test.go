package admin

import (
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestAttachmentAbortsAfterStart: over real HTTP, a download whose writer
// fails after its first bytes are sent ends with a broken connection, never
// a clean end of a truncated file; one that fails before any byte is an
// error page without Content-Disposition; one that succeeds is whole.
func TestAttachmentAbortsAfterStart(t *testing.T) {
	t.Parallel()
	h := &Handler{log: slog.New(slog.DiscardHandler)}
	chunk := strings.Repeat("2026-03-09T14:00:00.000Z,id,charge,Cobrança,100,100\r\n", 1000) // ~50 KB: headers and part of the body go out
	failing := errors.New("database went away")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var write func(io.Writer) error
		switch r.URL.Path {
		case "/late":
			write = func(out io.Writer) error {
				if _, err := io.WriteString(out, chunk); err != nil {
					return err
				}
				return failing
			}
		case "/early":
			write = func(io.Writer) error { return failing }
		default:
			write = func(out io.Writer) error { _, err := io.WriteString(out, chunk); return err }
		}
		if err := h.attachment(w, r, "pixgate-x-2026-03-09.csv", "text/csv; charset=utf-8", write); err != nil {
			if !errors.Is(err, failing) {
				t.Errorf("attachment: %v", err)
			}
			http.Error(w, "failed", http.StatusInternalServerError)
		}
	}))
	t.Cleanup(srv.Close)
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}

	resp, err := client.Get(srv.URL + "/late")
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, `attachment; filename="pixgate-x-2026-03-09.csv"`, resp.Header.Get("Content-Disposition"))
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Error(t, err, "the client sees the download fail, not end")
	require.Less(t, len(body), len(chunk)+1)

	resp, err = client.Get(srv.URL + "/early")
	require.NoError(t, err)
	body, err = io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	require.Equal(t, http.StatusInternalServerError, resp.StatusCode)
	require.Empty(t, resp.Header.Get("Content-Disposition"))
	require.Equal(t, "failed\n", string(body))

	resp, err = client.Get(srv.URL + "/ok")
	require.NoError(t, err)
	body, err = io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	require.Equal(t, chunk, string(body))
	require.Equal(t, "text/csv; charset=utf-8", resp.Header.Get("Content-Type"))
}
