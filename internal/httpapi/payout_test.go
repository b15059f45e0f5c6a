package httpapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/internal/ledger"
	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/provider"
	"github.com/pixgate/pixgate/internal/store"
)

func payout(amount, keyType, key string) map[string]any {
	return map[string]any{
		"amount":      json.Number(amount),
		"description": "Pagamento fornecedor",
		"creditParty": map[string]any{"name": "Fornecedor Ltda", "keyType": keyType, "key": key},
		"callbackUrl": "https://merchant.example.com/webhooks/payout",
	}
}

// fund credits the client's available balance by paying a charge.
func (b *bundle) fund(amount string) {
	b.t.Helper()
	id := b.createCharge(fmt.Sprint("fund-", rand.Int64()), amount).json["payment_id"].(string)
	r := b.do("POST", "/api/v1/sandbox/charges/"+id+"/pay", nil)
	require.Equal(b.t, http.StatusOK, r.status, string(r.body))
}

// settle advances the clock past the payout delay (1 h in these tests) and
// runs settlement until nothing is due.
func (b *bundle) settle() {
	b.t.Helper()
	b.clock.Advance(time.Hour + time.Second)
	for {
		n, err := b.gw.SettleDue(context.Background(), 100)
		require.NoError(b.t, err)
		m, err := b.gw.SettleRefundsDue(context.Background(), 100)
		require.NoError(b.t, err)
		if n+m == 0 {
			return
		}
		b.clock.Advance(time.Hour + time.Second)
	}
}

func (b *bundle) lookup(id string) map[string]any {
	b.t.Helper()
	r := b.do("POST", "/api/v1/wallet/transaction", map[string]any{"payment_id": id})
	require.Equal(b.t, http.StatusOK, r.status, string(r.body))
	return r.json["data"].(map[string]any)
}

func (b *bundle) entries(id string) [][]ledger.Entry {
	b.t.Helper()
	ps, err := b.db.Postings(context.Background(), id)
	require.NoError(b.t, err)
	out := make([][]ledger.Entry, len(ps))
	for i, p := range ps {
		out[i] = p.Entries
	}
	return out
}

func (b *bundle) eventTypes(id string) []string {
	b.t.Helper()
	evs, err := b.db.Events(context.Background(), id)
	require.NoError(b.t, err)
	var out []string
	for _, e := range evs {
		out = append(out, e.Type)
	}
	return out
}

