package e2e

import (
	"bytes"
	"encoding/csv"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/client"
	"github.com/pixgate/pixgate/internal/testkit"
)

// TestClientStatement reads a real pixgate serve's statement, typed and as CSV,
// after a paid charge, a payout and a refund, on both databases; a window
// the server refuses is a 400 *Error, not retried; a 503 and a dropped
// answer are retried.
func TestClientStatement(t *testing.T) {
	t.Parallel()
	testkit.ForEachDatabaseURL(t, func(t *testing.T, dbURL string) {
		s := startClientServe(t, dbURL)
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
