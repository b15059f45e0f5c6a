package pix

import (
	"encoding/json"
	"fmt"
)

// Splits of a charge among accounts of its client's family
// (docs/marketplace.md): the request's entries, their checks, the
// arithmetic that shares what a paid charge brought, and the pro rata
// arithmetic that takes a refund or a MED return back.

// Limits of a charge's splits.
const (
	MaxSplits = 10
	// FullPercent is 100 % in hundredths of a percent, the unit a split's
	// percent is kept in: 10.00 % is 1000.
	FullPercent = 10_000
)

// Issues of bad splits (docs/api.md, Input rules).
const (
	IssueSplitsCount     = "must have 1 to 10 entries"
	IssueSplitAccount    = "must be the account_id of one of your sub-accounts"
	IssueSplitTwice      = "names an account already in splits"
	IssueSplitOneOf      = "must have exactly one of percent or amount"
	IssueSplitMixed      = "must all have percent or all have amount"
	IssueSplitPercent    = "must be a number greater than 0, at most 100.00, with at most two decimals"
	IssueSplitAmount     = "must be a number in reais, greater than 0, at most 1000000.00, with at most two decimals"
	IssueSplitPercentSum = "percents must sum to at most 100.00"
	IssueSplitAmountSum  = "amounts must sum to at most the charge amount"
)

// SplitRequest is one entry of a request's splits: an account_id and
// either a percent or an amount, kept as JSON text until checked so that
// no float ever holds them.
type SplitRequest struct {
	AccountID string          `json:"account_id"`
	Percent   json.RawMessage `json:"percent"`
	Amount    json.RawMessage `json:"amount"`
}

// Split is one stored entry of a charge's (or a recurrence's) splits.
type Split struct {
	Index int
	// AccountID is the receiver's account_id, ReceiverID its client id
	// ("" until resolved) and ReceiverURL its postbackUrl.
	AccountID   string
	ReceiverID  string
	ReceiverURL string
	// Percent (hundredths of a percent) or Amount: exactly one is set.
	Percent int64
	Amount  Amount
	// Credited is what the receiver got when the charge was paid, nil
	// until then; SplitID its split transaction ("" when it got nothing).
	Credited *Amount
	SplitID  string
}

// SplitCredit is one entry of a paid split charge's splits as lookup and
// pix.cashin.paid show them: the amount is null until the charge is paid.
type SplitCredit struct {
	AccountID string  `json:"account_id"`
	Amount    *Amount `json:"amount"`
}

// present reports whether a JSON field was sent with a value.
func present(raw json.RawMessage) bool { return len(raw) > 0 && string(raw) != "null" }

// ParseSplits checks a request's splits (field names the list, "splits")
// against the charge amount total: 1–10 entries, each with a canonical
// account_id sent once and exactly one of percent or amount, all of one
// kind, percents summing to at most 100, amounts to at most total. It
// returns the entries (receivers not yet resolved) and the issues.
func ParseSplits(field string, reqs []SplitRequest, total Amount) ([]Split, []FieldIssue) {
	var is []FieldIssue
	add := func(f, issue string) { is = append(is, FieldIssue{Field: f, Issue: issue}) }
	if len(reqs) < 1 || len(reqs) > MaxSplits {
		add(field, IssueSplitsCount)
		return nil, is
	}
	out := make([]Split, len(reqs))
	seen := map[string]bool{}
	var percents, amounts int
	var percentSum int64
	var amountSum Amount
	for i, r := range reqs {
		f := fmt.Sprintf("%s[%d].", field, i)
		out[i] = Split{Index: i, AccountID: r.AccountID}
		switch {
		case !CanonicalID(r.AccountID):
			add(f+"account_id", IssueSplitAccount)
		case seen[r.AccountID]:
			add(f+"account_id", IssueSplitTwice)
		}
		seen[r.AccountID] = true
		switch hasP, hasA := present(r.Percent), present(r.Amount); {
		case hasP == hasA:
			add(f+"percent", IssueSplitOneOf)
		case hasP:
			percents++
			p, err := ParseAmount(r.Percent)
			if err != nil || p > FullPercent {
				add(f+"percent", IssueSplitPercent)
				continue
			}
			out[i].Percent, percentSum = int64(p), percentSum+int64(p)
		default:
			amounts++
			a, err := ParseAmount(r.Amount)
			if err != nil {
				add(f+"amount", IssueSplitAmount)
				continue
			}
			out[i].Amount, amountSum = a, amountSum+a
		}
	}
	switch {
	case percents > 0 && amounts > 0:
		add(field, IssueSplitMixed)
	case percentSum > FullPercent:
		add(field, IssueSplitPercentSum)
	case total > 0 && amountSum > total:
		add(field, IssueSplitAmountSum)
	}
	return out, is
}

// PlanSplits shares net, what a paid charge brought its client after the
// cash-in fee, among splits in order: a percent entry gets its percent of
// net (centavos, half up), an amount entry its amount, each capped at what
// is left of net. The client keeps net minus their sum.
func PlanSplits(net Amount, splits []Split) []Amount {
	out := make([]Amount, len(splits))
	left := max(net, 0)
	for i, s := range splits {
		want := s.Amount
		if s.Amount == 0 {
			want = Amount((int64(max(net, 0))*s.Percent + FullPercent/2) / FullPercent)
		}
		out[i] = min(want, left)
		left -= out[i]
	}
	return out
}

// ProRata takes total back from accounts that were credited credited[i]
// out of net, in proportion (centavos, half up, in order, each capped at
// what is left of total); the rest is the charge's client's. With net ≤ 0
// nothing comes from the others.
func ProRata(total, net Amount, credited []Amount) []Amount {
	out := make([]Amount, len(credited))
	if net <= 0 {
		return out
	}
	left := total
	for i, c := range credited {
		// total ≤ MaxAmount and c ≤ net ≤ MaxAmount: the product fits.
		share := Amount((int64(total)*int64(c)*2 + int64(net)) / (2 * int64(net)))
		out[i] = min(share, left)
		left -= out[i]
	}
	return out
}