func TestPayoutValidation(t *testing.T) {
	t.Parallel()
	databases(t, func(t *testing.T, open func(t *testing.T) *store.DB) {
		b := setup(t, open, options{})
		b.fund("1000")
		path := "/api/v1/gateway/pix-payment"
		for _, tc := range []struct{ keyType, key string }{
			{"CPF", "52998224724"}, {"CPF", "529.982.247-25"}, {"CNPJ", "11222333000180"}, {"EMAIL", "not-an-email"},
			{"EMAIL", "a@b"}, {"PHONE", "11987654321"}, {"PHONE", "+55119876"}, {"PHONE", "+5511987654321000"},
			{"EVP", "not-a-uuid"}, {"EVP", "123e4567-e89b-12d3-a456-426614174000"}, {"IBAN", "x"}, {"CPF", ""}, {"", "52998224725"},
		} {
			r := b.do("POST", path, payout("10", tc.keyType, tc.key))
			require.Equal(t, http.StatusBadRequest, r.status, "%v %s", tc, r.body)
			require.Equal(t, "Invalid key format", r.json["message"], tc)
			require.Equal(t, "Bad Request", r.json["error"])
			// The details say which form the key type takes.
			issue := pix.KeyFormatIssue(pix.KeyType(tc.keyType))
			field := "creditParty.key"
			if !pix.ValidKeyType(tc.keyType) {
				field, issue = "creditParty.keyType", "must be one of CPF, CNPJ, EMAIL, PHONE, EVP"
			}
			require.Equal(t, []any{map[string]any{"field": field, "issue": issue}}, r.json["details"], tc)
		}
		// A PHONE key without +55 (the usual miss) is told the +55 form.
		r := b.do("POST", path, payout("10", "PHONE", "11987654321"))
		require.Equal(t, http.StatusBadRequest, r.status)
		require.JSONEq(t, `{"statusCode":400,"message":"Invalid key format","error":"Bad Request","details":[{"field":"creditParty.key",
			"issue":"must be +55 followed by the area code and number, 10 or 11 digits, without spaces or punctuation (+5511987654321)"}]}`, string(r.body))
		empty := payout("1", "CPF", "52998224725")
		empty["external_id"] = ""
		r = b.do("POST", path, empty)
		require.Equal(t, http.StatusOK, r.status, "an empty optional external_id counts as not sent: %s", r.body)
		require.Nil(t, r.json["external_id"])
		for _, tc := range []struct{ keyType, key string }{
			{"CPF", "52998224725"}, {"CNPJ", "11222333000181"}, {"EMAIL", "fornecedor@example.com"},
			{"PHONE", "+5511987654321"}, {"PHONE", "+551133334444"}, {"EVP", "123e4567-e89b-42d3-a456-426614174000"},
		} {
			r := b.do("POST", path, payout("1", tc.keyType, tc.key))
			require.Equal(t, http.StatusOK, r.status, "%v %s", tc, r.body)
		}
		bad := func(mut func(m map[string]any)) map[string]any {
			m := payout("10", "CPF", "52998224725")
			mut(m)
			return m
		}
		for i, body := range []map[string]any{
			bad(func(m map[string]any) { m["amount"] = json.Number("0") }),
			bad(func(m map[string]any) { m["amount"] = json.Number("1.999") }),
			bad(func(m map[string]any) { delete(m, "amount") }),
			bad(func(m map[string]any) { delete(m, "description") }),
			bad(func(m map[string]any) { delete(m, "callbackUrl") }),
			bad(func(m map[string]any) { m["callbackUrl"] = "nope" }),
			bad(func(m map[string]any) { delete(m, "creditParty") }),
			bad(func(m map[string]any) { m["external_id"] = "bad id" }),
		} {
			r := b.do("POST", path, body)
			require.Equal(t, http.StatusBadRequest, r.status, "%d %s", i, r.body)
			require.Equal(t, "Invalid request parameters", r.json["message"], i)
		}
		avail, pending := b.balance()
		require.Equal(t, json.Number("99300"), avail, "only the 7 valid payouts reserved")
		require.Equal(t, json.Number("700"), pending)
	})
}

