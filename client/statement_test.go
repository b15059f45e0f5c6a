package client_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/client"
)

// TestStatement reads a real pixgate serve's statement, typed and as CSV,
// after a paid charge, a payout and a refund, on both databases; a window
// the server refuses is a 400 *Error, not retried; a 503 and a dropped
// answer are retried.
func TestStatement(t *testing.T) {
	t.Parallel()
	forEachDB(t, func(t *testing.T, dbURL string) {
		s := startServe(t, dbURL)
		ctx := t.Context()
		c := s.client(t)
		from := time.Now().Add(-time.Minute)

		ch, err := c.CreateCharge(ctx, chargeRequest("st-1", client.Reais("20.00"), "https://merchant.example.com/h"))
		require.NoError(t, err)
		_, err = c.SandboxPay(ctx, ch.PaymentID)
		require.NoError(t, err)
		po, err := c.CreatePayout(ctx, client.PayoutRequest{Amount: client.Reais("5.00"), Description: "fornecedor",
			CallbackURL: "https://merchant.example.com/p", CreditParty: client.CreditParty{KeyType: client.KeyEmail, Key: "f@example.com"}})
		require.NoError(t, err)
		rf, err := c.CreateRefund(ctx, client.RefundRequest{PaymentID: ch.PaymentID, Amount: client.Reais("3.00")})
		require.NoError(t, err)
		to := time.Now().Add(time.Minute)

		st, err := c.Statement(ctx, from, to)
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, st.StatusCode)
		require.Equal(t, 1, st.Attempts)
		require.NotEmpty(t, st.RequestID)
		require.True(t, st.From.Equal(from.Truncate(time.Millisecond)), "from %s", st.From)
		require.True(t, st.To.Equal(to.Truncate(time.Millisecond)), "to %s", st.To)
		require.Equal(t, client.Centavos(0), st.Opening)
		type line struct {
			id, typ         string
			amount, balance client.Amount
		}
		var got []line
		sum := st.Opening
		for _, m := range st.Movements {
			sum += m.Amount
			require.Equal(t, sum, m.Balance, "running balance at %+v", m)
			require.False(t, m.At.Before(st.From) || !m.At.Before(st.To), "at %s outside the window", m.At)
			require.NotEmpty(t, m.Description)
			got = append(got, line{m.TransactionID, m.Type, m.Amount, m.Balance})
		}
		require.Equal(t, st.Closing, sum, "opening + Σ amounts = closing")
		require.Equal(t, []line{
			{ch.PaymentID, client.MovementCharge, client.Centavos(2000), client.Centavos(2000)},
			{ch.PaymentID, client.MovementChargeFee, client.Centavos(-10), client.Centavos(1990)},
			{po.TransactionID, client.MovementPayout, client.Centavos(-500), client.Centavos(1490)},
			{po.TransactionID, client.MovementPayoutFee, client.Centavos(-50), client.Centavos(1440)},
			{rf.RefundID, client.MovementRefund, client.Centavos(-300), client.Centavos(1140)},
		}, got)
		bal, err := c.Balance(ctx)
		require.NoError(t, err)
		require.Equal(t, bal.Available, st.Closing)

		// CSV: the same movements, streamed to w.
		var buf bytes.Buffer
		require.NoError(t, c.StatementCSV(ctx, from, to, &buf))
		require.True(t, strings.HasSuffix(buf.String(), "\r\n"), "RFC 4180 line ends: %q", buf.String())
		recs, err := csv.NewReader(&buf).ReadAll()
		require.NoError(t, err)
		require.Equal(t, []string{"at", "transaction_id", "type", "description", "amount_cents", "balance_cents"}, recs[0])
		require.Len(t, recs, 1+len(st.Movements))
		for i, m := range st.Movements {
			at, err := time.Parse(time.RFC3339Nano, recs[i+1][0])
			require.NoError(t, err)
			require.True(t, at.Equal(m.At), "row %d at %s, JSON %s", i, recs[i+1][0], m.At)
			require.Equal(t, []string{m.TransactionID, m.Type, m.Description,
				strconv.FormatInt(m.Amount.Centavos(), 10), strconv.FormatInt(m.Balance.Centavos(), 10)}, recs[i+1][1:])
		}

		// The next window opens where this one closed, with no movement.
		next, err := c.Statement(ctx, to, to.Add(time.Hour))
		require.NoError(t, err)
		require.Equal(t, st.Closing, next.Opening)
		require.Equal(t, st.Closing, next.Closing)
		require.Empty(t, next.Movements)

		// Windows the server refuses: 400, message naming the parameter,
		// not retried; StatementCSV writes nothing.
		for _, tc := range []struct {
			name     string
			from, to time.Time
			message  string
		}{
			{"to before from", to, from, "Invalid request parameters: 'to' must be after 'from'."},
			{"over 366 days", from, from.Add(367 * 24 * time.Hour), "Invalid request parameters: 'to' must be at most 366 days after 'from'."},
		} {
			_, err := c.Statement(ctx, tc.from, tc.to)
			e := client.AsError(err)
			require.NotNil(t, e, "%s: %v", tc.name, err)
			require.True(t, client.IsBadRequest(err), tc.name)
			require.Equal(t, tc.message, e.Message, tc.name)
			require.Empty(t, e.Err, "wallet errors carry only statusCode and message")
			require.Equal(t, 1, e.Response.Attempts, tc.name)

			var w bytes.Buffer
			err = c.StatementCSV(ctx, tc.from, tc.to, &w)
			require.True(t, client.IsBadRequest(err), "%s: %v", tc.name, err)
			require.Equal(t, tc.message, client.AsError(err).Message)
			require.Zero(t, w.Len(), tc.name)
		}

		// Reads are retried: a 503, then a dropped answer.
		proxy, proxyURL := newFaultProxy(t, s.URL)
		noReuse := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 10 * time.Second}
		pc := s.clientAt(t, proxyURL, client.WithHTTPClient(noReuse), client.WithBackoff(time.Millisecond, 5*time.Millisecond))
		const path = "GET /api/v1/wallet/statement"
		proxy.fail503[path], proxy.drop[path] = 1, 1
		again, err := pc.Statement(ctx, from, to)
		require.NoError(t, err)
		require.Equal(t, 3, again.Attempts)
		require.Equal(t, st.Movements, again.Movements)
		proxy.fail503[path], proxy.drop[path] = 1, 1
		buf.Reset()
		require.NoError(t, pc.StatementCSV(ctx, from, to, &buf))
		require.Len(t, proxy.answers(path), 4, "two answers dropped or refused, two served")
		recs2, err := csv.NewReader(&buf).ReadAll()
		require.NoError(t, err)
		require.Equal(t, recs, recs2)
	})
}

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
