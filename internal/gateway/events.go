package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/store"
)

// Event types, as docs/webhooks.md lists them (named once in pix).
const (
	EventCashinPaid      = pix.EventCashinPaid
	EventCashinCancelled = pix.EventCashinCancelled
	EventCashoutPaid     = pix.EventCashoutPaid
	EventCashoutFailed   = pix.EventCashoutFailed
	EventCashoutReversed = pix.EventCashoutReversed
	EventRefundCompleted = pix.EventRefundCompleted
	EventRefundFailed    = pix.EventRefundFailed
)

// RefundEventType is the type of refund events (docs/webhooks.md, Body); other events
// carry their transaction's type, cashin or cashout.
const RefundEventType = "refund"

// EventBody is the JSON body of a webhook.
type EventBody struct {
	ID                string       `json:"id"`
	Event             string       `json:"event"`
	StatusTransaction pix.TxStatus `json:"statusTransaction"`
	Value             pix.Amount   `json:"value"`
	PaymentID         string       `json:"payment_id"`
	TransactionID     string       `json:"transaction_id,omitempty"`
	RefundID          string       `json:"refund_id,omitempty"`
	ExternalID        *string      `json:"external_id"`
	Type              string       `json:"type"`
	Tax               pix.Amount   `json:"tax"`
	OccurredAt        string       `json:"occurred_at"`
	// PaidAmount and AmountMismatch are set on pix.cashin.paid: what the
	// payer paid (also Value), and whether it differs from the charge's
	// amount.
	PaidAmount     *pix.Amount `json:"paid_amount,omitempty"`
	AmountMismatch *bool       `json:"amount_mismatch,omitempty"`
	// RecurrenceID names the recurrence of a cycle's charge or of a
	// journey-3 first payment.
	RecurrenceID string `json:"recurrence_id,omitempty"`
	// EndToEndID, TxID, PayerName and PayerDocument are set on
	// pix.cashin.paid, as lookup shows them (the payer's null when the PSP
	// did not report it).
	EndToEndID    *string   `json:"end_to_end_id,omitempty"`
	TxID          *string   `json:"txid,omitempty"`
	PayerName     *nullText `json:"payer_name,omitempty"`
	PayerDocument *nullText `json:"payer_document,omitempty"`
}

// nullText is a text that is JSON null when empty: a field present in an
// event whose value may be unknown.
type nullText string

// MarshalJSON implements json.Marshaler.
func (t nullText) MarshalJSON() ([]byte, error) {
	if t == "" {
		return []byte("null"), nil
	}
	return json.Marshal(string(t))
}

func (s *Service) newEventID() string {
	id := s.newOrderedID()
	return "evt_" + strings.ReplaceAll(id, "-", "")
}

// emit writes an event for transaction t into the outbox, inside tx.
func (s *Service) emit(ctx context.Context, tx *store.Tx, o *outbox, t pix.Transaction, event string, status pix.TxStatus, value, tax pix.Amount, refundID string, now time.Time) error {
	e, err := s.event(t, event, status, value, tax, refundID, now)
	if err != nil {
		return err
	}
	return o.insert(ctx, tx, e)
}

// event builds the outbox event that reports a change of transaction t.
func (s *Service) event(t pix.Transaction, event string, status pix.TxStatus, value, tax pix.Amount, refundID string, now time.Time) (pix.Event, error) {
	b := EventBody{ID: s.newEventID(), Event: event, StatusTransaction: status, Value: value, PaymentID: t.ID,
		Type: string(t.Type), Tax: tax, RefundID: refundID, OccurredAt: FormatTime(now), RecurrenceID: t.RecurrenceID}
	if t.ExternalID != "" {
		ext := t.ExternalID
		b.ExternalID = &ext
	}
	if t.Type == pix.TypeCashout {
		b.TransactionID = t.ID
	}
	if event == EventCashinPaid {
		paid, mismatch := t.PaidAmount, t.AmountMismatch()
		b.PaidAmount, b.AmountMismatch = &paid, &mismatch
		name, doc := nullText(t.PayerName), nullText(t.PayerDocument)
		b.EndToEndID, b.TxID, b.PayerName, b.PayerDocument = orNull(t.EndToEndID), orNull(t.TxID), &name, &doc
	}
	if refundID != "" {
		// A refund event reports the refund, not the charge it returns
		// (whose id and status it still carries).
		b.Type = RefundEventType
	}
	payload, err := json.Marshal(b)
	if err != nil {
		return pix.Event{}, fmt.Errorf("event payload: %w", err)
	}
	return pix.Event{ID: b.ID, ClientID: t.ClientID, TransactionID: t.ID, Type: event,
		URL: t.CallbackURL, Payload: string(payload), CreatedAt: now}, nil
}
