package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/internal/backoffice"
	"github.com/pixgate/pixgate/internal/ledger"
	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/store"
)

func (b *bundle) refund(body map[string]any, key string) response {
	b.t.Helper()
	if key == "" {
		return b.do("POST", "/api/v1/gateway/refund", body)
	}
	return b.doKey("/api/v1/gateway/refund", body, key)
}

func (b *bundle) paidCharge(ext, amount string) string {
	b.t.Helper()
	id := b.createCharge(ext, amount).json["payment_id"].(string)
	require.Equal(b.t, http.StatusOK, b.do("POST", "/api/v1/sandbox/charges/"+id+"/pay", nil).status)
	return id
}

func TestRefunds(t *testing.T) {
	t.Parallel()
	databases(t, func(t *testing.T, open func(t *testing.T) *store.DB) {
		b := setup(t, open, options{})
		ctx := context.Background()
		id := b.paidCharge("r-1", "100")

		// Partial, then the remainder (no amount), then nothing is left.
		r := b.refund(map[string]any{"payment_id": id, "amount": json.Number("30.25"), "reason": "produto devolvido"}, "ref-1")
		require.Equal(t, http.StatusOK, r.status, string(r.body))
		require.Equal(t, "PENDING", r.json["status"])
		require.Equal(t, id, r.json["payment_id"])
		require.Equal(t, json.Number("30.25"), r.json["amount"])
		refundID := r.json["refund_id"].(string)
		require.Regexp(t, uuidV4, refundID)
		again := b.refund(map[string]any{"reason": "produto devolvido", "amount": json.Number("30.25"), "payment_id": id}, "ref-1")
		require.Equal(t, string(r.body), string(again.body))
		require.Equal(t, "true", again.header.Get("Idempotent-Replayed"))
		require.Equal(t, http.StatusUnprocessableEntity, b.refund(map[string]any{"payment_id": id, "amount": json.Number("1")}, "ref-1").status)

		avail, pending := b.balance()
		require.Equal(t, json.Number("6975"), avail)
		require.Equal(t, json.Number("3025"), pending)
		r = b.refund(map[string]any{"external_id": "r-1", "amount": json.Number("69.76")}, "")
		require.Equal(t, http.StatusUnprocessableEntity, r.status, "more than is left")
		require.Contains(t, r.json["message"], "exceeds")
		r = b.refund(map[string]any{"external_id": "r-1"}, "")
		require.Equal(t, http.StatusOK, r.status)
		require.Equal(t, json.Number("69.75"), r.json["amount"], "the remainder")
		rest := r.json["refund_id"].(string)
		r = b.refund(map[string]any{"payment_id": id}, "")
		require.Equal(t, http.StatusUnprocessableEntity, r.status)
		require.Equal(t, "PAID", b.lookup(id)["status"], "still PAID until the refunds settle")

		b.settle()
		d := b.lookup(id)
		require.Equal(t, "REFUNDED", d["status"])
		require.Equal(t, json.Number("100"), d["refunded_amount"])
		avail, pending = b.balance()
		require.Equal(t, json.Number("0"), avail)
		require.Equal(t, json.Number("0"), pending)
		require.Equal(t, [][]ledger.Entry{
			{{Account: ledger.Available, Amount: -3025}, {Account: ledger.Pending, Amount: 3025}},
			{{Account: ledger.Pending, Amount: -3025}, {Account: ledger.Settlement, Amount: 3025}},
		}, b.entries(refundID))
		require.Len(t, b.entries(rest), 2)
		require.Equal(t, []string{pix.EventCashinPaid, pix.EventRefundCompleted, pix.EventRefundCompleted}, b.eventTypes(id))
		evs, err := b.db.Events(ctx, id)
		require.NoError(t, err)
		var first, last map[string]any
		require.NoError(t, json.Unmarshal([]byte(evs[1].Payload), &first))
		require.NoError(t, json.Unmarshal([]byte(evs[2].Payload), &last))
		require.Equal(t, refundID, first["refund_id"])
		require.Equal(t, 30.25, first["value"])
		require.Equal(t, "PAID", first["statusTransaction"], "the charge's status after the first refund")
		require.Equal(t, "REFUNDED", last["statusTransaction"])
		r = b.refund(map[string]any{"payment_id": id}, "")
		require.Equal(t, http.StatusUnprocessableEntity, r.status)
		require.NoError(t, b.db.CheckLedger(ctx))
	})
}

