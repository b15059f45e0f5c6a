package httpapi_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/internal/backoffice"
	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/store"
	"github.com/pixgate/pixgate/internal/webhook"
)

func TestDeliveriesEndpoints(t *testing.T) {
	t.Parallel()
	databases(t, func(t *testing.T, open func(t *testing.T) *store.DB) {
		b := setup(t, open, options{})
		id := b.paidCharge("d-1", "10")
		r := b.do("GET", "/api/v1/webhooks/deliveries?payment_id="+id, nil)
		require.Equal(t, http.StatusOK, r.status, string(r.body))
		data := r.json["data"].([]any)
		require.Len(t, data, 1)
		d := data[0].(map[string]any)
		require.Equal(t, pix.EventCashinPaid, d["event"])
		require.Equal(t, id, d["payment_id"])
		require.Equal(t, "pending", d["status"])
		require.Equal(t, "https://merchant.example.com/webhooks/pix", d["url"])
		require.Empty(t, d["attempts"])
		eventID := d["event_id"].(string)

		r = b.do("POST", "/api/v1/webhooks/deliveries/"+eventID+"/retry", nil)
		require.Equal(t, http.StatusAccepted, r.status, string(r.body))

		require.Equal(t, http.StatusBadRequest, b.do("GET", "/api/v1/webhooks/deliveries", nil).status)
		require.Equal(t, http.StatusNotFound, b.do("GET", "/api/v1/webhooks/deliveries?payment_id=0b7c3a52-2222-4222-8222-222222222222", nil).status)
		require.Equal(t, http.StatusNotFound, b.do("POST", "/api/v1/webhooks/deliveries/evt_nope/retry", nil).status)
		other, err := b.bo.CreateClient(context.Background(), backoffice.ClientParams{Name: "o"})
		require.NoError(t, err)
		require.Equal(t, http.StatusNotFound, b.do("GET", "/api/v1/webhooks/deliveries?payment_id="+id, nil, other).status)
		require.Equal(t, http.StatusNotFound, b.do("POST", "/api/v1/webhooks/deliveries/"+eventID+"/retry", nil, other).status)
	})
}

// TestDeliveriesOfAnySubject: the deliveries endpoint lists the events of
// whatever id they are about. A recurrence's events (stored under the
// recurrence) with their attempts, before which it lists none; a refund's
// (stored under its charge) without its charge's or the other refund's,
// while the charge's list holds them all. Before, anything but a
// transaction's id answered 404.
func TestDeliveriesOfAnySubject(t *testing.T) {
	t.Parallel()
	databases(t, func(t *testing.T, open func(t *testing.T) *store.DB) {
		b := setup(t, open, options{start: spNoon(t, "2026-12-01")})
		ctx := context.Background()
		list := func(id string, cred ...backoffice.Credentials) []map[string]any {
			t.Helper()
			r := b.do("GET", "/api/v1/webhooks/deliveries?payment_id="+id, nil, cred...)
			require.Equal(t, http.StatusOK, r.status, string(r.body))
			var out []map[string]any
			for _, d := range r.json["data"].([]any) {
				out = append(out, d.(map[string]any))
			}
			return out
		}
		events := func(ds []map[string]any) []string {
			var out []string
			for _, d := range ds {
				out = append(out, d["event"].(string))
			}
			return out
		}
		other, err := b.bo.CreateClient(ctx, backoffice.ClientParams{Name: "o"})
		require.NoError(t, err)

		rec := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) }))
		t.Cleanup(rec.Close)
		body := validRecurrence("deliv-rec")
		body["postbackUrl"] = rec.URL + "/rec"
		r := b.do("POST", "/api/v1/gateway/recurrences", body)
		require.Equal(t, http.StatusCreated, r.status, string(r.body))
		recID := r.json["recurrence_id"].(string)
		require.Empty(t, list(recID), "a recurrence with no event yet lists none")
		require.Equal(t, http.StatusOK, b.do("POST", "/api/v1/sandbox/recurrences/"+recID+"/approve", nil).status)
		require.Equal(t, http.StatusOK, b.do("POST", "/api/v1/gateway/recurrences/"+recID+"/cancel", nil).status)
		// The dispatcher runs on real time: its waits for a host's slot are
		// real deadlines, and the bundle's clock starts in the past.
		disp := &webhook.Dispatcher{DB: b.db, Client: webhook.Guard{AllowPrivate: true}.Client(webhook.DefaultTimeout),
			Schedule: []time.Duration{time.Second}, Log: slog.New(slog.DiscardHandler)}
		n, err := disp.DeliverDue(ctx)
		require.NoError(t, err)
		require.Equal(t, 2, n)
		ds := list(recID)
		require.Equal(t, []string{"pix.recurrence.approved", "pix.recurrence.cancelled"}, events(ds))
		for _, d := range ds {
			require.Equal(t, recID, d["payment_id"])
			require.Equal(t, "delivered", d["status"])
			attempts := d["attempts"].([]any)
			require.Len(t, attempts, 1)
			require.Equal(t, json.Number("204"), attempts[0].(map[string]any)["status_code"])
		}
		require.Equal(t, http.StatusNotFound, b.do("GET", "/api/v1/webhooks/deliveries?payment_id="+recID, nil, other).status)

		charge := b.paidCharge("deliv-ref", "100")
		r = b.refund(map[string]any{"payment_id": charge, "amount": json.Number("30")}, "")
		require.Equal(t, http.StatusOK, r.status, string(r.body))
		first := r.json["refund_id"].(string)
		require.Empty(t, list(first), "a pending refund has no event yet")
		r = b.refund(map[string]any{"payment_id": charge, "amount": json.Number("20"), "reason": "sandbox:fail"}, "")
		require.Equal(t, http.StatusOK, r.status, string(r.body))
		second := r.json["refund_id"].(string)
		b.settle()
		ds = list(first)
		require.Equal(t, []string{"pix.refund.completed"}, events(ds))
		require.Equal(t, charge, ds[0]["payment_id"], "a refund's event is about its charge's payment")
		require.Equal(t, []string{"pix.refund.failed"}, events(list(second)))
		require.ElementsMatch(t, []string{"pix.cashin.paid", "pix.refund.completed", "pix.refund.failed"}, events(list(charge)),
			"a charge's list holds its refunds' events")
		require.Equal(t, http.StatusNotFound, b.do("GET", "/api/v1/webhooks/deliveries?payment_id="+first, nil, other).status)
	})
}
