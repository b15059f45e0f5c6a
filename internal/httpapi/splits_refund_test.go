package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/internal/backoffice"
	"github.com/pixgate/pixgate/internal/ledger"
	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/provider/sandbox"
	"github.com/pixgate/pixgate/internal/store"
)

// TestSplitRefundProRata: a refund of a split charge is taken from each
// receiver in proportion to what it was credited out of net (half up) and
// the rest from the parent, each share held in its own pending; completed,
// each share leaves; failed, each returns.
func TestSplitRefundProRata(t *testing.T) {
	t.Parallel()
	databases(t, func(t *testing.T, open func(t *testing.T) *store.DB) {
		b := setup(t, open, options{fee: pix.FeeRule{PercentBP: 100}})
		s := b.sellers(2)
		// net 99.00: 19.80 (20 %) and 33.33 (33.67 %, 33.3333 → 33.33); the parent keeps 45.87.
		id := b.splitCharge("ref-split", "100.00", []any{percent(s[0].account, "20"), percent(s[1].account, "33.67")})
		b.pay(id)
		require.Equal(t, holds{available: 1980}, b.holds(s[0].cred))
		require.Equal(t, holds{available: 3333}, b.holds(s[1].cred))
		require.Equal(t, holds{available: 4587}, b.holds())

		// R$ 10.01: 10.01 × 19.80 / 99 = 2.002 → 2.00; 10.01 × 33.33 / 99 = 3.37003 → 3.37; the parent 4.64.
		r := b.refund(map[string]any{"payment_id": id, "amount": json.Number("10.01")}, "split-ref-1")
		require.Equal(t, http.StatusOK, r.status, string(r.body))
		require.Equal(t, holds{available: 1780, pending: 200}, b.holds(s[0].cred))
		require.Equal(t, holds{available: 2996, pending: 337}, b.holds(s[1].cred))
		require.Equal(t, holds{available: 4123, pending: 464}, b.holds())
		b.settle()
		require.Equal(t, holds{available: 1780}, b.holds(s[0].cred))
		require.Equal(t, holds{available: 2996}, b.holds(s[1].cred))
		require.Equal(t, holds{available: 4123}, b.holds())
		require.Equal(t, json.Number("10.01"), b.lookup(id)["refunded_amount"])

		// A refund that fails gives each share back where it came from.
		r = b.refund(map[string]any{"payment_id": id, "amount": json.Number("1.00"), "reason": sandbox.FailRefundReason}, "split-ref-2")
		require.Equal(t, http.StatusOK, r.status, string(r.body))
		require.Equal(t, holds{available: 1760, pending: 20}, b.holds(s[0].cred))
		b.settle()
		require.Equal(t, holds{available: 1780}, b.holds(s[0].cred))
		require.Equal(t, holds{available: 2996}, b.holds(s[1].cred))
		require.Equal(t, holds{available: 4123}, b.holds())
		require.NoError(t, b.db.CheckLedger(context.Background()))
		// The seller's statement shows its share of the refund.
		require.Equal(t, []string{"split 1980", "refund -200", "refund -20", "refund_failed 20"}, b.movementTypes(s[0].cred))
	})
}

// TestSplitRefundInsufficient: a refund whose share a receiver's available
// balance cannot cover is 422 Insufficient balance naming the account, and
// nothing is held anywhere.
func TestSplitRefundInsufficient(t *testing.T) {
	t.Parallel()
	databases(t, func(t *testing.T, open func(t *testing.T) *store.DB) {
		b := setup(t, open, options{})
		s := b.sellers(1)
		id := b.splitCharge("ref-short", "100.00", []any{percent(s[0].account, "50")})
		b.pay(id)
		// The seller pays out all but R$ 1.00 of its R$ 50.00.
		r := b.do("POST", "/api/v1/gateway/pix-payment", payout("49.00", "EMAIL", "seller@example.com"), s[0].cred)
		require.Equal(t, http.StatusOK, r.status, string(r.body))
		r = b.refund(map[string]any{"payment_id": id, "amount": json.Number("10.00")}, "short-1")
		require.Equal(t, http.StatusUnprocessableEntity, r.status, string(r.body))
		require.Equal(t, "Insufficient balance", r.json["message"])
		d := r.json["details"].([]any)[0].(map[string]any)
		require.Equal(t, "account_id", d["field"])
		require.Contains(t, d["issue"], s[0].account)
		require.Equal(t, holds{available: 5000}, b.holds())
		require.Equal(t, holds{available: 100, pending: 4900}, b.holds(s[0].cred))
		page, _ := b.refundPage(nil)
		require.Empty(t, page, "no refund was created")
		// What the seller can cover still goes through: R$ 2.00 takes R$ 1.00 from it.
		r = b.refund(map[string]any{"payment_id": id, "amount": json.Number("2.00")}, "short-2")
		require.Equal(t, http.StatusOK, r.status, string(r.body))
		require.Equal(t, holds{available: 0, pending: 5000}, b.holds(s[0].cred))
	})
}

