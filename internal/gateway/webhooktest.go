package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/pixgate/pixgate/internal/pix"
)

// EventWebhookTest is the type of the event TestWebhook sends.
const EventWebhookTest = "webhook.test"

// WebhookSender makes one signed attempt at e, now, and returns it (the
// webhook dispatcher's Send).
type WebhookSender func(ctx context.Context, e pix.Event) pix.Attempt

// WebhookTestBody is the body of a webhook.test event: it names only
// itself, as it reports no change of anything.
type WebhookTestBody struct {
	ID         string `json:"id"`
	Event      string `json:"event"`
	OccurredAt string `json:"occurred_at"`
}

// TestAttemptView is the attempt TestWebhook made, as the API shows it:
// the receiver's status code (null when no answer came), the time to its
// answer, and the class of a failure (null on a 2xx).
type TestAttemptView struct {
	StatusCode *int    `json:"status_code"`
	LatencyMS  int64   `json:"latency_ms"`
	Error      *string `json:"error"`
}

// TestWebhook sends client c one webhook.test event at rawURL, signed with
// c's webhook secrets as every event is, and returns the attempt. The event
// is not stored and never retried: it is neither in the outbox nor in the
// deliveries list. rawURL follows the rules of a postbackUrl. Errors:
// EInvalid (with details on url).
func (s *Service) TestWebhook(ctx context.Context, c pix.Client, rawURL string) (TestAttemptView, error) {
	var is issues
	is.webhookURL(s, "url", rawURL)
	if err := is.err(); err != nil {
		return TestAttemptView{}, err
	}
	if s.SendWebhook == nil {
		return TestAttemptView{}, errors.New("webhook test: no sender configured")
	}
	now := s.now()
	b := WebhookTestBody{ID: s.w.EventID(), Event: EventWebhookTest, OccurredAt: pix.FormatTime(now)}
	payload, err := json.Marshal(b)
	if err != nil {
		return TestAttemptView{}, fmt.Errorf("webhook test payload: %w", err)
	}
	a := s.SendWebhook(ctx, pix.Event{ID: b.ID, ClientID: c.ID, Type: EventWebhookTest, URL: rawURL, Payload: string(payload), CreatedAt: now})
	v := TestAttemptView{LatencyMS: a.Latency.Milliseconds()}
	if a.StatusCode != 0 {
		code := a.StatusCode
		v.StatusCode = &code
	}
	if a.Error != "" {
		msg := a.Error
		v.Error = &msg
	}
	return v, nil
}
