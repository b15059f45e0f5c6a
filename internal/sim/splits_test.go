package sim

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/pspsim"
)

// TestPlanShares: the split rules' arithmetic, written again for the
// auditor: percents of net half up, in order, each capped at what is left.
func TestPlanShares(t *testing.T) {
	t.Parallel()
	pct := func(ps ...int64) []splitEntry {
		out := make([]splitEntry, len(ps))
		for i, p := range ps {
			out[i] = splitEntry{AccountID: "a", Percent: p}
		}
		return out
	}
	amt := func(as ...pix.Amount) []splitEntry {
		out := make([]splitEntry, len(as))
		for i, a := range as {
			out[i] = splitEntry{AccountID: "a", Amount: a}
		}
		return out
	}
	for _, c := range []struct {
		name    string
		net     pix.Amount
		entries []splitEntry
		want    []pix.Amount
	}{
		{"percents, the last capped", 9850, pct(3333, 5000, 2000), []pix.Amount{3283, 4925, 1642}},
		{"half up", 9850, pct(1000, 2500), []pix.Amount{985, 2463}},
		{"0.01 % of R$ 49.99 is 0", 4999, pct(1), []pix.Amount{0}},
		{"0.01 % of R$ 50.00 is a centavo", 5000, pct(1), []pix.Amount{1}},
		{"amounts, the later capped to 0", 9850, amt(9999, 1), []pix.Amount{9850, 0}},
		{"amounts within net", 9850, amt(100, 250), []pix.Amount{100, 250}},
		{"a fee above what was received", -5, pct(5000), []pix.Amount{0}},
	} {
		require.Equal(t, c.want, planShares(c.net, c.entries), c.name)
	}
	parts, own := proRata(2000, 9850, []pix.Amount{985, 2463})
	require.Equal(t, []pix.Amount{200, 500}, parts, "2000·985/9850 = 200, 2000·2463/9850 = 500.1 → 500")
	require.Equal(t, pix.Amount(1300), own)
	parts, own = proRata(1000, 9850, []pix.Amount{3283, 4925, 1642})
	require.Equal(t, []pix.Amount{333, 500, 167}, parts, "500.0 of 4925, 166.7 → 167 of 1642")
	require.Equal(t, pix.Amount(0), own)
	parts, own = proRata(700, 0, []pix.Amount{0})
	require.Equal(t, []pix.Amount{0}, parts)
	require.Equal(t, pix.Amount(700), own, "with no net, all from the parent")
}

// splitWorld is a consistent paid split charge: R$ 100.00 received with a
// fee of R$ 1.50 (net R$ 98.50), split 10 % and 25 % to two sub-accounts
// (R$ 9.85 and R$ 24.63, half up), refunded R$ 20.00 (R$ 2.00, R$ 5.00 and
// R$ 13.00 from the parent) and returned R$ 10.00 by MED (R$ 1.00 and
// R$ 2.50 from the receivers).
func splitWorld(t *testing.T) (books, splitFacts) {
	t.Helper()
	b := books{AccountOf: map[string]string{"p": "acc-p", "r1": "acc-r1", "r2": "acc-r2"}}
	b.Txs = []pix.Transaction{
		{ID: "ch", ClientID: "p", Type: pix.TypeCashin, Status: pix.StatusPaid, ExternalID: "c1", Amount: 10000, PaidAmount: 10000, Tax: 150},
		{ID: "s1", ClientID: "r1", Type: pix.TypeSplit, Status: pix.StatusPaid, Amount: 985, SourcePaymentID: "ch", CallbackURL: "http://r/1"},
		{ID: "s2", ClientID: "r2", Type: pix.TypeSplit, Status: pix.StatusPaid, Amount: 2463, SourcePaymentID: "ch", CallbackURL: "http://r/2"},
	}
	b.Events = []pix.Event{
		{ID: "e0", TransactionID: "ch", Type: pix.EventCashinPaid,
			Payload: `{"splits":[{"account_id":"acc-r1","amount":9.85},{"account_id":"acc-r2","amount":24.63}]}`},
		{ID: "e1", TransactionID: "s1", Type: pix.EventSplitReceived, Payload: `{"source_payment_id":"ch","value":9.85}`},
		{ID: "e2", TransactionID: "s2", Type: pix.EventSplitReceived, Payload: `{"source_payment_id":"ch","value":24.63}`},
	}
	b.Refunds = []pix.Refund{{ID: "rf", TransactionID: "ch", Amount: 2000, Status: pix.RefundCompleted}}
	b.Disputes = []pix.Dispute{{ID: "d", PaymentID: "ch", Status: pix.DisputeClosed, Outcome: pix.OutcomeReturned, ReturnedAmount: 1000}}
	paid := pix.Amount(10000)
	a1, a2 := pix.Amount(985), pix.Amount(2463)
	f := splitFacts{
		Requests: map[string][]splitEntry{"ch": {{AccountID: "acc-r1", Percent: 1000}, {AccountID: "acc-r2", Percent: 2500}}},
		Lookups: map[string]splitLookup{"ch": {Tax: 150, PaidAmount: &paid,
			Splits: []pix.SplitCredit{{AccountID: "acc-r1", Amount: &a1}, {AccountID: "acc-r2", Amount: &a2}}}},
		Statements: map[string]statementData{
			"p":  movementsOf(t, `{"transaction_id":"rf","type":"refund","amount_cents":-1300,"balance_cents":5000}`),
			"r1": movementsOf(t, `{"transaction_id":"rf","type":"refund","amount_cents":-200,"balance_cents":785}`, `{"transaction_id":"s1","type":"med_return","amount_cents":-100,"balance_cents":685}`),
			"r2": movementsOf(t, `{"transaction_id":"rf","type":"refund","amount_cents":-500,"balance_cents":1963}`, `{"transaction_id":"s2","type":"med_return","amount_cents":-250,"balance_cents":1713}`),
		},
	}
	return b, f
}