func TestPayoutLifecycle(t *testing.T) {
	t.Parallel()
	databases(t, func(t *testing.T, open func(t *testing.T) *store.DB) {
		// Payout fee: 1.5% + R$ 0.10.
		b := setup(t, open, options{fee: pix.FeeRule{PercentBP: 150, Fixed: 10}})
		b.fund("1000") // available: 100000 - 1510 = 98490
		ctx := context.Background()

		r := b.do("POST", "/api/v1/gateway/pix-payment", payout("100.50", "CPF", "52998224725"))
		require.Equal(t, http.StatusOK, r.status, string(r.body))
		require.Equal(t, json.Number("200"), r.json["statusCode"])
		require.Equal(t, "PENDING", r.json["status"])
		require.Equal(t, json.Number("100.5"), r.json["amount"])
		require.Equal(t, json.Number("1.61"), r.json["tax"], "1.5% of 10050 = 150.75 → 151, + 10")
		require.Nil(t, r.json["external_id"])
		ok := r.json["transaction_id"].(string)
		require.Regexp(t, uuidV4, ok)
		avail, pending := b.balance()
		require.Equal(t, json.Number(fmt.Sprint(98490-10211)), avail)
		require.Equal(t, json.Number("10211"), pending)

		fail := b.do("POST", "/api/v1/gateway/pix-payment", payout("10", "EMAIL", "someone@fail.sandbox")).json["transaction_id"].(string)
		rev := b.do("POST", "/api/v1/gateway/pix-payment", payout("20", "EMAIL", "someone@reverse.sandbox")).json["transaction_id"].(string)
		require.Equal(t, "PENDING", b.lookup(ok)["status"])
		n, err := b.gw.SettleDue(ctx, 100)
		require.NoError(t, err)
		require.Zero(t, n, "nothing settles before the delay")
		b.settle()

		d := b.lookup(ok)
		require.Equal(t, "PAID", d["status"])
		require.Equal(t, "cashout", d["type"])
		require.NotNil(t, d["confirmed_date"])
		require.Equal(t, json.Number("1.61"), d["tax"])
		require.Equal(t, "CANCELLED", b.lookup(fail)["status"])
		require.Equal(t, "REVERSED", b.lookup(rev)["status"])

		// Ledger, entry by entry.
		require.Equal(t, [][]ledger.Entry{
			{{Account: ledger.Available, Amount: -10211}, {Account: ledger.Pending, Amount: 10211}},
			{{Account: ledger.Pending, Amount: -10211}, {Account: ledger.Settlement, Amount: 10050}, {Account: ledger.Fees, Amount: 161}},
		}, b.entries(ok))
		require.Equal(t, [][]ledger.Entry{
			{{Account: ledger.Available, Amount: -1025}, {Account: ledger.Pending, Amount: 1025}},
			{{Account: ledger.Pending, Amount: -1025}, {Account: ledger.Available, Amount: 1025}},
		}, b.entries(fail))
		require.Equal(t, [][]ledger.Entry{
			{{Account: ledger.Available, Amount: -2040}, {Account: ledger.Pending, Amount: 2040}},
			{{Account: ledger.Pending, Amount: -2040}, {Account: ledger.Settlement, Amount: 2000}, {Account: ledger.Fees, Amount: 40}},
			{{Account: ledger.Settlement, Amount: -2000}, {Account: ledger.Available, Amount: 2000}},
		}, b.entries(rev))
		avail, pending = b.balance()
		require.Equal(t, json.Number(fmt.Sprint(98490-10211-40)), avail, "failed payout fully back; reversed amount back, tax kept")
		require.Equal(t, json.Number("0"), pending)
		require.NoError(t, b.db.CheckLedger(ctx))

		require.Equal(t, []string{pix.EventCashoutPaid}, b.eventTypes(ok))
		require.Equal(t, []string{pix.EventCashoutFailed}, b.eventTypes(fail))
		require.Equal(t, []string{pix.EventCashoutPaid, pix.EventCashoutReversed}, b.eventTypes(rev))
		evs, err := b.db.Events(ctx, rev)
		require.NoError(t, err)
		var ev map[string]any
		require.NoError(t, json.Unmarshal([]byte(evs[1].Payload), &ev))
		require.Equal(t, "REVERSED", ev["statusTransaction"])
		require.Equal(t, rev, ev["transaction_id"])
		require.Equal(t, 20.0, ev["value"])
		require.Equal(t, 0.4, ev["tax"])
		require.Equal(t, "https://merchant.example.com/webhooks/payout", evs[1].URL)

		// Settling again changes nothing.
		b.settle()
		require.Equal(t, []string{pix.EventCashoutPaid, pix.EventCashoutReversed}, b.eventTypes(rev))

		// History shows payouts with their lookup statuses.
		h := b.do("GET", "/api/v1/wallet/transactions?type=cashout", nil)
		require.Len(t, h.json["data"], 3)
		h = b.do("GET", "/api/v1/wallet/transactions?status=REVERSED", nil)
		require.Len(t, h.json["data"], 1)
	})
}

// flakyProvider is the sandbox except that it cannot reach the PIX network
// for transfers of one amount while down is set: the outcome of such a
// send is unknown.
type flakyProvider struct {
	provider.Provider
	amount pix.Amount
	down   atomic.Bool
}

func (p *flakyProvider) Send(ctx context.Context, t provider.Transfer) (provider.TransferState, error) {
	if t.Amount == p.amount && p.down.Load() {
		return provider.TransferState{}, errors.New("PSP unreachable")
	}
	return p.Provider.Send(ctx, t)
}

func (p *flakyProvider) Status(ctx context.Context, t provider.Transfer) (provider.TransferState, error) {
	if t.Amount == p.amount && p.down.Load() {
		return provider.TransferState{}, errors.New("PSP unreachable")
	}
	return p.Provider.Status(ctx, t)
}

