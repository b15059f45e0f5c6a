package client_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/client"
)

// statementServer answers GET /api/v1/wallet/statement with handle, and
// counts the requests.
func statementServer(t *testing.T, handle func(n int64, w http.ResponseWriter, r *http.Request),
	opts ...client.Option) (*client.Client, *atomic.Int64) {
	t.Helper()
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		assert.Equal(t, "/api/v1/wallet/statement", r.URL.Path)
		handle(n.Add(1), w, r)
	}))
	t.Cleanup(srv.Close)
	c, err := client.New(srv.URL, "cli_test_x", "sk_test_x",
		append([]client.Option{client.WithSleep(func(ctx context.Context, _ time.Duration) error { return ctx.Err() })}, opts...)...)
	require.NoError(t, err)
	return c, &n
}

const statementJSON = `{"statusCode":200,"message":"Extrato gerado com sucesso.","data":{"from":"2026-11-01T03:00:00.000Z",` +
	`"to":"2026-11-02T03:00:00.000Z","opening_balance_cents":100,"closing_balance_cents":75,"movements":[` +
	`{"at":"2026-11-01T10:00:00.123Z","transaction_id":"po-1","type":"payout","description":"Pagamento PIX enviado","amount_cents":-20,"balance_cents":80},` +
	`{"at":"2026-11-01T10:00:00.123Z","transaction_id":"po-1","type":"payout_fee","description":"Tarifa do pagamento","amount_cents":-5,"balance_cents":75}]}}` + "\n"

// cut sends the headers and part of body, then breaks the connection.
func cut(w http.ResponseWriter, contentType, part string) {
	w.Header().Set("Content-Type", contentType)
	w.WriteHeader(http.StatusOK)
	_, _ = io.WriteString(w, part)
	w.(http.Flusher).Flush()
	panic(http.ErrAbortHandler)
}

// TestStatementCutAnswer: a JSON statement cut short is read again; a CSV
// statement cut before its first byte is read again, and one cut after it
// is an error (w incomplete), not repeated.
func TestStatementCutAnswer(t *testing.T) {
	t.Parallel()
	from := time.Date(2026, 11, 1, 0, 0, 0, 0, time.FixedZone("BRT", -3*3600))
	to := from.Add(24 * time.Hour)

	t.Run("json", func(t *testing.T) {
		t.Parallel()
		c, n := statementServer(t, func(n int64, w http.ResponseWriter, r *http.Request) {
			assert.Equal(t, "2026-11-01T03:00:00Z", r.URL.Query().Get("from"))
			assert.Equal(t, "2026-11-02T03:00:00Z", r.URL.Query().Get("to"))
			assert.Equal(t, "json", r.URL.Query().Get("format"))
			if n == 1 {
				cut(w, "application/json; charset=utf-8", statementJSON[:200])
			}
			w.Header().Set("Content-Type", "application/json; charset=utf-8")
			_, _ = io.WriteString(w, statementJSON)
		})
		st, err := c.Statement(t.Context(), from, to)
		require.NoError(t, err)
		require.Equal(t, int64(2), n.Load())
		require.Equal(t, 2, st.Attempts)
		require.True(t, st.From.Equal(from) && st.To.Equal(to))
		require.Equal(t, client.Centavos(100), st.Opening)
		require.Equal(t, client.Centavos(75), st.Closing)
		require.Equal(t, []client.Movement{
			{At: time.Date(2026, 11, 1, 10, 0, 0, 123e6, time.UTC), TransactionID: "po-1", Type: client.MovementPayout,
				Description: "Pagamento PIX enviado", Amount: client.Centavos(-20), Balance: client.Centavos(80)},
			{At: time.Date(2026, 11, 1, 10, 0, 0, 123e6, time.UTC), TransactionID: "po-1", Type: client.MovementPayoutFee,
				Description: "Tarifa do pagamento", Amount: client.Centavos(-5), Balance: client.Centavos(75)},
		}, st.Movements)
	})

	const csvBody = "at,transaction_id,type,description,amount_cents,balance_cents\r\n" +
		"2026-11-01T10:00:00.123Z,po-1,payout,Pagamento PIX enviado,-20,80\r\n"
	t.Run("csv cut before the first byte", func(t *testing.T) {
		t.Parallel()
		c, n := statementServer(t, func(n int64, w http.ResponseWriter, r *http.Request) {
			assert.Equal(t, "csv", r.URL.Query().Get("format"))
			if n == 1 {
				cut(w, "text/csv; charset=utf-8", "")
			}
			w.Header().Set("Content-Type", "text/csv; charset=utf-8")
			_, _ = io.WriteString(w, csvBody)
		})
		var buf bytes.Buffer
		require.NoError(t, c.StatementCSV(t.Context(), from, to, &buf))
		require.Equal(t, csvBody, buf.String())
		require.Equal(t, int64(2), n.Load())
	})
	t.Run("csv cut after the first byte", func(t *testing.T) {
		t.Parallel()
		c, n := statementServer(t, func(_ int64, w http.ResponseWriter, _ *http.Request) {
			cut(w, "text/csv; charset=utf-8", csvBody[:70])
		})
		var buf bytes.Buffer
		err := c.StatementCSV(t.Context(), from, to, &buf)
		require.Error(t, err)
		require.Nil(t, client.AsError(err), "not an API answer: %v", err)
		require.Equal(t, csvBody[:70], buf.String(), "what arrived was written")
		require.Equal(t, int64(1), n.Load(), "not repeated: w already holds part of it")
	})
	t.Run("not csv", func(t *testing.T) {
		t.Parallel()
		c, n := statementServer(t, func(_ int64, w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			_, _ = io.WriteString(w, "<html>")
		})
		var buf bytes.Buffer
		err := c.StatementCSV(t.Context(), from, to, &buf)
		require.ErrorContains(t, err, "not text/csv")
		require.Zero(t, buf.Len())
		require.Equal(t, int64(1), n.Load())
	})
}

