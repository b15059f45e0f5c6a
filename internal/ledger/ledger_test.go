package ledger

import (
	"math/rand/v2"
	"testing"

	"github.com/pixgate/pixgate/internal/pix"
	"github.com/stretchr/testify/require"
)

func TestPostingsBalance(t *testing.T) {
	t.Parallel()
	for _, p := range []Posting{
		CashinPaid(1000, 15), CashinPaid(1000, 0), CashinPaid(1000, 1000),
		PayoutReserved(500, 10), PayoutCompleted(500, 10), PayoutFailed(500, 10), PayoutReversed(500),
		RefundReserved(300), RefundCompleted(300), RefundFailed(300), PayoutReserved(500, 0),
	} {
		require.NoError(t, p.Validate(), p.Kind)
	}
	require.ErrorIs(t, Posting{Kind: "x", Entries: []Entry{{Available, 1}, {Fees, 2}}}.Validate(), ErrUnbalanced)
	require.Error(t, Posting{Kind: "x", Entries: []Entry{{Available, 1}}}.Validate())
	require.Error(t, Posting{Kind: "x", Entries: []Entry{{Available, 0}, {Fees, 0}}}.Validate())
}

func TestCashinPaidEntries(t *testing.T) {
	t.Parallel()
	require.Equal(t, []Entry{{Settlement, -1000}, {Available, 985}, {Fees, 15}}, CashinPaid(1000, 15).Entries)
	require.Equal(t, []Entry{{Settlement, -1000}, {Available, 1000}}, CashinPaid(1000, 0).Entries)
}

func TestApplyRefusesOverdraft(t *testing.T) {
	t.Parallel()
	b := Balances{}
	_, err := b.Apply(PayoutReserved(1, 0))
	require.Error(t, err)
	b, err = b.Apply(CashinPaid(100, 0))
	require.NoError(t, err)
	b, err = b.Apply(PayoutReserved(90, 10))
	require.NoError(t, err)
	require.Equal(t, pix.Amount(0), b[Available])
	require.Equal(t, pix.Amount(100), b[Pending])
	require.Equal(t, pix.Amount(0), b.Sum())
}

// TestRandomOperations is the pure property test: thousands of random
// movements, applied only when allowed, keep the sum at zero and the
// merchant's accounts non-negative.
func TestRandomOperations(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(1, 2))
	b := Balances{}
	type hold struct{ amount, tax pix.Amount }
	var payouts []hold
	var refunds []pix.Amount
	for i := 0; i < 20000; i++ {
		var p Posting
		amount := pix.Amount(1 + r.IntN(100000))
		switch op := r.IntN(7); {
		case op == 0:
			p = CashinPaid(amount, pix.Amount(r.Int64N(int64(amount)+1)))
		case op == 1:
			p = PayoutReserved(amount, pix.Amount(r.IntN(500)))
		case op == 2 && len(payouts) > 0:
			h := payouts[len(payouts)-1]
			payouts = payouts[:len(payouts)-1]
			p = PayoutCompleted(h.amount, h.tax)
		case op == 3 && len(payouts) > 0:
			h := payouts[len(payouts)-1]
			payouts = payouts[:len(payouts)-1]
			p = PayoutFailed(h.amount, h.tax)
		case op == 4:
			p = RefundReserved(amount)
		case op == 5 && len(refunds) > 0:
			a := refunds[len(refunds)-1]
			refunds = refunds[:len(refunds)-1]
			p = RefundCompleted(a)
		default:
			continue
		}
		next, err := b.Apply(p)
		if err != nil {
			require.Less(t, b[Available]+p.Entries[0].Amount, pix.Amount(0), "only overdrafts may be refused: %v", err)
			continue
		}
		b = next
		switch p.Kind {
		case "cashout.reserved":
			// The whole reservation is settled later as amount+tax.
			payouts = append(payouts, hold{amount: p.Entries[1].Amount})
		case "refund.reserved":
			refunds = append(refunds, p.Entries[1].Amount)
		}
		require.Equal(t, pix.Amount(0), b.Sum())
		require.GreaterOrEqual(t, b[Available], pix.Amount(0))
		require.GreaterOrEqual(t, b[Pending], pix.Amount(0))
	}
}