// TestSplitRefundRacesPayouts: a seller's payouts racing refunds of a
// split charge never take a balance below zero: each either fits or is
// refused, and every balance and the ledger add up after.
func TestSplitRefundRacesPayouts(t *testing.T) {
	t.Parallel()
	databases(t, func(t *testing.T, open func(t *testing.T) *store.DB) {
		b := setup(t, open, options{})
		s := b.sellers(1)
		id := b.splitCharge("race", "100.00", []any{percent(s[0].account, "50")})
		b.pay(id)
		var wg sync.WaitGroup
		var mu sync.Mutex
		outcomes := map[string]int{}
		var errs []error
		send := func(what string, cred backoffice.Credentials, path string, body any, key string) {
			defer wg.Done()
			r, err := b.send2(cred, path, body, key)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, err)
				return
			}
			outcomes[fmt.Sprint(what, " ", r.status)]++
		}
		for i := range 20 {
			wg.Add(2)
			go send("payout", s[0].cred, "/api/v1/gateway/pix-payment", payout("5.00", "EMAIL", "seller@example.com"), "")
			go send("refund", b.cred, "/api/v1/gateway/refund", map[string]any{"payment_id": id, "amount": json.Number("4.00")}, fmt.Sprint("race-", i))
		}
		wg.Wait()
		require.Empty(t, errs)
		for k := range outcomes {
			require.True(t, strings.HasSuffix(k, " 200") || strings.HasSuffix(k, " 422"), "%v", outcomes)
		}
		payouts, refunds := outcomes["payout 200"], outcomes["refund 200"]
		t.Logf("outcomes %v", outcomes)
		require.Positive(t, payouts)
		require.Positive(t, refunds)
		// Each refund took R$ 2.00 from the seller and R$ 2.00 from the parent.
		seller := b.holds(s[0].cred)
		require.GreaterOrEqual(t, seller.available, int64(0))
		require.Equal(t, int64(5000), seller.available+seller.pending)
		require.Equal(t, int64(500*payouts+200*refunds), seller.pending)
		require.Equal(t, holds{available: int64(5000 - 200*refunds), pending: int64(200 * refunds)}, b.holds())
		require.NoError(t, b.db.CheckLedger(context.Background()))
		b.settle()
		for _, c := range []string{b.cred.ClientID, s[0].client} {
			bal, err := b.db.Balances(context.Background(), c)
			require.NoError(t, err)
			require.GreaterOrEqual(t, bal[ledger.Available], pix.Amount(0))
			require.Zero(t, bal[ledger.Pending])
		}
	})
}

// send2 POSTs body to path as cred with the Idempotency-Key key (none
// when ""), returning what went wrong instead of failing the test: it may
// run on any goroutine.
func (b *bundle) send2(cred backoffice.Credentials, path string, body any, key string) (response, error) {
	req, err := b.build("POST", path, body, "application/json", cred)
	if err != nil {
		return response{}, err
	}
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	return fetch(b.http, req)
}

// TestSplitMEDReturn: a MED return of a split charge is taken pro rata; a
// receiver that already paid out its share owes it (debt, never refused),
// and its next split pays that debt first; the parent's block covers only
// the parent's part, the rest released.
func TestSplitMEDReturn(t *testing.T) {
	t.Parallel()
	databases(t, func(t *testing.T, open func(t *testing.T) *store.DB) {
		b := setup(t, open, options{})
		s := b.sellers(1)
		id := b.splitCharge("med-split", "100.00", []any{percent(s[0].account, "40")})
		b.pay(id)
		r := b.do("POST", "/api/v1/gateway/pix-payment", payout("40.00", "EMAIL", "seller@example.com"), s[0].cred)
		require.Equal(t, http.StatusOK, r.status, string(r.body))
		d := b.dispute(id, map[string]any{"amount": json.Number("50.00")})
		require.Equal(t, holds{available: 1000, blocked: 5000}, b.holds())
		r = b.resolve(d["dispute_id"].(string), map[string]any{"outcome": "returned"})
		require.Equal(t, http.StatusOK, r.status, string(r.body))
		// R$ 50.00: the seller's 40 % (20.00) becomes its debt; the parent's 30.00 comes from its block.
		require.Equal(t, holds{pending: 4000, debt: 2000}, b.holds(s[0].cred))
		require.Equal(t, holds{available: 3000}, b.holds())
		require.Equal(t, json.Number("50"), b.lookup(id)["refunded_amount"])
		require.NoError(t, b.db.CheckLedger(context.Background()))

		// The seller's next share pays its debt first.
		next := b.splitCharge("med-next", "100.00", []any{percent(s[0].account, "30")})
		b.pay(next)
		require.Equal(t, holds{available: 1000, pending: 4000}, b.holds(s[0].cred))
		require.Equal(t, holds{available: 10000}, b.holds())
		require.NoError(t, b.db.CheckLedger(context.Background()))
	})
}
