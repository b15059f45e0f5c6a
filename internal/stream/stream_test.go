package stream_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/internal/stream"
)

// TestWriterOutlivesWriteTimeout: a body streamed for longer than the
// server's WriteTimeout arrives whole through a Writer, and is cut without.
func TestWriterOutlivesWriteTimeout(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		wrap  func(http.ResponseWriter) io.Writer
		whole bool
	}{
		{"stream.Writer", func(w http.ResponseWriter) io.Writer { return stream.NewWriter(w) }, true},
		{"plain", func(w http.ResponseWriter) io.Writer { return w }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				out := tc.wrap(w)
				for range 12 {
					if _, err := out.Write([]byte("0123456789\n")); err != nil {
						return
					}
					_ = http.NewResponseController(w).Flush()
					time.Sleep(100 * time.Millisecond)
				}
			}))
			srv.Config.WriteTimeout = 400 * time.Millisecond
			srv.Start()
			defer srv.Close()
			resp, err := http.Get(srv.URL)
			require.NoError(t, err)
			defer resp.Body.Close()
			body, err := io.ReadAll(resp.Body)
			if tc.whole {
				require.NoError(t, err)
				require.Len(t, body, 12*11)
			} else {
				require.Error(t, err, "the body was not cut at the WriteTimeout")
			}
		})
	}
}

// TestAttachment: a file name keeps its safe characters; anything that
// could break the header's quoted string becomes '_'.
func TestAttachment(t *testing.T) {
	t.Parallel()
	require.Equal(t, `attachment; filename="pixgate-cli_1.2-2026-11.csv"`, stream.Attachment("pixgate-cli_1.2-2026-11.csv"))
	require.Equal(t, `attachment; filename="a__b_c_d.csv"`, stream.Attachment("a\"\nb;c:d.csv"))
}

// TestWriterStarted: Started turns true with the first write.
func TestWriterStarted(t *testing.T) {
	t.Parallel()
	w := stream.NewWriter(httptest.NewRecorder())
	require.False(t, w.Started())
	_, err := w.Write([]byte("x"))
	require.NoError(t, err)
	require.True(t, w.Started())
}