// TestMEDPostings: every MED posting balances, keeps blocked ≥ 0 and debt
// ≤ 0, and a return's parts never exceed it.
func TestMEDPostings(t *testing.T) {
	t.Parallel()
	b := Balances{Available: 1000, Settlement: -1000}
	b, err := b.Apply(DisputeBlocked(600))
	require.NoError(t, err)
	require.Equal(t, Balances{Available: 400, Blocked: 600, Settlement: -1000}, b)
	_, err = b.Apply(DisputeBlocked(401))
	require.Error(t, err, "a block takes only what is available")
	_, err = b.Apply(DisputeReleased(601))
	require.Error(t, err, "a release gives back only what is blocked")

	// A return of 1200: 600 from the block, 400 from available, 200 owed.
	from, avail, debt := PlanReturn(1200, b[Blocked], b[Available])
	require.Equal(t, [3]pix.Amount{600, 400, 200}, [3]pix.Amount{from, avail, debt})
	p, err := MedReturned(1200, from, avail)
	require.NoError(t, err)
	require.NoError(t, p.Validate())
	b, err = b.Apply(p)
	require.NoError(t, err)
	require.Equal(t, Balances{Available: 0, Blocked: 0, Debt: -200, Settlement: 200}, b)
	require.Zero(t, b.Sum())

	_, err = MedReturned(100, 60, 50)
	require.Error(t, err, "parts above the return")
	_, err = MedReturned(100, -1, 0)
	require.Error(t, err)
	_, err = MedReturned(0, 0, 0)
	require.Error(t, err)

	// A credit of 500 net pays the 200 owed first.
	b, err = b.Apply(CashinPaid(500, 0))
	require.NoError(t, err)
	b, err = b.Apply(DebtPaid(200))
	require.NoError(t, err)
	require.Equal(t, Balances{Available: 300, Blocked: 0, Debt: 0, Settlement: -300}, b)
	_, err = b.Apply(DebtPaid(1))
	require.Error(t, err, "a debt is never paid beyond zero")
}

// TestPlanCredit: a credit pays the debt, then fills blocks, then is
// available; each part capped by what is owed.
func TestPlanCredit(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ net, owed, unfilled, pay, fill, rest pix.Amount }{
		{1000, 0, 0, 0, 0, 1000},
		{1000, 300, 0, 300, 0, 700},
		{1000, 300, 500, 300, 500, 200},
		{1000, 300, 900, 300, 700, 0},
		{200, 300, 900, 200, 0, 0},
		{0, 300, 900, 0, 0, 0},
		{500, 0, 500, 0, 500, 0},
	} {
		pay, fill, rest := PlanCredit(tc.net, tc.owed, tc.unfilled)
		require.Equal(t, [3]pix.Amount{tc.pay, tc.fill, tc.rest}, [3]pix.Amount{pay, fill, rest}, "%+v", tc)
	}
	for _, tc := range []struct{ returned, blocked, avail, fromB, fromA, debt pix.Amount }{
		{500, 500, 0, 500, 0, 0},
		{500, 800, 0, 500, 0, 0},
		{500, 200, 100, 200, 100, 200},
		{500, 0, 1000, 0, 500, 0},
	} {
		b, a, d := PlanReturn(tc.returned, tc.blocked, tc.avail)
		require.Equal(t, [3]pix.Amount{tc.fromB, tc.fromA, tc.debt}, [3]pix.Amount{b, a, d}, "%+v", tc)
	}
}

// TestTransferPostings: a transfer's two sides each balance, move the
// sender's available to the receiver's, and leave the family's clearing
// summing to zero; a sender short of the amount is refused.
func TestTransferPostings(t *testing.T) {
	t.Parallel()
	out, in := TransferOut(700), TransferIn(700)
	require.NoError(t, out.Validate())
	require.NoError(t, in.Validate())
	require.Equal(t, pix.Amount(-700), out.Available())
	require.Equal(t, pix.Amount(700), in.Available())
	sender, err := Balances{Available: 1000}.Apply(out)
	require.NoError(t, err)
	receiver, err := Balances{Available: 50}.Apply(in)
	require.NoError(t, err)
	require.Equal(t, pix.Amount(300), sender[Available])
	require.Equal(t, pix.Amount(750), receiver[Available])
	require.Zero(t, sender[Clearing]+receiver[Clearing])
	require.Equal(t, pix.Amount(1050), sender[Available]+receiver[Available])
	_, err = Balances{Available: 699}.Apply(out)
	require.Error(t, err)
	require.False(t, NonNegative(Clearing) || NonPositive(Clearing), "clearing holds either sign")
}