// A payout whose send's outcome is unknown holds up no other: the others
// settle at once, each exactly once, and the unknown one stays PENDING
// with nothing moved until the provider answers, then settles once.
func TestSendSurvivesAFailingPayout(t *testing.T) {
	t.Parallel()
	databases(t, func(t *testing.T, open func(t *testing.T) *store.DB) {
		b := setup(t, open, options{})
		b.fund("1000")
		ctx := context.Background()
		flaky := &flakyProvider{Provider: b.gw.Provider, amount: 777}
		flaky.down.Store(true)
		b.gw.Provider = flaky

		var ids []string
		for i := range 40 {
			amount := "1"
			if i == 17 {
				amount = "7.77"
			}
			r := b.do("POST", "/api/v1/gateway/pix-payment", payout(amount, "EMAIL", "someone@example.com"))
			require.Equal(t, http.StatusOK, r.status, string(r.body))
			ids = append(ids, r.json["transaction_id"].(string))
		}
		b.clock.Advance(time.Hour + time.Second)
		n, err := b.gw.SettleDue(ctx, 100)
		require.NoError(t, err, "an unknown outcome is the transfer's state, not the job's failure")
		require.Equal(t, 39, n)
		for i, id := range ids {
			want := "PAID"
			if i == 17 {
				want = "PENDING"
			}
			require.Equal(t, want, b.lookup(id)["status"], "payout %d", i)
		}
		require.Len(t, b.entries(ids[17]), 1, "the unknown payout is only reserved")
		require.NoError(t, b.db.CheckLedger(ctx))

		flaky.down.Store(false)
		b.settle()
		require.Equal(t, "PAID", b.lookup(ids[17])["status"])
		for _, id := range ids {
			require.Len(t, b.entries(id), 2, "reserved and completed, once")
			require.Equal(t, []string{pix.EventCashoutPaid}, b.eventTypes(id))
		}
		avail, pending := b.balance()
		require.Equal(t, json.Number("0"), pending)
		require.Equal(t, json.Number(fmt.Sprint(100000-39*100-777)), avail)
		require.NoError(t, b.db.CheckLedger(ctx))
	})
}

// gateProvider holds every Send until release is closed, closing entered
// once want of them are waiting; without entered it holds nothing. Both
// count the sends of each transfer in sends, which they may share.
type gateProvider struct {
	provider.Provider
	want     int
	entered  chan struct{}
	released chan struct{}
	mu       *sync.Mutex
	sends    map[string]int
	waiting  int
}

func (p *gateProvider) Send(ctx context.Context, t provider.Transfer) (provider.TransferState, error) {
	p.mu.Lock()
	p.sends[t.ID]++
	p.waiting++
	if p.entered != nil && p.waiting == p.want {
		close(p.entered)
	}
	p.mu.Unlock()
	if p.entered != nil {
		<-p.released
	}
	return p.Provider.Send(ctx, t)
}

// statefulSends is a provider whose sends must be claimed before they are
// made, as a real PSP's: the sandbox without its stateless sends.
type statefulSends struct{ provider.Provider }

// Pay is the sandbox's payer, which funds the client.
func (p statefulSends) Pay(ctx context.Context, c provider.Charge) (provider.Payment, error) {
	return p.Provider.(provider.Payer).Pay(ctx, c)
}

func (p statefulSends) Capabilities() provider.Capabilities {
	c := p.Provider.Capabilities()
	c.StatelessSends = false
	return c
}

// Two nodes step the same due payouts. The first claims them and asks its
// provider, which answers only after the second node has looked: the
// second finds nothing due (each payout is claimed, in the database, before
// it is sent), and every payout is sent and settled exactly once.
func TestSettlementRaceWithAnotherNode(t *testing.T) {
	t.Parallel()
	databases(t, func(t *testing.T, open func(t *testing.T) *store.DB) {
		b := setup(t, open, options{provider: func(p provider.Provider) provider.Provider { return statefulSends{p} }})
		b.fund("1000")
		ctx := context.Background()
		var ids []string
		for range 5 {
			r := b.do("POST", "/api/v1/gateway/pix-payment", payout("2", "EMAIL", "someone@example.com"))
			require.Equal(t, http.StatusOK, r.status, string(r.body))
			ids = append(ids, r.json["transaction_id"].(string))
		}
		b.clock.Advance(time.Hour + time.Minute)
		// Not due yet: its reservation keeps pending high enough that
		// settling the others twice would not overdraw it.
		r := b.do("POST", "/api/v1/gateway/pix-payment", payout("50", "EMAIL", "someone@example.com"))
		require.Equal(t, http.StatusOK, r.status, string(r.body))
		// The last payout is not due for 30 s (the clock runs on); the
		// others are past the sandbox's delay.
		b.clock.Advance(-30 * time.Second)
		other := *b.gw // another node on the same database
		var mu sync.Mutex
		sends := map[string]int{}
		// The first node's provider answers once it holds a send of each
		// payout; the other node's would answer at once.
		slow := &gateProvider{Provider: b.gw.Provider, want: len(ids), entered: make(chan struct{}), released: make(chan struct{}),
			mu: &mu, sends: sends}
		b.gw.Provider = slow
		other.Provider = &gateProvider{Provider: other.Provider, mu: &mu, sends: sends}
		type result struct {
			n   int
			err error
		}
		first := make(chan result, 1)
		go func() {
			n, err := b.gw.SettleDue(ctx, 100)
			first <- result{n, err}
		}()
		<-slow.entered
		n, err := other.SettleDue(ctx, 100)
		require.NoError(t, err)
		require.Zero(t, n, "the first node holds them all")
		close(slow.released)
		res := <-first
		require.NoError(t, res.err)
		require.Equal(t, 5, res.n)
		for _, id := range ids {
			require.Equal(t, "PAID", b.lookup(id)["status"])
			require.Len(t, b.entries(id), 2, "reserved and completed, once")
			require.Equal(t, []string{pix.EventCashoutPaid}, b.eventTypes(id))
			require.Equal(t, 1, sends[id], "sent once")
		}
		avail, pending := b.balance()
		require.Equal(t, json.Number("5000"), pending)
		require.Equal(t, json.Number(fmt.Sprint(100000-5*200-5000)), avail)
		require.NoError(t, b.db.CheckLedger(ctx))
	})
}

