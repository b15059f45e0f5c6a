package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/webhooksig"
)

// Webhook event types (the body's event): pix.cashin.paid,
// pix.cashin.cancelled, pix.cashout.paid, pix.cashout.failed,
// pix.cashout.reversed, pix.refund.completed, pix.refund.failed and the
// recurrences' pix.recurrence.approved, pix.recurrence.rejected,
// pix.recurrence.expired, pix.recurrence.cancelled and
// pix.recurrence.charge_failed. They are the server's own names, so the
// two never drift apart.
const (
	EventCashinPaid      = pix.EventCashinPaid
	EventCashinCancelled = pix.EventCashinCancelled
	EventCashoutPaid     = pix.EventCashoutPaid
	EventCashoutFailed   = pix.EventCashoutFailed
	EventCashoutReversed = pix.EventCashoutReversed
	EventRefundCompleted = pix.EventRefundCompleted
	EventRefundFailed    = pix.EventRefundFailed

	EventRecurrenceApproved     = pix.EventRecurrenceApproved
	EventRecurrenceRejected     = pix.EventRecurrenceRejected
	EventRecurrenceExpired      = pix.EventRecurrenceExpired
	EventRecurrenceCancelled    = pix.EventRecurrenceCancelled
	EventRecurrenceChargeFailed = pix.EventRecurrenceChargeFailed
	EventRecurrenceFinished     = pix.EventRecurrenceFinished

	EventDisputeOpened = pix.EventDisputeOpened
	EventDisputeClosed = pix.EventDisputeClosed

	// EventSplitReceived reaches a sub-account's own postbackUrl when a
	// split charge of its parent paid it its share (docs/marketplace.md).
	EventSplitReceived = pix.EventSplitReceived
)

const maxWebhookBody = 64 << 10

// Event is the body of a webhook. Transaction events (pix.cashin.*,
// pix.cashout.*, pix.refund.*) fill StatusTransaction, Value and Tax;
// recurrence events (pix.recurrence.*) fill RecurrenceID, Status and, by
// event, CancelledBy or PaymentID and Attempts.
type Event struct {
	ID                string    `json:"id"` // equals webhook-id: the dedupe key
	Event             string    `json:"event"`
	StatusTransaction string    `json:"statusTransaction"`
	Value             Amount    `json:"value"` // without fee; refunds: the refunded amount
	Tax               Amount    `json:"tax"`
	PaymentID         string    `json:"payment_id"`
	ExternalID        string    `json:"external_id"`    // empty when none was given
	TransactionID     string    `json:"transaction_id"` // payouts
	RefundID          string    `json:"refund_id"`      // refund events
	Type              string    `json:"type"`           // cashin, cashout, refund
	OccurredAt        time.Time `json:"occurred_at"`
	// PaidAmount (pix.cashin.paid) is what the payer paid, also Value;
	// AmountMismatch is true when it differs from what the charge asked
	// for (for a charge with a due date: what was due on the day it was
	// paid).
	PaidAmount     *Amount `json:"paid_amount"`
	AmountMismatch bool    `json:"amount_mismatch"`
	// RecurrenceID names the recurrence of a recurrence event, and of a
	// pix.cashin.* event about a cycle charge or a first payment; empty
	// otherwise.
	RecurrenceID string `json:"recurrence_id"`
	// Status is the recurrence's status after a recurrence event
	// (RecurrenceApproved, …); CancelledBy (pix.recurrence.cancelled) says
	// who cancelled it.
	Status      string `json:"status"`
	CancelledBy string `json:"cancelled_by"`
	// Attempts (pix.recurrence.charge_failed) is how many debits of the
	// cycle charge PaymentID were tried, all failed.
	Attempts int `json:"attempts"`
	// DisputeID, Amount, Reason (pix.dispute.*), RespondBy
	// (pix.dispute.opened), Outcome and ReturnedAmount (pix.dispute.closed)
	// describe a MED dispute of the charge PaymentID (docs/med.md).
	DisputeID      string     `json:"dispute_id"`
	Amount         Amount     `json:"amount"`
	Reason         string     `json:"reason"`
	RespondBy      *time.Time `json:"respond_by"`
	Outcome        string     `json:"outcome"`
	ReturnedAmount *Amount    `json:"returned_amount"`
	// Splits (pix.cashin.paid of a split charge) is what each receiver was
	// credited; SourcePaymentID (pix.split.received) the parent's charge
	// whose share PaymentID, the receiver's split transaction, is.
	Splits          []SplitCredit `json:"splits"`
	SourcePaymentID string        `json:"source_payment_id"`
	// Raw is the verified body, byte for byte, for fields this type does not
	// know yet.
	Raw json.RawMessage `json:"-"`
}