// A charge's refunds settle in the order they were requested, so its
// webhooks tell its story in order: PAID after each but the last.
func TestRefundsOfOneChargeSettleInOrder(t *testing.T) {
	t.Parallel()
	databases(t, func(t *testing.T, open func(t *testing.T) *store.DB) {
		b := setup(t, open, options{})
		id := b.paidCharge("ro-1", "8")
		var want []string
		for i := range 8 {
			r := b.refund(map[string]any{"payment_id": id, "amount": json.Number("1")}, fmt.Sprint("ro-", i))
			require.Equal(t, http.StatusOK, r.status, string(r.body))
			want = append(want, r.json["refund_id"].(string))
			b.clock.Advance(time.Millisecond)
		}
		b.settle()
		evs, err := b.db.Events(context.Background(), id)
		require.NoError(t, err)
		require.Len(t, evs, 9)
		var got, statuses []string
		for _, e := range evs[1:] {
			var p map[string]any
			require.NoError(t, json.Unmarshal([]byte(e.Payload), &p))
			got = append(got, p["refund_id"].(string))
			statuses = append(statuses, p["statusTransaction"].(string))
		}
		require.Equal(t, want, got, "refunds settled in the order they were requested")
		require.Equal(t, []string{"PAID", "PAID", "PAID", "PAID", "PAID", "PAID", "PAID", "REFUNDED"}, statuses)
	})
}

func TestRefundRules(t *testing.T) {
	t.Parallel()
	databases(t, func(t *testing.T, open func(t *testing.T) *store.DB) {
		b := setup(t, open, options{})
		pending := b.createCharge("rr-pending", "10").json["payment_id"].(string)
		paid := b.paidCharge("rr-paid", "10")

		r := b.refund(map[string]any{}, "")
		require.Equal(t, http.StatusBadRequest, r.status)
		r = b.refund(map[string]any{"payment_id": "0b7c3a52-2222-4222-8222-222222222222"}, "")
		require.Equal(t, http.StatusNotFound, r.status)
		r = b.refund(map[string]any{"payment_id": pending}, "")
		require.Equal(t, http.StatusUnprocessableEntity, r.status)
		require.Contains(t, r.json["message"], "PAID")
		r = b.refund(map[string]any{"payment_id": paid, "amount": json.Number("0")}, "")
		require.Equal(t, http.StatusBadRequest, r.status)
		r = b.refund(map[string]any{"payment_id": paid, "amount": json.Number("10.01")}, "")
		require.Equal(t, http.StatusUnprocessableEntity, r.status)

		// A payout is not a charge.
		po := b.do("POST", "/api/v1/gateway/pix-payment", payout("1", "CPF", "52998224725")).json["transaction_id"].(string)
		require.Equal(t, http.StatusNotFound, b.refund(map[string]any{"payment_id": po}, "").status)
		// Another client's charge is not found.
		other, err := b.bo.CreateClient(context.Background(), backoffice.ClientParams{Name: "o"})
		require.NoError(t, err)
		r = b.send(b.http, "POST", "/api/v1/gateway/refund", map[string]any{"payment_id": paid}, "application/json", other)
		require.Equal(t, http.StatusNotFound, r.status)

		// Spending the balance first: the refund cannot be held.
		require.Equal(t, http.StatusOK, b.do("POST", "/api/v1/gateway/pix-payment", payout("9", "CPF", "52998224725")).status)
		r = b.refund(map[string]any{"payment_id": paid}, "")
		require.Equal(t, http.StatusUnprocessableEntity, r.status)
		require.JSONEq(t, `{"statusCode":422,"message":"Insufficient balance","error":"Unprocessable Entity",
			"details":[{"field":"amount","issue":"available R$ 0.00 is less than amount + tax R$ 10.00"}]}`, string(r.body))

		// A failed refund releases its hold and leaves the charge PAID.
		b.settle()
		b.fund("20")
		r = b.refund(map[string]any{"payment_id": paid, "reason": "sandbox:fail"}, "")
		require.Equal(t, http.StatusOK, r.status, string(r.body))
		b.settle()
		require.Equal(t, "PAID", b.lookup(paid)["status"])
		require.Equal(t, json.Number("0"), b.lookup(paid)["refunded_amount"])
		require.Equal(t, []string{pix.EventCashinPaid, pix.EventRefundFailed}, b.eventTypes(paid))

		// 90 days after payment, no more refunds.
		b.clock.Advance(91 * 24 * time.Hour)
		r = b.refund(map[string]any{"payment_id": paid}, "")
		require.Equal(t, http.StatusUnprocessableEntity, r.status)
		require.Contains(t, r.json["message"], "90 days")
		require.NoError(t, b.db.CheckLedger(context.Background()))
	})
}