func TestPayoutInsufficientAndIdempotent(t *testing.T) {
	t.Parallel()
	databases(t, func(t *testing.T, open func(t *testing.T) *store.DB) {
		b := setup(t, open, options{})
		path := "/api/v1/gateway/pix-payment"
		r := b.do("POST", path, payout("0.01", "CPF", "52998224725"))
		require.Equal(t, http.StatusUnprocessableEntity, r.status)
		require.JSONEq(t, `{"statusCode":422,"message":"Insufficient balance","error":"Unprocessable Entity",
			"details":[{"field":"amount","issue":"available R$ 0.00 is less than amount + tax R$ 0.01"}]}`, string(r.body))
		require.Equal(t, 0, b.count(b.cred.ClientID), "nothing stored")
		b.fund("50")

		body := payout("10", "CPF", "52998224725")
		body["external_id"] = "po-1"
		first := b.do("POST", path, body)
		require.Equal(t, http.StatusOK, first.status)
		again := b.do("POST", path, body)
		require.Equal(t, http.StatusOK, again.status)
		require.Equal(t, "true", again.header.Get("Idempotent-Replayed"))
		require.Equal(t, string(first.body), string(again.body))
		body["amount"] = json.Number("11")
		r = b.do("POST", path, body)
		require.Equal(t, http.StatusUnprocessableEntity, r.status)
		require.Equal(t, "external_id already used with different parameters", r.json["message"])

		// An external_id of a charge cannot be reused by a payout.
		clash := payout("1", "CPF", "52998224725")
		clash["external_id"] = b.createCharge("shared-id", "1").json["external_id"]
		require.Equal(t, http.StatusUnprocessableEntity, b.do("POST", path, clash).status)

		// Idempotency-Key header.
		keyed := func(key string, amount string) response {
			return b.doKey(path, payout(amount, "EMAIL", "x@example.com"), key)
		}
		k1 := keyed("key-1", "5")
		require.Equal(t, http.StatusOK, k1.status)
		k1b := keyed("key-1", "5")
		require.Equal(t, string(k1.body), string(k1b.body))
		require.Equal(t, "true", k1b.header.Get("Idempotent-Replayed"))
		require.Equal(t, http.StatusUnprocessableEntity, keyed("key-1", "6").status)
		require.Equal(t, http.StatusOK, keyed("key-2", "5").status)
		avail, pending := b.balance()
		require.Equal(t, json.Number(fmt.Sprint(5000-1000-500-500)), avail)
		require.Equal(t, json.Number("2000"), pending)
	})
}

// TestInsufficientBalanceDetails: the 422 states the available amount and
// amount + tax in reais, exact from centavos (docs/api.md, Errors).
func TestInsufficientBalanceDetails(t *testing.T) {
	t.Parallel()
	databases(t, func(t *testing.T, open func(t *testing.T) *store.DB) {
		b := setup(t, open, options{fee: pix.FeeRule{Fixed: 50}})
		b.fund("12.84") // R$ 0.50 cash-in fee: 1234 available
		r := b.do("POST", "/api/v1/gateway/pix-payment", payout("14.50", "CPF", "52998224725"))
		require.Equal(t, http.StatusUnprocessableEntity, r.status)
		require.JSONEq(t, `{"statusCode":422,"message":"Insufficient balance","error":"Unprocessable Entity",
			"details":[{"field":"amount","issue":"available R$ 12.34 is less than amount + tax R$ 15.00"}]}`, string(r.body))
		// Exactly what is available fits.
		r = b.do("POST", "/api/v1/gateway/pix-payment", payout("11.84", "CPF", "52998224725"))
		require.Equal(t, http.StatusOK, r.status, string(r.body))
	})
}

