package client

// Split is one entry of a charge's or a recurrence's splits
// (docs/marketplace.md): one of your sub-accounts (AccountID) and either a
// Percent or an Amount of what the charge brings, net of your cash-in fee.
// Build it with SplitPercent (a Percent, see Percents) or SplitAmount; all entries of a request are
// of one kind, 1 to 10 of them, each account once.
type Split struct {
	AccountID string   `json:"account_id"`
	Percent   *Percent `json:"percent,omitempty"`
	Amount    *Amount  `json:"amount,omitempty"`
}

// SplitPercent is the split of percent (greater than 0, at most 100, two
// decimals) of net to the sub-account accountID.
func SplitPercent(accountID string, percent Percent) Split {
	return Split{AccountID: accountID, Percent: &percent}
}

// SplitAmount is the split of amount of net to the sub-account accountID.
func SplitAmount(accountID string, amount Amount) Split {
	return Split{AccountID: accountID, Amount: &amount}
}

// SplitCredit is one receiver of a split charge as lookup and
// pix.cashin.paid list it: Amount is what it was credited, nil until the
// charge is paid (0 when its share was capped to nothing).
type SplitCredit struct {
	AccountID string  `json:"account_id"`
	Amount    *Amount `json:"amount"`
}
