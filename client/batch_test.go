package client_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/client"
)

// TestBatchAndSchedule: the batch is sent as the API reads it (its items'
// scheduled_date included) and its answer decoded, rejected items with
// their error.
func TestBatchAndSchedule(t *testing.T) {
	t.Parallel()
	var got map[string]any
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		require.Equal(t, "/api/v1/gateway/pix-payments/batch", r.URL.Path)
		body, _ := io.ReadAll(r.Body)
		require.NoError(t, json.Unmarshal(body, &got))
		w.WriteHeader(http.StatusAccepted)
		_, _ = w.Write([]byte(`{"statusCode":202,"data":{"batch_id":"b1","external_id":"run-1","total":2,"accepted":1,"rejected":1,
			"items":[{"index":0,"external_id":"i0","transaction_id":"t0","status":"SCHEDULED","error":null},
			{"index":1,"external_id":"i1","transaction_id":null,"status":"REJECTED","error":{"statusCode":422,"message":"Insufficient balance"}}]}}`))
	}))
	t.Cleanup(srv.Close)
	c, err := client.New(srv.URL, "id", "secret")
	require.NoError(t, err)
	item := client.PayoutRequest{Amount: 100, Description: "d", CreditParty: client.CreditParty{KeyType: client.KeyEmail, Key: "a@b.co"},
		CallbackURL: "https://x.example/cb", ExternalID: "i0"}
	b, err := c.CreateBatch(t.Context(), client.BatchRequest{ExternalID: "run-1", CallbackURL: "https://x.example/cb",
		Items: []client.PayoutRequest{client.WithScheduledDate(item, "2099-01-02"), item}})
	require.NoError(t, err)
	require.Equal(t, "2099-01-02", got["items"].([]any)[0].(map[string]any)["scheduled_date"])
	require.NotContains(t, got["items"].([]any)[1].(map[string]any), "scheduled_date")
	require.Equal(t, client.StatusScheduled, b.Items[0].Status)
	require.Equal(t, &client.BatchItemError{StatusCode: 422, Message: "Insufficient balance"}, b.Items[1].Error)
	require.Empty(t, b.Items[1].TransactionID)
}

// TestCancelPayoutLostAnswer: a cancel whose first answer was lost (5xx)
// and whose retry is refused because it did cancel reads the payout back.
func TestCancelPayoutLostAnswer(t *testing.T) {
	t.Parallel()
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/api/v1/wallet/transaction":
			_, _ = w.Write([]byte(`{"statusCode":200,"message":"OK","data":{"payment_id":"t1","status":"CANCELLED","type":"cashout"}}`))
		case hits.Add(1) == 1:
			w.WriteHeader(http.StatusBadGateway)
		default:
			w.WriteHeader(http.StatusUnprocessableEntity)
			_, _ = w.Write([]byte(`{"statusCode":422,"message":"The payout was not scheduled","error":"Unprocessable Entity"}`))
		}
	}))
	t.Cleanup(srv.Close)
	c, err := client.New(srv.URL, "id", "secret", client.WithBackoff(time.Millisecond, time.Millisecond))
	require.NoError(t, err)
	res, err := c.CancelPayout(t.Context(), "t1")
	require.NoError(t, err)
	require.Equal(t, client.StatusCancelled, res.Status)
}