// EventFunc handles one verified event. Returning an error answers 500, so
// pixgate delivers the event again later.
type EventFunc func(ctx context.Context, e Event) error

// EventHandlers holds a function per event type; nil ones acknowledge the
// event and do nothing. OnOther receives event types without a field here
// (new types included).
type EventHandlers struct {
	OnCashinPaid      EventFunc
	OnCashinCancelled EventFunc
	OnCashoutPaid     EventFunc
	OnCashoutFailed   EventFunc
	OnCashoutReversed EventFunc
	OnRefundCompleted EventFunc
	OnRefundFailed    EventFunc

	OnRecurrenceApproved     EventFunc
	OnRecurrenceRejected     EventFunc
	OnRecurrenceExpired      EventFunc
	OnRecurrenceCancelled    EventFunc
	OnRecurrenceChargeFailed EventFunc
	OnRecurrenceFinished     EventFunc

	OnDisputeOpened EventFunc
	OnDisputeClosed EventFunc

	OnSplitReceived EventFunc

	OnOther EventFunc
}

func (h EventHandlers) forEvent(name string) EventFunc {
	switch name {
	case EventCashinPaid:
		return h.OnCashinPaid
	case EventCashinCancelled:
		return h.OnCashinCancelled
	case EventCashoutPaid:
		return h.OnCashoutPaid
	case EventCashoutFailed:
		return h.OnCashoutFailed
	case EventCashoutReversed:
		return h.OnCashoutReversed
	case EventRefundCompleted:
		return h.OnRefundCompleted
	case EventRefundFailed:
		return h.OnRefundFailed
	case EventRecurrenceApproved:
		return h.OnRecurrenceApproved
	case EventRecurrenceRejected:
		return h.OnRecurrenceRejected
	case EventRecurrenceExpired:
		return h.OnRecurrenceExpired
	case EventRecurrenceCancelled:
		return h.OnRecurrenceCancelled
	case EventRecurrenceChargeFailed:
		return h.OnRecurrenceChargeFailed
	case EventRecurrenceFinished:
		return h.OnRecurrenceFinished
	case EventDisputeOpened:
		return h.OnDisputeOpened
	case EventDisputeClosed:
		return h.OnDisputeClosed
	case EventSplitReceived:
		return h.OnSplitReceived
	}
	return h.OnOther
}

// WebhookHandler returns an http.Handler that receives pixgate webhooks:
// it verifies the signature with webhooksig (secret is the client's
// whsec_… webhook secret; opts are webhooksig options such as
// WithAdditionalSecrets during a rotation), decodes the body into an Event
// and calls the function of its type. Answers: 204 when handled (or when no
// function is set), 401 for a bad signature, 400 for a body that is not an
// event, 405 for other methods than POST, 413 over 64 KiB, 500 when the
// function fails. Deliveries are at least once: deduplicate on Event.ID.
func WebhookHandler(secret string, h EventHandlers, opts ...webhooksig.Option) (http.Handler, error) {
	v, err := webhooksig.NewVerifier(secret, opts...)
	if err != nil {
		return nil, fmt.Errorf("client: webhook secret: %w", err)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", http.MethodPost)
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxWebhookBody))
		if err != nil {
			var tooLarge *http.MaxBytesError
			if errors.As(err, &tooLarge) {
				http.Error(w, "body too large", http.StatusRequestEntityTooLarge)
				return
			}
			http.Error(w, "reading body", http.StatusBadRequest)
			return
		}
		if err := v.Verify(r.Header, body); err != nil {
			http.Error(w, "invalid signature", http.StatusUnauthorized)
			return
		}
		var e Event
		if err := json.Unmarshal(body, &e); err != nil || e.ID == "" || e.Event == "" {
			http.Error(w, "not a pixgate event", http.StatusBadRequest)
			return
		}
		e.Raw = body
		if f := h.forEvent(e.Event); f != nil {
			if err := f(r.Context(), e); err != nil {
				http.Error(w, "handler failed", http.StatusInternalServerError)
				return
			}
		}
		w.WriteHeader(http.StatusNoContent)
	}), nil
}
