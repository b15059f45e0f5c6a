package gateway

import (
	"context"
	"errors"
	"fmt"
	"time"

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

// Deliveries lists the webhook events of client c's transaction (charge,
// with its refunds, or payout) and every attempt to deliver them. Errors:
// EInvalid (no payment_id), ENotFound.
func (s *Service) Deliveries(ctx context.Context, c pix.Client, paymentID string) ([]DeliveryView, error) {
	if paymentID == "" {
		return nil, &pix.Error{Code: pix.EInvalid, Message: "Invalid request parameters",
			Details: []pix.FieldIssue{{Field: "payment_id", Issue: "is required"}}}
	}
	if _, err := s.db.Transaction(ctx, c.ID, paymentID); errors.Is(err, store.ErrNotFound) {
		return nil, pix.Errorf(pix.ENotFound, "Transaction not found")
	} else if err != nil {
		return nil, fmt.Errorf("deliveries: %w", err)
	}
	events, err := s.db.Events(ctx, paymentID)
	if err != nil {
		return nil, fmt.Errorf("deliveries: %w", err)
	}
	attempts, err := s.db.Attempts(ctx, paymentID)
	if err != nil {
		return nil, fmt.Errorf("deliveries: %w", err)
	}
	out := make([]DeliveryView, 0, len(events))
	for _, e := range events {
		v := DeliveryView{EventID: e.ID, Event: e.Type, PaymentID: e.TransactionID, URL: e.URL, Status: e.Status, Attempts: []AttemptView{}}
		for _, a := range attempts[e.ID] {
			av := AttemptView{At: FormatTime(a.At), LatencyMS: a.Latency.Milliseconds()}
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
	s.wake()
	return nil
}

// WebhookRotationOverlap is how long the previous webhook secret keeps
// signing beside the new one.
const WebhookRotationOverlap = 24 * time.Hour

// RotateWebhookSecret gives client clientID a new webhook secret; for 24 h
// webhooks carry signatures by both. Errors: ENotFound.
func (s *Service) RotateWebhookSecret(ctx context.Context, clientID string) (Credentials, error) {
	secret := s.NewWebhookSecret()
	err := s.db.Write(ctx, func(tx *store.Tx) error {
		return tx.SetWebhookSecret(ctx, clientID, secret, s.now().Add(WebhookRotationOverlap))
	})
	if errors.Is(err, store.ErrNotFound) {
		return Credentials{}, pix.Errorf(pix.ENotFound, "client %q not found", clientID)
	}
	if err != nil {
		return Credentials{}, fmt.Errorf("rotate webhook secret: %w", err)
	}
	return Credentials{ClientID: clientID, WebhookSecret: secret}, nil
}