func movementsOf(t *testing.T, ms ...string) statementData {
	t.Helper()
	var s statementData
	require.NoError(t, json.Unmarshal([]byte(`{"movements":[`+strings.Join(ms, ",")+`]}`), &s))
	return s
}

// TestAuditSplits: a consistent split charge passes; each planted
// inconsistency (a wrong share, a missing split transaction, a duplicated
// pix.split.received, wrong credits in the lookup or the event, a refund
// or a MED return not taken pro rata) is found.
func TestAuditSplits(t *testing.T) {
	t.Parallel()
	b, f := splitWorld(t)
	c := checkSplitCharges(b, f)
	require.Empty(t, c.Violations)
	require.Equal(t, 1+2+3+2, c.Checked, "the charge, its two splits, the refund's three accounts, the return's two receivers")

	for _, tc := range []struct {
		name  string
		plant func(b *books, f *splitFacts)
		says  string
	}{
		{"a wrong share", func(b *books, _ *splitFacts) { b.Txs[2].Amount = 2462 }, "its share is 24.63"},
		{"a missing split transaction", func(b *books, _ *splitFacts) { b.Txs = b.Txs[:2] }, "gets 24.63, and has 0 split transactions"},
		{"a duplicated pix.split.received", func(b *books, _ *splitFacts) {
			b.Events = append(b.Events, pix.Event{ID: "e3", TransactionID: "s1", Type: pix.EventSplitReceived, Payload: b.Events[1].Payload})
		}, "has 2 pix.split.received, expected 1"},
		{"a missing pix.split.received", func(b *books, _ *splitFacts) { b.Events = b.Events[:2] }, "has 0 pix.split.received"},
		{"the lookup's credits", func(_ *books, f *splitFacts) {
			x := pix.Amount(2462)
			f.Lookups["ch"].Splits[1].Amount = &x
		}, "the lookup's splits are"},
		{"the event's credits", func(b *books, _ *splitFacts) {
			b.Events[0].Payload = `{"splits":[{"account_id":"acc-r1","amount":9.85}]}`
		}, "pix.cashin.paid e0"},
		{"a share of a receiver no split names", func(b *books, _ *splitFacts) {
			b.Txs = append(b.Txs, pix.Transaction{ID: "s9", ClientID: "p", Type: pix.TypeSplit, Status: pix.StatusPaid, Amount: 1, SourcePaymentID: "ch"})
		}, "in none of its splits"},
		{"a refund not pro rata", func(_ *books, f *splitFacts) {
			f.Statements["r1"].Movements[0].Amount = -199
		}, "its pro rata share is 2.00"},
		{"a MED return not pro rata", func(_ *books, f *splitFacts) {
			f.Statements["r2"].Movements[1].Amount = -251
		}, "its pro rata share is 2.50"},
		{"a MED share taken short with money left", func(_ *books, f *splitFacts) {
			f.Statements["r2"].Movements[1].Amount = -200
		}, "takes 2.00, its pro rata share is 2.50"},
	} {
		b, f := splitWorld(t)
		tc.plant(&b, &f)
		c := checkSplitCharges(b, f)
		require.NotEmpty(t, c.Violations, tc.name)
		require.Contains(t, strings.Join(c.Violations, "\n"), tc.says, tc.name)
	}

	// A receiver whose available did not cover its share of a MED return
	// gave all it had; the rest is its debt, which no statement shows.
	b, f = splitWorld(t)
	f.Statements["r2"].Movements[1].Amount, f.Statements["r2"].Movements[1].Balance = -200, 0
	require.Empty(t, checkSplitCharges(b, f).Violations)
}

// TestAuditBalanceSplits: a refund of a split charge goes out through
// each account's settlement pro rata, which the per-account rule of the
// balance check expects, and an account that did not give its share is
// reported.
func TestAuditBalanceSplits(t *testing.T) {
	t.Parallel()
	c985, c2463 := pix.Amount(985), pix.Amount(2463)
	b := books{
		Txs:        []pix.Transaction{{ID: "ch", ClientID: "p", Type: pix.TypeCashin, Status: pix.StatusPaid, Amount: 10000, PaidAmount: 10000, Tax: 150}},
		Refunds:    []pix.Refund{{ID: "rf", ClientID: "p", TransactionID: "ch", Amount: 2000, Status: pix.RefundCompleted}},
		Splits:     map[string][]pix.Split{"ch": {{Index: 0, ReceiverID: "r1", Credited: &c985}, {Index: 1, ReceiverID: "r2", Credited: &c2463}}},
		Settlement: map[string]pix.Amount{"p": -10000 + 1300, "r1": 200, "r2": 500},
	}
	psp := pspFacts{Pix: []pspPix{{E2E: "e", TxID: "t", Valor: 10000, Devolucoes: []pspTransfer{{ID: "rf", Valor: 2000, Status: pspsim.Devolvido}}}}}
	require.Empty(t, auditBalance(b, psp).Violations)
	b.Settlement = map[string]pix.Amount{"p": -8000, "r1": 0, "r2": 0}
	v := strings.Join(auditBalance(b, psp).Violations, "\n")
	require.Contains(t, v, "r1's settlement account is 0.00; its transactions say 2.00")
	require.Contains(t, v, "p's settlement account is -80.00; its transactions say -87.00")
}