// TestStatementCSVStreams: rows reach w while the answer is still being
// sent.
func TestStatementCSVStreams(t *testing.T) {
	t.Parallel()
	firstRow := make(chan struct{})
	c, _ := statementServer(t, func(_ int64, w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/csv; charset=utf-8")
		_, _ = io.WriteString(w, "at,transaction_id,type,description,amount_cents,balance_cents\r\n")
		w.(http.Flusher).Flush()
		select { // the rest is sent only once the client has handed the first part on
		case <-firstRow:
		case <-r.Context().Done():
			return
		case <-time.After(5 * time.Second):
			return
		}
		_, _ = io.WriteString(w, "2026-11-01T10:00:00.123Z,po-1,payout,Pagamento PIX enviado,-20,80\r\n")
	})
	w := &signalWriter{signal: firstRow}
	require.NoError(t, c.StatementCSV(t.Context(), time.Now().Add(-time.Hour), time.Now(), w))
	require.Equal(t, "at,transaction_id,type,description,amount_cents,balance_cents\r\n"+
		"2026-11-01T10:00:00.123Z,po-1,payout,Pagamento PIX enviado,-20,80\r\n", w.buf.String())
}

// signalWriter closes signal at its first write.
type signalWriter struct {
	buf    bytes.Buffer
	signal chan struct{}
}

func (s *signalWriter) Write(p []byte) (int, error) {
	if s.buf.Len() == 0 {
		close(s.signal)
	}
	return s.buf.Write(p)
}

// TestStatementCSVTimeout: the HTTP client's timeout bounds the wait for a
// streamed answer and each pause in it, not the whole answer: one that
// keeps coming for longer than the timeout is read whole; one that stalls
// fails, saying so, with what came written; one whose headers never come
// is retried like a lost answer.
func TestStatementCSVTimeout(t *testing.T) {
	t.Parallel()
	const header = "at,transaction_id,type,description,amount_cents,balance_cents\r\n"
	const row = "2026-11-01T10:00:00.123Z,po-1,payout,Pagamento PIX enviado,-20,80\r\n"
	from := time.Now().Add(-time.Hour)
	// send writes header, then rows rows each after pause, then waits for
	// the client to leave.
	send := func(rows int, pause time.Duration) func(int64, http.ResponseWriter, *http.Request) {
		return func(_ int64, w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/csv; charset=utf-8")
			_, _ = io.WriteString(w, header)
			w.(http.Flusher).Flush()
			for range rows {
				select {
				case <-time.After(pause):
				case <-r.Context().Done():
					return
				}
				_, _ = io.WriteString(w, row)
				w.(http.Flusher).Flush()
			}
		}
	}
	timeout := func(d time.Duration) client.Option { return client.WithHTTPClient(&http.Client{Timeout: d}) }

	t.Run("slow but steady", func(t *testing.T) {
		t.Parallel()
		c, n := statementServer(t, send(8, 100*time.Millisecond), timeout(400*time.Millisecond))
		var buf bytes.Buffer
		start := time.Now()
		require.NoError(t, c.StatementCSV(t.Context(), from, time.Now(), &buf))
		require.Greater(t, time.Since(start), 400*time.Millisecond, "the answer took longer than the timeout")
		require.Equal(t, header+strings.Repeat(row, 8), buf.String())
		require.Equal(t, int64(1), n.Load())
	})
	t.Run("stalled", func(t *testing.T) {
		t.Parallel()
		c, n := statementServer(t, func(n int64, w http.ResponseWriter, r *http.Request) {
			send(1, 0)(n, w, r)
			select { // then nothing more
			case <-r.Context().Done():
			case <-time.After(10 * time.Second):
			}
		}, timeout(300*time.Millisecond))
		var buf bytes.Buffer
		err := c.StatementCSV(t.Context(), from, time.Now(), &buf)
		require.ErrorContains(t, err, "the answer stalled for more than 300ms")
		require.Equal(t, header+row, buf.String(), "what arrived was written")
		require.Equal(t, int64(1), n.Load(), "not repeated: w already holds part of it")
	})
	t.Run("no headers", func(t *testing.T) {
		t.Parallel()
		c, n := statementServer(t, func(_ int64, _ http.ResponseWriter, r *http.Request) {
			select {
			case <-r.Context().Done():
			case <-time.After(10 * time.Second):
			}
		}, timeout(200*time.Millisecond), client.WithMaxRetries(1))
		var buf bytes.Buffer
		err := c.StatementCSV(t.Context(), from, time.Now(), &buf)
		require.ErrorContains(t, err, "the answer stalled for more than 200ms")
		require.Zero(t, buf.Len())
		require.Equal(t, int64(2), n.Load(), "retried once, like a lost answer")
	})
}
