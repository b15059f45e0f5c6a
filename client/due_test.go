package client_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/client"
)

// TestDueOnTheWire: a charge's due terms are written as the API reads them
// (exact numbers, nothing but what was set), and the answers' terms, the
// amount due today and its null are read back.
func TestDueOnTheWire(t *testing.T) {
	t.Parallel()
	due := client.Due{Date: "2026-12-10", DaysAfter: client.Ptr(30),
		Fine:      &client.DueFine{Percent: client.Ptr(client.Percents("2.5"))},
		Interest:  &client.DueInterest{PercentPerMonth: client.Percents("1")},
		Discounts: []client.DueDiscount{{Until: "2026-12-01", Amount: client.Ptr(client.Reais("50"))}, {Until: "2026-12-05", Amount: client.Ptr(client.Reais("20.05"))}}}
	raw, err := json.Marshal(due)
	require.NoError(t, err)
	require.JSONEq(t, `{"date":"2026-12-10","days_after":30,"fine":{"percent":2.5},"interest":{"percent_per_month":1},
		"discounts":[{"until":"2026-12-01","amount":50},{"until":"2026-12-05","amount":20.05}]}`, string(raw))
	raw, err = json.Marshal(client.Due{Date: "2026-12-10"})
	require.NoError(t, err)
	require.JSONEq(t, `{"date":"2026-12-10"}`, string(raw), "defaults are the server's")

	var tx client.Transaction
	require.NoError(t, json.Unmarshal([]byte(`{"payment_id":"p","amount":1000,"due":{"date":"2026-12-10","days_after":30,
		"fine":{"percent":2},"interest":{"percent_per_month":1}},"amount_due_today":1020.33}`), &tx))
	require.Equal(t, client.Percents("2"), *tx.Due.Fine.Percent)
	require.Equal(t, 30, *tx.Due.DaysAfter)
	require.Equal(t, client.Reais("1020.33"), *tx.AmountDueToday)
	tx = client.Transaction{}
	require.NoError(t, json.Unmarshal([]byte(`{"payment_id":"p","due":{"date":"2026-12-10","days_after":0},"amount_due_today":null}`), &tx))
	require.Nil(t, tx.AmountDueToday, "null once it can no longer be paid")
	require.Error(t, json.Unmarshal([]byte(`{"percent_per_month":1.005}`), &client.DueInterest{}), "never rounded")
	require.Panics(t, func() { client.Percents("1e2") })
}

// TestSandboxPayOnSendsTheDate: the date goes in the body.
func TestSandboxPayOnSendsTheDate(t *testing.T) {
	t.Parallel()
	var got []byte
	var path, ctype string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, _ = io.ReadAll(r.Body)
		path, ctype = r.URL.Path, r.Header.Get("Content-Type")
		_, _ = w.Write([]byte(`{"statusCode":200,"message":"Charge paid","data":{"payment_id":"p1","status":"PAID","paid_amount":1020.33}}`))
	}))
	t.Cleanup(srv.Close)
	c, err := client.New(srv.URL, "id", "secret")
	require.NoError(t, err)
	res, err := c.SandboxPayOn(t.Context(), "p1", "2026-12-11")
	require.NoError(t, err)
	require.Equal(t, "/api/v1/sandbox/charges/p1/pay", path)
	require.Equal(t, "application/json", ctype)
	require.JSONEq(t, `{"date":"2026-12-11"}`, string(got))
	require.Equal(t, client.Reais("1020.33"), *res.PaidAmount)
}
