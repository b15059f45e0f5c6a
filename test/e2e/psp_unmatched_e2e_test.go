package e2e

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/internal/ledger"
	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/pspsim"
	"github.com/pixgate/pixgate/internal/store"
	"github.com/pixgate/pixgate/internal/testkit"
)

// lookup returns the lookup data of transaction id.
func (e *pspE2E) lookup(t *testing.T, p *proc, id string) map[string]any {
	t.Helper()
	code, resp, raw := e.call(t, p, "POST", "/api/v1/wallet/transaction", map[string]any{"payment_id": id})
	require.Equal(t, http.StatusOK, code, raw)
	return resp["data"].(map[string]any)
}

// pspBalance is what the simulated PSP holds for the merchant: every Pix
// received, less every devolução returned and every send made.
func pspBalance(t *testing.T, st pspsim.State) int64 {
	t.Helper()
	var n int64
	for _, p := range st.Pix {
		n += centavos(t, p.Valor)
		for _, d := range p.Devolucoes {
			if d.Status == pspsim.Devolvido {
				n -= centavos(t, d.Valor)
			}
		}
	}
	for _, s := range st.Sends {
		if s.Status == "REALIZADO" {
			n -= centavos(t, s.Valor)
		}
	}
	return n
}

// books is what pixgate's ledger says crossed the PIX network: the sum of
// every settlement account (clients' and the house's), negated.
func books(t *testing.T, db *store.DB) int64 {
	t.Helper()
	total, err := db.TotalBalances(t.Context())
	require.NoError(t, err)
	return -int64(total[ledger.Settlement])
}

// centavos parses a valor of the API Pix ("10.00").
func centavos(t *testing.T, valor string) int64 {
	t.Helper()
	a, err := pix.ParseAmountString(valor)
	require.NoError(t, err, valor)
	return int64(a)
}

// TestPSPE2EUnmatched: a PSP that confirms other amounts and second
// payments, and a Pix for no charge at all. The charge paid with another
// amount is PAID with paid_amount, amount_mismatch and the fee on what
// was received; the second Pix and the stray one go into suspense and
// back to their payers by devolução, each sent once; the books equal the
// PSP's balance to the centavo.
func TestPSPE2EUnmatched(t *testing.T) {
	t.Parallel()
	testkit.ForEachDatabaseURL(t, func(t *testing.T, db string) {
		e := newPSPE2E(t, db)
		n := e.start(t, "", "")
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		defer cancel()

		// R$ 0.01 for R$ 100.00.
		under, underTx := e.charge(t, n, "e2e-under", 100)
		_, err := e.sim.PayWith(ctx, underTx, pspsim.PayOptions{Valor: 1})
		require.NoError(t, err)
		e.waitStatus(t, n, under, "PAID", 20*time.Second)
		d := e.lookup(t, n, under)
		require.Equal(t, 100.0, d["amount"])
		require.Equal(t, 0.01, d["paid_amount"])
		require.Equal(t, true, d["amount_mismatch"])
		require.Equal(t, 0.0, d["tax"], "1 % of 0.01 rounds to 0.00")
		avail, _ := e.balance(t, n)
		require.Equal(t, int64(1), avail, "the balance moved by what was received")

		// R$ 500.00 for R$ 100.00: the event says so too.
		over, overTx := e.charge(t, n, "e2e-over", 100)
		_, err = e.sim.PayWith(ctx, overTx, pspsim.PayOptions{Valor: 50000})
		require.NoError(t, err)
		e.waitStatus(t, n, over, "PAID", 20*time.Second)
		d = e.lookup(t, n, over)
		require.Equal(t, 500.0, d["paid_amount"])
		require.Equal(t, 5.0, d["tax"])
		require.Equal(t, true, d["amount_mismatch"])
		avail, _ = e.balance(t, n)
		require.Equal(t, int64(1+50000-500), avail)
		e2eWait(t, 20*time.Second, "pix.cashin.paid of the overpaid charge delivered", func() bool {
			return e.recv.count("pix.cashin.paid", over) == 1
		}, n)
		e.recv.mu.Lock()
		for _, b := range e.recv.byID {
			if b["event"] == "pix.cashin.paid" && b["payment_id"] == over {
				require.Equal(t, 500.0, b["value"])
				require.Equal(t, 500.0, b["paid_amount"])
				require.Equal(t, true, b["amount_mismatch"])
				require.Equal(t, 5.0, b["tax"])
			}
		}
		e.recv.mu.Unlock()

		// A second Pix of the paid charge, and a Pix with no txid at all.
		second, err := e.sim.PayWith(ctx, overTx, pspsim.PayOptions{Again: true})
		require.NoError(t, err)
		stray, err := e.sim.Receive(ctx, "", 4321)
		require.NoError(t, err)
		returned := func(e2e string) bool {
			for _, p := range e.sim.State().Pix {
				if p.EndToEndID == e2e && len(p.Devolucoes) > 0 {
					return true
				}
			}
			return false
		}
		e2eWait(t, 30*time.Second, "both unmatched Pix have a devolução at the PSP", func() bool {
			return returned(second) && returned(stray)
		}, n)
		e.sim.Settle(ctx)
		ldb := testkit.OpenURL(t, db)
		e2eWait(t, 60*time.Second, "both returns read back as done", func() bool {
			list, err := ldb.UnmatchedReceipts(t.Context(), pix.UnmatchedReturned, 10)
			require.NoError(t, err)
			return len(list) == 2
		}, n)
		for _, p := range e.sim.State().Pix {
			if p.EndToEndID == second || p.EndToEndID == stray {
				require.Len(t, p.Devolucoes, 1, "returned once")
				require.Equal(t, p.Valor, p.Devolucoes[0].Valor, "returned in full")
			}
		}
		avail, _ = e.balance(t, n)
		require.Equal(t, int64(1+50000-500), avail, "the merchant's balance never moved")
		house, err := ldb.HouseBalances(t.Context())
		require.NoError(t, err)
		require.Zero(t, house[ledger.Suspense])
		require.Equal(t, pspBalance(t, e.sim.State()), books(t, ldb), "the books equal the PSP's balance")
		e2eCheckLedger(t, db)
	})
}
