package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/big"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/internal/pspsim"
	"github.com/pixgate/pixgate/internal/testkit"
)

// TestPSPE2EDueCharge: with Efí (the simulator, every exchange checked
// against BACEN's OpenAPI), a charge with a due date is a cobv at the PSP
// with the payer's address, and its qrcode is the cobv's pixCopiaECola;
// paid at the PSP for a day after its due date (a business day, so that
// BACEN's terms and pixgate's agree), the amount BACEN's terms make due
// that day (the simulator's) is what is credited, with the fee on it, in
// the lookup, the webhook, the balance and the ledger; the Pix is stamped
// with that day, so it is pixgate's amount due then too: no mismatch.
func TestPSPE2EDueCharge(t *testing.T) {
	t.Parallel()
	testkit.ForEachDatabaseURL(t, func(t *testing.T, db string) {
		e := newPSPE2E(t, db)
		n := e.start(t, "", "")
		dueIn := firstBusinessDayFrom(1)
		day := func(d int) string { return spToday().AddDate(0, 0, d).Format("2006-01-02") }

		body := charge("e2e-due-1", 250)
		body["postbackUrl"] = e.recv.url
		body["due"] = map[string]any{"date": day(dueIn), "days_after": 20, "fine": map[string]any{"percent": 2},
			"interest": map[string]any{"percent_per_month": 1}, "discounts": []any{map[string]any{"until": day(dueIn), "amount": 5}}}
		status, resp, raw := e.call(t, n, "POST", "/api/v1/gateway/request-qrcode", body)
		require.Equal(t, http.StatusCreated, status, "%s; stderr:\n%s", raw, n.stderr.String())
		id := resp["payment_id"].(string)
		require.Equal(t, float64(245), resp["amount_due_today"], "R$ 5.00 off until the due date")
		require.Equal(t, day(dueIn), resp["due"].(map[string]any)["date"])
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
		payDay := day(dueIn + 5)
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
		require.Equal(t, false, data["amount_mismatch"], "the Pix is dated the day it paid for, and that day's amount was paid")
		require.Nil(t, data["amount_due_today"])
		require.Equal(t, day(dueIn), data["due"].(map[string]any)["date"])
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

// spToday is today's São Paulo date, at midnight UTC (adding days to it
// never meets a zone transition).
func spToday() time.Time {
	y, m, d := time.Now().In(time.FixedZone("America/Sao_Paulo", -3*60*60)).Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
}

// firstBusinessDayFrom is the first offset from today, from days on, whose
// São Paulo date is a Brazilian banking business day: a due date BACEN's
// rules do not move.
func firstBusinessDayFrom(days int) int {
	for !pspsim.BusinessDay(spToday().AddDate(0, 0, days)) {
		days++
	}
	return days
}

// TestPSPE2EDueChargePaidOnADate: with the API Pix provider, a person pays
// a charge with a due date as the docs show, with the simulator's control
// API and the qrcode pixgate answered (no txid), on a chosen later date.
// The Pix is dated that day, so an exact payment with the fine and the
// interest of that day reads amount_mismatch false in the lookup and the
// webhook; a charge due on a Saturday paid on the next Monday, without the
// fine BACEN's moved due date spares, reads amount_mismatch true.
func TestPSPE2EDueChargePaidOnADate(t *testing.T) {
	t.Parallel()
	testkit.ForEachDatabaseURL(t, func(t *testing.T, db string) {
		e := newPSPE2E(t, db)
		e.env["PIXGATE_PROVIDER"] = "apipix"
		n := e.start(t, "", "")
		day := func(d int) string { return spToday().AddDate(0, 0, d).Format("2006-01-02") }
		create := func(ext string, due map[string]any) (id, code string) {
			t.Helper()
			body := charge(ext, 300)
			body["postbackUrl"] = e.recv.url
			body["due"] = due
			status, resp, raw := e.call(t, n, "POST", "/api/v1/gateway/request-qrcode", body)
			require.Equal(t, http.StatusCreated, status, "%s; stderr:\n%s", raw, n.stderr.String())
			return resp["payment_id"].(string), resp["qrcode"].(string)
		}
		payByCode := func(code, date string) int64 {
			t.Helper()
			raw, err := json.Marshal(map[string]string{"code": code, "date": date})
			require.NoError(t, err)
			resp, err := e2eHTTP.Post(e.sim.ControlURL()+"/sim/paycobv", "application/json", bytes.NewReader(raw))
			require.NoError(t, err)
			defer resp.Body.Close()
			var out map[string]string
			require.NoError(t, json.NewDecoder(resp.Body).Decode(&out))
			require.Equal(t, http.StatusOK, resp.StatusCode, "%v", out)
			c, ok := new(big.Rat).SetString(out["valor"])
			require.True(t, ok, out["valor"])
			return new(big.Rat).Mul(c, big.NewRat(100, 1)).Num().Int64()
		}
		lookup := func(id string) map[string]any {
			t.Helper()
			code, look, raw := e.call(t, n, "POST", "/api/v1/wallet/transaction", map[string]any{"payment_id": id})
			require.Equal(t, http.StatusOK, code, raw)
			return look["data"].(map[string]any)
		}
		paidEvent := func(id string) map[string]any {
			t.Helper()
			e2eWait(t, 15*time.Second, "pix.cashin.paid delivered", func() bool { return e.recv.count("pix.cashin.paid", id) == 1 }, n)
			e.recv.mu.Lock()
			defer e.recv.mu.Unlock()
			for _, b := range e.recv.byID {
				if b["event"] == "pix.cashin.paid" && b["payment_id"] == id {
					return b
				}
			}
			t.Fatalf("no pix.cashin.paid for %s", id)
			return nil
		}

		// Due on a business day, paid seven days after it: R$ 300.00 plus
		// the 2% fine plus 7 × 1%/30 of interest.
		dueIn := firstBusinessDayFrom(1)
		exact, code := create("e2e-due-dated-1", map[string]any{"date": day(dueIn), "days_after": 30,
			"fine": map[string]any{"percent": 2}, "interest": map[string]any{"percent_per_month": 1}})
		valor := payByCode(code, day(dueIn+7))
		require.Equal(t, int64(30000+600+70), valor, "the simulator's amount for that day")
		e.waitStatus(t, n, exact, "PAID", 30*time.Second)
		data := lookup(exact)
		require.Equal(t, reaisOf(valor), data["paid_amount"])
		require.Equal(t, false, data["amount_mismatch"], "the amount due on the day the Pix is dated")
		require.Equal(t, false, paidEvent(exact)["amount_mismatch"])

		// Due on a Saturday, paid on the Monday after: BACEN moves the due
		// date to a business day, so the payer pays no fine; pixgate's terms
		// do not move it, and the difference shows.
		sat := 1
		for spToday().AddDate(0, 0, sat).Weekday() != time.Saturday {
			sat++
		}
		moved, code := create("e2e-due-dated-2", map[string]any{"date": day(sat), "days_after": 30,
			"fine": map[string]any{"percent": 2}, "interest": map[string]any{"percent_per_month": 1}})
		require.Equal(t, int64(30000), payByCode(code, day(sat+2)), "no fine on the Monday after a Saturday due date")
		e.waitStatus(t, n, moved, "PAID", 30*time.Second)
		data = lookup(moved)
		require.Equal(t, float64(300), data["paid_amount"])
		require.Equal(t, true, data["amount_mismatch"], "pixgate's terms put a fine on the Monday")
		require.Equal(t, true, paidEvent(moved)["amount_mismatch"])
		e2eCheckLedger(t, db)
	})
}