// TestRandomConcurrentMix drives charges, payments, payouts and refunds at
// random from several goroutines, settling as it goes; afterwards every
// account sums to zero, no balance is negative, and the API's balance agrees
// with the ledger.
func TestRandomConcurrentMix(t *testing.T) {
	t.Parallel()
	databases(t, func(t *testing.T, open func(t *testing.T) *store.DB) {
		b := setup(t, open, options{})
		ctx := context.Background()
		var mu sync.Mutex
		var paid []string
		// call sends a request and checks its status is one of want; the
		// worker stops at its first error, which the test asserts after the
		// join (require may only be called from the test's goroutine).
		call := func(method, path string, body any, want ...int) (response, error) {
			r, err := b.attempt(method, path, body, "")
			if err == nil && !slices.Contains(want, r.status) {
				err = fmt.Errorf("%s %s: %d %s, want one of %v", method, path, r.status, r.body, want)
			}
			return r, err
		}
		work := func(w int) error {
			r := rand.New(rand.NewPCG(uint64(w), 7))
			for i := 0; i < 25; i++ {
				amount := fmt.Sprintf("%d.%02d", 1+r.IntN(50), r.IntN(100))
				switch r.IntN(5) {
				case 0, 1:
					c, err := call("POST", "/api/v1/gateway/request-qrcode", validCharge(fmt.Sprintf("mix-%d-%d", w, i), amount), http.StatusCreated)
					if err != nil {
						return err
					}
					id, _ := c.json["payment_id"].(string)
					if r.IntN(4) > 0 {
						if _, err := call("POST", "/api/v1/sandbox/charges/"+id+"/pay", nil, http.StatusOK); err != nil {
							return err
						}
						mu.Lock()
						paid = append(paid, id)
						mu.Unlock()
					}
				case 2:
					keys := []string{"fornecedor@example.com", "x@fail.sandbox", "y@reverse.sandbox"}
					if _, err := call("POST", "/api/v1/gateway/pix-payment", payout(amount, "EMAIL", keys[r.IntN(3)]), http.StatusOK, http.StatusUnprocessableEntity); err != nil {
						return err
					}
				case 3:
					mu.Lock()
					var id string
					if len(paid) > 0 {
						id = paid[r.IntN(len(paid))]
					}
					mu.Unlock()
					if id != "" {
						body := map[string]any{"payment_id": id, "amount": json.Number(fmt.Sprintf("0.%02d", 1+r.IntN(99)))}
						if _, err := call("POST", "/api/v1/gateway/refund", body, http.StatusOK, http.StatusUnprocessableEntity); err != nil {
							return err
						}
					}
				case 4:
					if _, err := b.gw.Transfers().StepDue(ctx, pix.TransferPayout, 10); err != nil {
						return fmt.Errorf("settle payouts: %w", err)
					}
					if _, err := b.gw.Transfers().StepDue(ctx, pix.TransferRefund, 10); err != nil {
						return fmt.Errorf("settle refunds: %w", err)
					}
				}
				if err := b.db.CheckLedger(ctx); err != nil {
					return fmt.Errorf("ledger after step %d: %w", i, err)
				}
			}
			return nil
		}
		errs := make([]error, 6)
		var wg sync.WaitGroup
		for w := range errs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs[w] = work(w)
			}()
		}
		wg.Wait()
		for w, err := range errs {
			require.NoError(t, err, "worker %d", w)
		}
		b.settle()
		require.NoError(t, b.db.CheckLedger(ctx))
		bal, err := b.db.Balances(ctx, b.cred.ClientID)
		require.NoError(t, err)
		require.Zero(t, bal[ledger.Pending], "everything settled")
		require.GreaterOrEqual(t, int64(bal[ledger.Available]), int64(0))
		avail, _ := b.balance()
		require.Equal(t, json.Number(fmt.Sprint(int64(bal[ledger.Available]))), avail)
	})
}

