package e2e

import (
	"fmt"
	"math/big"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/internal/testkit"
)

// TestPSPE2EDueCharge: with Efí (the simulator, every exchange checked
// against BACEN's OpenAPI), a charge with a due date is a cobv at the PSP
// with the payer's address, and its qrcode is the cobv's pixCopiaECola;
// paid at the PSP for a day after its due date, the amount BACEN's terms
// make due that day (the simulator's) is what is credited, with the fee
// on it, in the lookup, the webhook, the balance and the ledger; it differs
// from pixgate's amount due on the day of the payment, so amount_mismatch
// says so.
func TestPSPE2EDueCharge(t *testing.T) {
	t.Parallel()
	testkit.ForEachDatabaseURL(t, func(t *testing.T, db string) {
		e := newPSPE2E(t, db)
		n := e.start(t, "", "")
		loc, err := time.LoadLocation("America/Sao_Paulo")
		require.NoError(t, err)
		now := time.Now().In(loc)
		day := func(d int) string { return now.AddDate(0, 0, d).Format("2006-01-02") }

		body := charge("e2e-due-1", 250)
		body["postbackUrl"] = e.recv.url
		body["due"] = map[string]any{"date": day(1), "days_after": 20, "fine": map[string]any{"percent": 2},
			"interest": map[string]any{"percent_per_month": 1}, "discounts": []any{map[string]any{"until": day(1), "amount": 5}}}
		status, resp, raw := e.call(t, n, "POST", "/api/v1/gateway/request-qrcode", body)
		require.Equal(t, http.StatusCreated, status, "%s; stderr:\n%s", raw, n.stderr.String())
		id := resp["payment_id"].(string)
		require.Equal(t, float64(245), resp["amount_due_today"], "R$ 5.00 off until the due date")
		require.Equal(t, day(1), resp["due"].(map[string]any)["date"])
		code := resp["qrcode"].(string)
		require.Equal(t, code, e2eDecodeQR(t, resp["qrcode_image"].(string)))

		var txid string
		for _, r := range e.sim.Requests() {
			if r.Method == http.MethodPut && strings.HasPrefix(r.Path, "/v2/cobv/") && r.Status == http.StatusCreated {
				require.Empty(t, txid, "one cobv")
				txid = strings.TrimPrefix(r.Path, "/v2/cobv/")
			}
		}
		require.Regexp(t, `^[a-zA-Z0-9]{26,35}$`, txid)
		require.Zero(t, e.requests("", "/v2/cob/", 0), "a charge with a due date is no cob")

		// The payer's bank prices it for five days after the due date.
		payDay := day(6)
		due, payable, err := e.sim.CobVDue(txid, payDay)
		require.NoError(t, err)
		require.True(t, payable)
		e2e, valor, err := e.sim.PayCobV(t.Context(), txid, payDay)
		require.NoError(t, err)
		require.Equal(t, due.Final, valor)
		require.Greater(t, valor, int64(25000), "a fine and interest")
		e.waitStatus(t, n, id, "PAID", 30*time.Second)

		fee := (valor + 50) / 100 // 1% of it, half up
		code2, look, raw := e.call(t, n, "POST", "/api/v1/wallet/transaction", map[string]any{"payment_id": id})
		require.Equal(t, http.StatusOK, code2, raw)
		data := look["data"].(map[string]any)
		require.Equal(t, reaisOf(valor), data["paid_amount"], "the PSP's confirmed amount")
		require.Equal(t, float64(250), data["amount"])
		require.Equal(t, reaisOf(fee), data["tax"], "the fee on what was paid")
		require.Equal(t, true, data["amount_mismatch"], "pixgate's amount due today is R$ 245.00")
		require.Nil(t, data["amount_due_today"])
		require.Equal(t, day(1), data["due"].(map[string]any)["date"])
		avail, _ := e.balance(t, n)
		require.Equal(t, valor-fee, avail)
		require.Equal(t, 1, e2eEvents(t, db, id, "pix.cashin.paid"))
		e2eWait(t, 15*time.Second, "pix.cashin.paid delivered", func() bool { return e.recv.count("pix.cashin.paid", id) == 1 }, n)
		e.recv.mu.Lock()
		for _, b := range e.recv.byID {
			if b["event"] == "pix.cashin.paid" && b["payment_id"] == id {
				require.Equal(t, reaisOf(valor), b["value"])
			}
		}
		e.recv.mu.Unlock()
		require.Equal(t, e2e, e.pixOf(t, id))
		e2eCheckLedger(t, db)
		var atPSP []string
		for _, p := range e.sim.State().Pix {
			if p.TxID == txid {
				atPSP = append(atPSP, p.EndToEndID+" "+p.Valor)
			}
		}
		require.Equal(t, []string{fmt.Sprintf("%s %d.%02d", e2e, valor/100, valor%100)}, atPSP, "one Pix at the PSP, the one credited")
	})
}

// reaisOf is centavos as the JSON number the API writes, decoded.
func reaisOf(c int64) float64 {
	f, _ := new(big.Rat).SetFrac64(c, 100).Float64()
	return f
}

// pixOf is the end-to-end id pixgate recorded for charge id.
func (e *pspE2E) pixOf(t *testing.T, id string) string {
	t.Helper()
	tx, err := testkit.OpenURL(t, e.db).TransactionByID(t.Context(), id)
	require.NoError(t, err)
	return tx.EndToEndID
}
