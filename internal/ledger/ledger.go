// Package ledger owns the double-entry rules of pixgate: the accounts each
// client has, the postings each money movement makes, and the invariants
// (every posting sums to zero; available and pending never go below zero).
// It is pure: storage applies the postings it builds.
package ledger

import (
	"errors"
	"fmt"

	"github.com/pixgate/pixgate/internal/pix"
)

// Kind names one of a client's accounts.
type Kind string

// The accounts every client has. Available and pending belong to the
// merchant and can never be negative; settlement mirrors money that crossed
// the PIX network (it goes negative when money comes in) and fees collects
// what pixgate charged.
const (
	Available  Kind = "available"
	Pending    Kind = "pending"
	Settlement Kind = "settlement"
	Fees       Kind = "fees"
	// Suspense is the house's account for money the PSP received that no
	// open charge takes (an unmatched receipt), until it is returned.
	Suspense Kind = "suspense"
	// Blocked is the merchant's money held by open MED disputes; never
	// negative.
	Blocked Kind = "blocked"
	// Debt is what the merchant owes after a MED return its balance could
	// not cover: a receivable, so, like settlement, it holds the house's
	// claim as a negative balance, and is never positive. Later credits
	// pay it first.
	Debt Kind = "debt"
	// Clearing holds what a client of a family (a parent and its
	// sub-accounts) has moved to the family's other accounts by transfer,
	// less what it received from them: money that never crossed the PIX
	// network, so settlement does not see it. A client's clearing is
	// positive when it sent more than it received; the family's clearing
	// accounts always sum to zero (docs/decisions.md).
	Clearing Kind = "clearing"
)

// Kinds lists the account kinds every client has, in a fixed order (the
// house has settlement and suspense).
var Kinds = [...]Kind{Available, Pending, Settlement, Fees}

// MEDKinds are the accounts a client has once MED first touches it (its
// first dispute): opened then, so that the many clients never disputed
// carry none.
var MEDKinds = [...]Kind{Blocked, Debt}

// TransferKinds are the accounts a client has once it first sends or
// receives a transfer: opened then, like MEDKinds.
var TransferKinds = [...]Kind{Clearing}

// NonNegative reports whether an account of kind k must never go below zero.
func NonNegative(k Kind) bool { return k == Available || k == Pending || k == Suspense || k == Blocked }

// NonPositive reports whether an account of kind k must never go above zero.
func NonPositive(k Kind) bool { return k == Debt }

// Entry moves Amount (signed centavos) into one account of the client.
type Entry struct {
	Account Kind
	Amount  pix.Amount
}

// Posting is one balanced movement: its entries sum to zero.
type Posting struct {
	Kind    string // what happened, e.g. "cashin.paid"
	Entries []Entry
	// Fee is the part of the posting's Available entry that is a fee
	// (negative when charged, positive when returned): a statement shows
	// it as a movement of its own beside the principal.
	Fee pix.Amount
}

// ErrUnbalanced is returned by Validate for a posting whose entries do not sum to zero.
var ErrUnbalanced = errors.New("ledger: posting does not balance")

// Validate checks that the posting has entries, none of them zero, and that
// they sum to zero.
func (p Posting) Validate() error {
	if len(p.Entries) < 2 {
		return fmt.Errorf("ledger: posting %q has %d entries", p.Kind, len(p.Entries))
	}
	var sum pix.Amount
	for _, e := range p.Entries {
		if e.Amount == 0 {
			return fmt.Errorf("ledger: posting %q has a zero entry on %s", p.Kind, e.Account)
		}
		sum += e.Amount
	}
	if sum != 0 {
		return fmt.Errorf("%w: %q sums to %d", ErrUnbalanced, p.Kind, sum)
	}
	return nil
}

// build drops zero entries (a zero fee, say) and returns the posting.
func build(kind string, entries ...Entry) Posting {
	out := make([]Entry, 0, len(entries))
	for _, e := range entries {
		if e.Amount != 0 {
			out = append(out, e)
		}
	}
	return Posting{Kind: kind, Entries: out}
}

// withFee returns p with fee as the fee part of its Available entry, or p
// unchanged when p has no Available entry (a fee that took the whole amount).
func (p Posting) withFee(fee pix.Amount) Posting {
	if p.Available() != 0 {
		p.Fee = fee
	}
	return p
}

// Available is the posting's entry on the Available account (0 if none).
func (p Posting) Available() pix.Amount {
	var a pix.Amount
	for _, e := range p.Entries {
		if e.Account == Available {
			a += e.Amount
		}
	}
	return a
}

// CashinPaid credits a paid charge: the amount arrives from the PIX network,
// the fee goes to fees, the rest to available. fee must be ≤ amount.
func CashinPaid(amount, fee pix.Amount) Posting {
	return build("cashin.paid",
		Entry{Settlement, -amount},
		Entry{Available, amount - fee},
		Entry{Fees, fee}).withFee(-fee)
}

// PayoutReserved holds amount+tax of a new payout: available → pending.
func PayoutReserved(amount, tax pix.Amount) Posting {
	return build("cashout.reserved", Entry{Available, -(amount + tax)}, Entry{Pending, amount + tax}).withFee(-tax)
}

// PayoutCompleted settles a payout: the amount leaves through the PIX
// network and the tax becomes revenue.
func PayoutCompleted(amount, tax pix.Amount) Posting {
	return build("cashout.completed", Entry{Pending, -(amount + tax)}, Entry{Settlement, amount}, Entry{Fees, tax})
}

// PayoutFailed releases a failed payout: amount and tax return to available.
func PayoutFailed(amount, tax pix.Amount) Posting {
	return build("cashout.failed", Entry{Pending, -(amount + tax)}, Entry{Available, amount + tax}).withFee(tax)
}

