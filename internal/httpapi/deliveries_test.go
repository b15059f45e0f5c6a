package httpapi_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/internal/gateway"
	"github.com/pixgate/pixgate/internal/store"
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
		require.Equal(t, gateway.EventCashinPaid, d["event"])
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
		other, err := b.gw.CreateClient(context.Background(), gateway.ClientParams{Name: "o"})
		require.NoError(t, err)
		require.Equal(t, http.StatusNotFound, b.do("GET", "/api/v1/webhooks/deliveries?payment_id="+id, nil, other).status)
		require.Equal(t, http.StatusNotFound, b.do("POST", "/api/v1/webhooks/deliveries/"+eventID+"/retry", nil, other).status)
	})
}
