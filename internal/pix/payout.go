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