// PayoutReversed returns a completed payout's amount (not its tax).
func PayoutReversed(amount pix.Amount) Posting {
	return build("cashout.reversed", Entry{Settlement, -amount}, Entry{Available, amount})
}

// RefundReserved holds a refund's amount: available → pending.
func RefundReserved(amount pix.Amount) Posting {
	return build("refund.reserved", Entry{Available, -amount}, Entry{Pending, amount})
}

// RefundCompleted sends a refund out through the PIX network.
func RefundCompleted(amount pix.Amount) Posting {
	return build("refund.completed", Entry{Pending, -amount}, Entry{Settlement, amount})
}

// RefundFailed releases a failed refund back to available.
func RefundFailed(amount pix.Amount) Posting {
	return build("refund.failed", Entry{Pending, -amount}, Entry{Available, amount})
}

// UnmatchedReceived records money the PSP received that no open charge
// takes: it arrives from the PIX network into the house's suspense account.
func UnmatchedReceived(amount pix.Amount) Posting {
	return build("unmatched.received", Entry{Settlement, -amount}, Entry{Suspense, amount})
}

// UnmatchedReturned sends an unmatched receipt back to its payer.
func UnmatchedReturned(amount pix.Amount) Posting {
	return build("unmatched.returned", Entry{Suspense, -amount}, Entry{Settlement, amount})
}

// DisputeBlocked holds b of the merchant's available money for a MED
// dispute.
func DisputeBlocked(b pix.Amount) Posting {
	return build("dispute.block", Entry{Available, -b}, Entry{Blocked, b})
}

// DisputeReleased returns b of a dispute's block to available.
func DisputeReleased(b pix.Amount) Posting {
	return build("dispute.release", Entry{Blocked, -b}, Entry{Available, b})
}

// MedReturned sends a MED return of returned out through the PIX network,
// fromBlocked of it out of the dispute's block and fromAvailable out of
// available; what they do not cover becomes the merchant's debt. Errors:
// a negative part, or parts above returned.
func MedReturned(returned, fromBlocked, fromAvailable pix.Amount) (Posting, error) {
	if returned <= 0 || fromBlocked < 0 || fromAvailable < 0 || fromBlocked+fromAvailable > returned {
		return Posting{}, fmt.Errorf("ledger: a MED return of %d cannot take %d blocked and %d available", returned, fromBlocked, fromAvailable)
	}
	debt := returned - fromBlocked - fromAvailable
	return build("med.return", Entry{Settlement, returned}, Entry{Blocked, -fromBlocked}, Entry{Available, -fromAvailable},
		Entry{Debt, -debt}), nil
}

// DebtPaid pays p of the merchant's debt out of available.
func DebtPaid(p pix.Amount) Posting {
	return build("debt.payment", Entry{Available, -p}, Entry{Debt, p})
}

// TransferOut is the sender's side of a transfer of amount to another
// account of its family: it leaves available into the sender's clearing.
func TransferOut(amount pix.Amount) Posting {
	return build("transfer.out", Entry{Available, -amount}, Entry{Clearing, amount})
}

// TransferIn is the receiver's side of a transfer of amount: it comes out
// of the receiver's clearing into available. With TransferOut of the same
// amount, the family's clearing sums to what it did before.
func TransferIn(amount pix.Amount) Posting {
	return build("transfer.in", Entry{Clearing, -amount}, Entry{Available, amount})
}

// SplitOut is the parent's side of a split of a paid charge: the
// receiver's share leaves the parent's available into its clearing, as a
// transfer's does.
func SplitOut(share pix.Amount) Posting {
	return build("split.out", Entry{Available, -share}, Entry{Clearing, share})
}

// SplitIn is a receiver's side of a split: its share comes out of its
// clearing into available. With SplitOut of the same share, the family's
// clearing sums to what it did before.
func SplitIn(share pix.Amount) Posting {
	return build("split.in", Entry{Clearing, -share}, Entry{Available, share})
}

// PlanCredit splits net, a credit to a merchant (net of its fee), between
// its debt (owed, ≥ 0), its disputes' unfilled blocks (unfilled) and its
// available balance, in that order.
func PlanCredit(net, owed, unfilled pix.Amount) (payDebt, fillBlock, rest pix.Amount) {
	payDebt = max(0, min(net, owed))
	fillBlock = max(0, min(net-payDebt, unfilled))
	return payDebt, fillBlock, net - payDebt - fillBlock
}

// PlanReturn splits a MED return of returned between the dispute's block
// (blocked), the merchant's available balance and, for what both do not
// cover, its debt.
func PlanReturn(returned, blocked, available pix.Amount) (fromBlocked, fromAvailable, debt pix.Amount) {
	fromBlocked = max(0, min(returned, blocked))
	fromAvailable = max(0, min(returned-fromBlocked, available))
	return fromBlocked, fromAvailable, returned - fromBlocked - fromAvailable
}

// Balances is one client's account balances.
type Balances map[Kind]pix.Amount

// Apply returns the balances after p, or an error if p is unbalanced or
// would take a non-negative account below zero. b is not modified.
func (b Balances) Apply(p Posting) (Balances, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	out := make(Balances, len(Kinds))
	for k, v := range b {
		out[k] = v
	}
	for _, e := range p.Entries {
		out[e.Account] += e.Amount
		if (NonNegative(e.Account) && out[e.Account] < 0) || (NonPositive(e.Account) && out[e.Account] > 0) {
			return nil, fmt.Errorf("ledger: %s would go to %d", e.Account, out[e.Account])
		}
	}
	return out, nil
}

// Sum returns the sum of all balances; it is zero for a consistent ledger.
func (b Balances) Sum() pix.Amount {
	var s pix.Amount
	for _, v := range b {
		s += v
	}
	return s
}