// TestRefundLookup: GET /api/v1/gateway/refunds/{refund_id} shows the
// caller's refund as docs/api.md describes it, through PENDING, COMPLETED and
// FAILED; another client's, unknown and malformed ids are 404. Refund
// events carry type "refund".
func TestRefundLookup(t *testing.T) {
	t.Parallel()
	databases(t, func(t *testing.T, open func(t *testing.T) *store.DB) {
		b := setup(t, open, options{})
		id := b.paidCharge("rl-1", "50")
		get := func(refundID string, cred ...backoffice.Credentials) response {
			return b.do("GET", "/api/v1/gateway/refunds/"+refundID, nil, cred...)
		}

		r := b.refund(map[string]any{"payment_id": id, "amount": json.Number("12.3"), "reason": "produto devolvido"}, "")
		require.Equal(t, http.StatusOK, r.status, string(r.body))
		withReason := r.json["refund_id"].(string)
		r = b.refund(map[string]any{"payment_id": id, "amount": json.Number("1"), "reason": "sandbox:fail"}, "")
		require.Equal(t, http.StatusOK, r.status, string(r.body))
		failing := r.json["refund_id"].(string)
		r = b.refund(map[string]any{"payment_id": id, "amount": json.Number("2")}, "")
		require.Equal(t, http.StatusOK, r.status, string(r.body))
		noReason := r.json["refund_id"].(string)

		r = get(withReason)
		require.Equal(t, http.StatusOK, r.status, string(r.body))
		created := r.json["data"].(map[string]any)["created_at"].(string)
		_, err := time.Parse(pix.TimeFormat, created)
		require.NoError(t, err)
		require.JSONEq(t, `{"statusCode":200,"data":{"refund_id":"`+withReason+`","payment_id":"`+id+`","amount":12.3,
			"reason":"produto devolvido","status":"PENDING","created_at":"`+created+`","settled_at":null}}`, string(r.body))
		r = get(noReason)
		require.Equal(t, http.StatusOK, r.status, string(r.body))
		require.Contains(t, r.json["data"], "reason")
		require.Nil(t, r.json["data"].(map[string]any)["reason"], "no reason given reads null")
		require.Equal(t, json.Number("2"), r.json["data"].(map[string]any)["amount"])

		b.settle()
		for refundID, status := range map[string]string{withReason: "COMPLETED", failing: "FAILED", noReason: "COMPLETED"} {
			r = get(refundID)
			require.Equal(t, http.StatusOK, r.status, string(r.body))
			d := r.json["data"].(map[string]any)
			require.Equal(t, status, d["status"], refundID)
			settled, err := time.Parse(pix.TimeFormat, d["settled_at"].(string))
			require.NoError(t, err)
			require.True(t, settled.After(b.clock.Now().Add(-3*time.Hour)), "settled after the clock moved")
		}

		// Refund events say they are about a refund.
		evs, err := b.db.Events(context.Background(), id)
		require.NoError(t, err)
		require.Len(t, evs, 4)
		for i, e := range evs {
			var p map[string]any
			require.NoError(t, json.Unmarshal([]byte(e.Payload), &p))
			if i == 0 {
				require.Equal(t, "cashin", p["type"], "the charge's own event")
				continue
			}
			require.Equal(t, "refund", p["type"], e.Type)
			require.NotEmpty(t, p["refund_id"])
		}

		// Another client's refund, an unknown and a malformed id: 404.
		other, err := b.bo.CreateClient(context.Background(), backoffice.ClientParams{Name: "o"})
		require.NoError(t, err)
		for _, tc := range []struct {
			path string
			cred []backoffice.Credentials
		}{
			{withReason, []backoffice.Credentials{other}},
			{"0b7c3a52-2222-4222-8222-222222222222", nil},
			{strings.ToUpper(withReason), nil},
			{"not-a-uuid", nil},
		} {
			r = get(tc.path, tc.cred...)
			require.Equal(t, http.StatusNotFound, r.status, tc.path)
			require.JSONEq(t, `{"statusCode":404,"message":"Refund not found","error":"Not Found"}`, string(r.body), tc.path)
		}
		r = b.do("GET", "/api/v1/gateway/refunds/"+withReason, nil, backoffice.Credentials{})
		require.Equal(t, http.StatusUnauthorized, r.status)
	})
}