func TestConcurrentPayoutsNeverOverdraw(t *testing.T) {
	t.Parallel()
	databases(t, func(t *testing.T, open func(t *testing.T) *store.DB) {
		// R$ 10.00 payout + R$ 0.50 fixed tax = 1050; fund exactly 10 of them.
		b := setup(t, open, options{fee: pix.FeeRule{Fixed: 50}})
		b.fund("105.50") // the same rule charges R$ 0.50 on cash-in: 10550 - 50
		avail, _ := b.balance()
		require.Equal(t, json.Number("10500"), avail)

		resps := make([]response, 30)
		errs := make([]error, len(resps))
		var wg sync.WaitGroup
		for i := range resps {
			wg.Add(1)
			go func() {
				defer wg.Done()
				resps[i], errs[i] = b.attempt("POST", "/api/v1/gateway/pix-payment", payout("10", "CPF", "52998224725"), "")
			}()
		}
		wg.Wait()
		var okCount, refused int
		for i, r := range resps {
			require.NoError(t, errs[i])
			switch r.status {
			case http.StatusOK:
				okCount++
			case http.StatusUnprocessableEntity:
				refused++
			default:
				require.Failf(t, "unexpected answer", "%d %s", r.status, r.body)
			}
		}
		require.Equal(t, 10, okCount)
		require.Equal(t, 20, refused)
		avail, pending := b.balance()
		require.Equal(t, json.Number("0"), avail)
		require.Equal(t, json.Number("10500"), pending)
		b.settle()
		avail, pending = b.balance()
		require.Equal(t, json.Number("0"), avail)
		require.Equal(t, json.Number("0"), pending)
		require.NoError(t, b.db.CheckLedger(context.Background()))
	})
}

// TestConcurrentDuplicatePayoutsAndRefunds: the same payout (by
// Idempotency-Key) and the same refund sent 20 times at once move money once.
func TestConcurrentDuplicatePayoutsAndRefunds(t *testing.T) {
	t.Parallel()
	databases(t, func(t *testing.T, open func(t *testing.T) *store.DB) {
		b := setup(t, open, options{})
		charge := b.paidCharge("dup-refund", "100")
		var wg sync.WaitGroup
		payoutResps := make([]response, 20)
		refundResps := make([]response, len(payoutResps))
		payoutErrs := make([]error, len(payoutResps))
		refundErrs := make([]error, len(payoutResps))
		for i := range payoutResps {
			wg.Add(2)
			go func() {
				defer wg.Done()
				payoutResps[i], payoutErrs[i] = b.attempt("POST", "/api/v1/gateway/pix-payment", payout("7", "CPF", "52998224725"), "po-dup")
			}()
			go func() {
				defer wg.Done()
				refundResps[i], refundErrs[i] = b.attempt("POST", "/api/v1/gateway/refund", map[string]any{"payment_id": charge, "amount": json.Number("3")}, "rf-dup")
			}()
		}
		wg.Wait()
		payoutIDs := make([]string, len(payoutResps))
		refundIDs := make([]string, len(payoutResps))
		for i := range payoutResps {
			require.NoError(t, payoutErrs[i])
			require.Equal(t, http.StatusOK, payoutResps[i].status, string(payoutResps[i].body))
			payoutIDs[i] = payoutResps[i].json["transaction_id"].(string)
			require.NoError(t, refundErrs[i])
			require.Equal(t, http.StatusOK, refundResps[i].status, string(refundResps[i].body))
			refundIDs[i] = refundResps[i].json["refund_id"].(string)
		}
		for i := range payoutIDs {
			require.Equal(t, payoutIDs[0], payoutIDs[i])
			require.Equal(t, refundIDs[0], refundIDs[i])
		}
		avail, pending := b.balance()
		require.Equal(t, json.Number("9000"), avail, "10000 - 700 - 300: each moved once")
		require.Equal(t, json.Number("1000"), pending)
		refunds, err := b.db.Refunds(context.Background(), charge)
		require.NoError(t, err)
		require.Len(t, refunds, 1)
		require.NoError(t, b.db.CheckLedger(context.Background()))
	})
}
