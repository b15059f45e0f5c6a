package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/store"
)

// AttemptView is one delivery attempt as the deliveries endpoint shows it.
type AttemptView struct {
	At         string  `json:"at"`
	StatusCode *int    `json:"status_code"`
	LatencyMS  int64   `json:"latency_ms"`
	Error      *string `json:"error"`
}

// DeliveryView is one event and its delivery attempts.
type DeliveryView struct {
	EventID   string        `json:"event_id"`
	Event     string        `json:"event"`
	PaymentID string        `json:"payment_id"`
	URL       string        `json:"url"`
	Status    string        `json:"status"`
	Attempts  []AttemptView `json:"attempts"`
}

// Deliveries lists the webhook events of client c about id, and every
// attempt to deliver them. id is whatever the events are about: a
// transaction (a charge's events include its refunds'), a refund, a
// recurrence, or any subject whose events name it. Errors: EInvalid (no
// id), ENotFound (nothing of c's has that id).
func (s *Service) Deliveries(ctx context.Context, c pix.Client, id string) ([]DeliveryView, error) {
	if id == "" {
		return nil, &pix.Error{Code: pix.EInvalid, Message: "Invalid request parameters",
			Details: []pix.FieldIssue{{Field: "payment_id", Issue: "is required"}}}
	}
	events, err := s.eventsAbout(ctx, c, id)
	if err != nil {
		return nil, err
	}
	// Attempts are read by the subject the events are stored under (a
	// refund's are under its charge) and matched to them by event id.
	subject := id
	if len(events) > 0 {
		subject = events[0].TransactionID
	}
	attempts, err := s.db.Attempts(ctx, subject)
	if err != nil {
		return nil, fmt.Errorf("deliveries: %w", err)
	}
	out := make([]DeliveryView, 0, len(events))
	for _, e := range events {
		v := DeliveryView{EventID: e.ID, Event: e.Type, PaymentID: e.TransactionID, URL: e.URL, Status: e.Status, Attempts: []AttemptView{}}
		for _, a := range attempts[e.ID] {
			av := AttemptView{At: pix.FormatTime(a.At), LatencyMS: a.Latency.Milliseconds()}
			if a.StatusCode != 0 {
				code := a.StatusCode
				av.StatusCode = &code
			}
			if a.Error != "" {
				msg := a.Error
				av.Error = &msg
			}
			v.Attempts = append(v.Attempts, av)
		}
		out = append(out, v)
	}
	return out, nil
}

// eventsAbout returns client c's events about id. Events name their
// subject in transaction_id (a transaction, a recurrence, …), except a
// refund's, which are stored under its charge and name the refund in their
// body. An id of c's with no event yet gives none; an id that is none of
// c's gives ENotFound.
func (s *Service) eventsAbout(ctx context.Context, c pix.Client, id string) ([]pix.Event, error) {
	all, err := s.db.Events(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("deliveries: %w", err)
	}
	events := make([]pix.Event, 0, len(all))
	for _, e := range all {
		if e.ClientID == c.ID {
			events = append(events, e)
		}
	}
	if len(events) > 0 {
		return events, nil
	}
	switch ref, err := s.db.Refund(ctx, c.ID, id); {
	case err == nil:
		return s.refundEvents(ctx, ref)
	case !errors.Is(err, store.ErrNotFound):
		return nil, fmt.Errorf("deliveries: %w", err)
	}
	// A subject of c's that has no event yet lists none.
	_, err = s.db.Transaction(ctx, c.ID, id)
	if errors.Is(err, store.ErrNotFound) {
		_, err = s.db.Recurrence(ctx, c.ID, id)
	}
	switch {
	case errors.Is(err, store.ErrNotFound):
		return nil, pix.Errorf(pix.ENotFound, "Transaction not found")
	case err != nil:
		return nil, fmt.Errorf("deliveries: %w", err)
	}
	return nil, nil
}

// refundEvents returns the events of refund ref: those of its charge whose
// body names it.
func (s *Service) refundEvents(ctx context.Context, ref pix.Refund) ([]pix.Event, error) {
	all, err := s.db.Events(ctx, ref.TransactionID)
	if err != nil {
		return nil, fmt.Errorf("deliveries: %w", err)
	}
	var out []pix.Event
	for _, e := range all {
		var body struct {
			RefundID string `json:"refund_id"`
		}
		if err := json.Unmarshal([]byte(e.Payload), &body); err != nil {
			return nil, fmt.Errorf("deliveries: event %s: %w", e.ID, err)
		}
		if e.ClientID == ref.ClientID && body.RefundID == ref.ID {
			out = append(out, e)
		}
	}
	return out, nil
}

// RetryDelivery makes client c's event due again now; it is sent with the
// same webhook-id. Errors: ENotFound.
func (s *Service) RetryDelivery(ctx context.Context, c pix.Client, eventID string) error {
	err := s.db.Write(ctx, func(tx *store.Tx) error { return tx.RetryEvent(ctx, c.ID, eventID, s.now()) })
	if errors.Is(err, store.ErrNotFound) {
		return pix.Errorf(pix.ENotFound, "Event not found")
	}
	if err != nil {
		return fmt.Errorf("retry delivery: %w", err)
	}
	s.w.WakeDispatcher()
	return nil
}
