package client_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/client"
	"github.com/pixgate/pixgate/webhooksig"
)

const testWebhookSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"

func signedRequest(t *testing.T, secret, id, body string) *http.Request {
	t.Helper()
	sig, err := webhooksig.Sign(secret, id, time.Now(), []byte(body))
	require.NoError(t, err)
	r := httptest.NewRequest(http.MethodPost, "/webhooks", strings.NewReader(body))
	r.Header.Set("webhook-id", id)
	r.Header.Set("webhook-timestamp", itoa(time.Now().Unix()))
	r.Header.Set("webhook-signature", sig)
	return r
}

func TestWebhookHandlerDispatch(t *testing.T) {
	var got []client.Event
	record := func(_ context.Context, e client.Event) error { got = append(got, e); return nil }
	h, err := client.WebhookHandler(testWebhookSecret, client.EventHandlers{
		OnCashinPaid:      record,
		OnRefundCompleted: func(context.Context, client.Event) error { return errors.New("db down") },
		OnOther:           record,
	})
	require.NoError(t, err)

	paid := `{"id":"evt_1","event":"pix.cashin.paid","statusTransaction":"PAID","value":10.5,` +
		`"payment_id":"6f1c2a4e-0b5d-4c8e-9a57-3d2f1e0c9b8a","external_id":"order-1234","type":"cashin",` +
		`"tax":0.35,"occurred_at":"2025-06-15T15:06:40.123Z","new_field":1}`
	w := httptest.NewRecorder()
	h.ServeHTTP(w, signedRequest(t, testWebhookSecret, "evt_1", paid))
	require.Equal(t, http.StatusNoContent, w.Code)
	require.Len(t, got, 1)
	e := got[0]
	require.Equal(t, "evt_1", e.ID)
	require.Equal(t, client.EventCashinPaid, e.Event)
	require.Equal(t, client.StatusPaid, e.StatusTransaction)
	require.Equal(t, client.Reais("10.50"), e.Value)
	require.Equal(t, client.Reais("0.35"), e.Tax)
	require.Equal(t, "order-1234", e.ExternalID)
	require.Equal(t, time.Date(2025, 6, 15, 15, 6, 40, 123e6, time.UTC), e.OccurredAt)
	require.JSONEq(t, paid, string(e.Raw))

	// An unknown event type goes to OnOther.
	w = httptest.NewRecorder()
	h.ServeHTTP(w, signedRequest(t, testWebhookSecret, "evt_2", `{"id":"evt_2","event":"pix.something.new"}`))
	require.Equal(t, http.StatusNoContent, w.Code)
	require.Len(t, got, 2)
	require.Equal(t, "pix.something.new", got[1].Event)

	// A failing handler answers 500 so that pixgate retries.
	w = httptest.NewRecorder()
	h.ServeHTTP(w, signedRequest(t, testWebhookSecret, "evt_3", `{"id":"evt_3","event":"pix.refund.completed","value":1}`))
	require.Equal(t, http.StatusInternalServerError, w.Code)

	// Wrong secret, tampered body, missing headers: 401 and no call.
	other := "whsec_" + strings.Repeat("A", 32)
	w = httptest.NewRecorder()
	h.ServeHTTP(w, signedRequest(t, other, "evt_1", paid))
	require.Equal(t, http.StatusUnauthorized, w.Code)
	r := signedRequest(t, testWebhookSecret, "evt_1", paid)
	r.Body = http.NoBody
	w = httptest.NewRecorder()
	h.ServeHTTP(w, r)
	require.Equal(t, http.StatusUnauthorized, w.Code)
	w = httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(http.MethodPost, "/", strings.NewReader(paid)))
	require.Equal(t, http.StatusUnauthorized, w.Code)
	require.Len(t, got, 2)

	// Signed but not an event: 400. Not a POST: 405. Too large: 413.
	w = httptest.NewRecorder()
	h.ServeHTTP(w, signedRequest(t, testWebhookSecret, "evt_4", `[1,2]`))
	require.Equal(t, http.StatusBadRequest, w.Code)
	w = httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/", nil))
	require.Equal(t, http.StatusMethodNotAllowed, w.Code)
	w = httptest.NewRecorder()
	h.ServeHTTP(w, signedRequest(t, testWebhookSecret, "evt_5", `{"id":"`+strings.Repeat("x", 70<<10)+`"}`))
	require.Equal(t, http.StatusRequestEntityTooLarge, w.Code)

	_, err = client.WebhookHandler("not-a-secret", client.EventHandlers{})
	require.Error(t, err)
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// TestEventNames pins the wire names of the event constants, which the
// client takes from the server's one definition.
func TestEventNames(t *testing.T) {
	t.Parallel()
	require.Equal(t, []string{"pix.cashin.paid", "pix.cashin.cancelled", "pix.cashout.paid", "pix.cashout.failed",
		"pix.cashout.reversed", "pix.refund.completed", "pix.refund.failed"},
		[]string{client.EventCashinPaid, client.EventCashinCancelled, client.EventCashoutPaid, client.EventCashoutFailed,
			client.EventCashoutReversed, client.EventRefundCompleted, client.EventRefundFailed})
}
