package client_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/client"
)

// TestSplitJSON: splits go out as the API reads them (numbers, never
// floats, one of percent or amount), and a lookup's splits and a
// pix.split.received event come back.
func TestSplitJSON(t *testing.T) {
	t.Parallel()
	raw, err := json.Marshal(client.ChargeRequest{Splits: []client.Split{
		client.SplitPercent("5d7e1c2a-3b4f-4a6e-9c8d-7e6f5a4b3c2d", client.Percents("33.33")),
		client.SplitAmount("6e8f2d3b-4c5a-4b7f-8d9e-8f7a6b5c4d3e", client.Reais("5"))}})
	require.NoError(t, err)
	var got struct {
		Splits json.RawMessage `json:"splits"`
	}
	require.NoError(t, json.Unmarshal(raw, &got))
	require.JSONEq(t, `[{"account_id":"5d7e1c2a-3b4f-4a6e-9c8d-7e6f5a4b3c2d","percent":33.33},
		{"account_id":"6e8f2d3b-4c5a-4b7f-8d9e-8f7a6b5c4d3e","amount":5}]`, string(got.Splits))
	raw, err = json.Marshal(client.ChargeRequest{})
	require.NoError(t, err)
	require.NotContains(t, string(raw), "splits")

	var tx client.Transaction
	require.NoError(t, json.Unmarshal([]byte(`{"splits":[{"account_id":"a","amount":29.7},{"account_id":"b","amount":null}]}`), &tx))
	require.Equal(t, client.Reais("29.70"), *tx.Splits[0].Amount)
	require.Nil(t, tx.Splits[1].Amount)
	var e client.Event
	require.NoError(t, json.Unmarshal([]byte(`{"event":"pix.split.received","payment_id":"s","source_payment_id":"c","value":9.8}`), &e))
	require.Equal(t, client.EventSplitReceived, e.Event)
	require.Equal(t, "c", e.SourcePaymentID)
	require.Equal(t, client.Reais("9.80"), e.Value)
}
