package pix

import (
	"encoding/json"
	"fmt"
	"strings"
)

// CreditParty is a payout's beneficiary.
type CreditParty struct {
	Name    string `json:"name"`
	KeyType string `json:"keyType"`
	Key     string `json:"key"`
}

// PayoutDetails is what a payout keeps of its request besides money (the
// details column of its transaction).
type PayoutDetails struct {
	Description string      `json:"description"`
	CreditParty CreditParty `json:"creditParty"`
	// ScheduledDate is the São Paulo date a scheduled payout is reserved
	// and sent on; "" for a payout sent at once.
	ScheduledDate string `json:"scheduled_date,omitempty"`
}

// ParsePayoutDetails reads the details of payout t, its key type in upper
// case.
func ParsePayoutDetails(t Transaction) (PayoutDetails, error) {
	var d PayoutDetails
	if err := json.Unmarshal([]byte(t.Details), &d); err != nil {
		return d, fmt.Errorf("payout %s details: %w", t.ID, err)
	}
	d.CreditParty.KeyType = strings.ToUpper(d.CreditParty.KeyType)
	return d, nil
}

// Statuses the API shows of payouts beyond the stored ones: a scheduled
// payout before its day (stored PENDING, SendScheduled), and a batch item
// that was refused (it has no transaction).
const (
	StatusScheduled TxStatus = "SCHEDULED"
	StatusRejected  TxStatus = "REJECTED"
)

// Scheduled reports whether payout t waits for its scheduled day: stored
// PENDING with nothing reserved.
func (t Transaction) Scheduled() bool {
	return t.Status == StatusPending && t.SendState == SendScheduled
}

// ScheduledDate is the São Paulo date payout t was scheduled for, "" for
// one sent at once. Only a scheduled payout's details hold the field, so
// every other row is answered without decoding them.
func (t Transaction) ScheduledDate() string {
	if t.Type != TypeCashout || !strings.Contains(t.Details, `"scheduled_date"`) {
		return ""
	}
	var d struct {
		ScheduledDate string `json:"scheduled_date"`
	}
	if json.Unmarshal([]byte(t.Details), &d) != nil {
		return ""
	}
	return d.ScheduledDate
}
