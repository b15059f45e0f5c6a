package gateway_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/internal/gateway"
	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/testkit"
)

// TestStatementLines: a paid charge, a payout and a failed refund become
// the statement's lines — principal and fee apart, each with the running
// balance — in JSON and CSV alike, on both databases.
func TestStatementLines(t *testing.T) {
	t.Parallel()
	testkit.Databases(t, func(t *testing.T, open testkit.Opener) {
		ctx := context.Background()
		s, c := sandboxClient(t, open(t), time.Hour, pix.FeeRule{Fixed: 25}, pix.FeeRule{Fixed: 10})
		from := time.Now().Add(-time.Minute)

		ch, _, err := s.CreateCharge(ctx, c, gateway.Keyed(chargeRequest("st-1"), "", []byte(`{}`)))
		require.NoError(t, err)
		tr, err := s.Charge(ctx, c, ch.PaymentID)
		require.NoError(t, err)
		_, err = s.Sandbox().Pay(ctx, tr)
		require.NoError(t, err)
		po, _, err := s.CreatePayout(ctx, c, gateway.Keyed(payoutRequest("st-p"), "k1", []byte(`{}`)))
		require.NoError(t, err)
		to := time.Now().Add(time.Minute)

		st, err := s.Statement(ctx, c, gateway.StatementQuery{From: from.Format(time.RFC3339Nano), To: to.Format(time.RFC3339Nano)})
		require.NoError(t, err)
		require.Equal(t, pix.Amount(0), st.Opening)
		require.Equal(t, pix.Amount(1050-25-100-10), st.Closing)
		var buf bytes.Buffer
		require.NoError(t, st.Write(ctx, &buf))
		var body statementJSON
		require.NoError(t, json.Unmarshal(buf.Bytes(), &body), buf.String())
		require.Equal(t, 200, body.StatusCode)
		type line struct {
			id, typ       string
			amount, after int64
		}
		var got []line
		for _, m := range body.Data.Movements {
			got = append(got, line{m.TransactionID, m.Type, m.Amount, m.Balance})
		}
		require.Equal(t, []line{
			{ch.PaymentID, "charge", 1050, 1050}, {ch.PaymentID, "charge_fee", -25, 1025},
			{po.TransactionID, "payout", -100, 925}, {po.TransactionID, "payout_fee", -10, 915},
		}, got)

		st.Format = gateway.StatementCSV
		buf.Reset()
		require.NoError(t, st.Write(ctx, &buf))
		recs, err := csv.NewReader(&buf).ReadAll()
		require.NoError(t, err)
		require.Equal(t, gateway.CSVHeader, recs[0])
		require.Len(t, recs, 5)
		require.Equal(t, []string{po.TransactionID, "payout_fee", "Payment fee", "-10", "915"}, recs[4][1:])

		// The next window opens where this one closed.
		st2, err := s.Statement(ctx, c, gateway.StatementQuery{From: to.Format(time.RFC3339Nano), To: to.Add(time.Hour).Format(time.RFC3339Nano)})
		require.NoError(t, err)
		require.Equal(t, st.Closing, st2.Opening)
		require.Equal(t, st.Closing, st2.Closing)
	})
}
