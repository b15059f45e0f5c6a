package pix

import (
	"encoding/json"
	"time"
)

// TimeFormat is the wire format of every date (UTC, milliseconds).
const TimeFormat = "2006-01-02T15:04:05.000Z"

// FormatTime formats t in TimeFormat.
func FormatTime(t time.Time) string { return t.UTC().Format(TimeFormat) }

// RefundEventType is the type of refund events (docs/webhooks.md, Body); other events
// carry their transaction's type, cashin or cashout.
const RefundEventType = "refund"

// EventBody is the JSON body of a transaction's webhook.
type EventBody struct {
	ID                string   `json:"id"`
	Event             string   `json:"event"`
	StatusTransaction TxStatus `json:"statusTransaction"`
	Value             Amount   `json:"value"`
	PaymentID         string   `json:"payment_id"`
	TransactionID     string   `json:"transaction_id,omitempty"`
	RefundID          string   `json:"refund_id,omitempty"`
	ExternalID        *string  `json:"external_id"`
	Type              string   `json:"type"`
	Tax               Amount   `json:"tax"`
	OccurredAt        string   `json:"occurred_at"`
	// PaidAmount and AmountMismatch are set on pix.cashin.paid: what the
	// payer paid (also Value), and whether it differs from the charge's
	// amount.
	PaidAmount     *Amount `json:"paid_amount,omitempty"`
	AmountMismatch *bool   `json:"amount_mismatch,omitempty"`
	// RecurrenceID names the recurrence of a cycle's charge or of a
	// journey-3 first payment.
	RecurrenceID string `json:"recurrence_id,omitempty"`
	// EndToEndID, TxID, PayerName and PayerDocument are set on
	// pix.cashin.paid, as lookup shows them (the payer's null when the PSP
	// did not report it).
	EndToEndID    *string   `json:"end_to_end_id,omitempty"`
	TxID          *string   `json:"txid,omitempty"`
	PayerName     *NullText `json:"payer_name,omitempty"`
	PayerDocument *NullText `json:"payer_document,omitempty"`
	// Reason says why a scheduled payout failed on its day
	// (pix.cashout.failed: "Insufficient balance"); left out otherwise.
	Reason string `json:"reason,omitempty"`
	// Splits is set on pix.cashin.paid of a split charge: what each
	// receiver was credited (docs/marketplace.md).
	Splits *[]SplitCredit `json:"splits,omitempty"`
}

// NewEventBody is the body of event (of status, value and tax) reporting a
// change of transaction t at now; refundID names the refund of a refund
// event.
func NewEventBody(id string, t Transaction, event string, status TxStatus, value, tax Amount, refundID string, now time.Time) EventBody {
	b := EventBody{ID: id, Event: event, StatusTransaction: status, Value: value, PaymentID: t.ID,
		Type: string(t.Type), Tax: tax, RefundID: refundID, OccurredAt: FormatTime(now), RecurrenceID: t.RecurrenceID}
	b.ExternalID = OrNull(t.ExternalID)
	if t.Type == TypeCashout {
		b.TransactionID = t.ID
	}
	if event == EventCashinPaid {
		paid, mismatch := t.PaidAmount, t.AmountMismatch()
		b.PaidAmount, b.AmountMismatch = &paid, &mismatch
		name, doc := NullText(t.PayerName), NullText(t.PayerDocument)
		b.EndToEndID, b.TxID, b.PayerName, b.PayerDocument = OrNull(t.EndToEndID), OrNull(t.TxID), &name, &doc
		b.Splits = t.Splits
	}
	if refundID != "" {
		// A refund event reports the refund, not the charge it returns
		// (whose id and status it still carries).
		b.Type = RefundEventType
	}
	return b
}

// NullText is a text that is JSON null when empty: a field present in an
// event whose value may be unknown.
type NullText string

// MarshalJSON implements json.Marshaler.
func (t NullText) MarshalJSON() ([]byte, error) {
	if t == "" {
		return []byte("null"), nil
	}
	return json.Marshal(string(t))
}

// OrNull is s, or nil when s is empty: an optional text the API shows as
// null.
func OrNull(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
