package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/internal/testkit"
)

// api sends one authenticated JSON request to a running serve.
func api(t *testing.T, addr string, c testkit.Creds, method, path string, body any) (int, map[string]any) {
	t.Helper()
	status, out, err := tryAPI(addr, c, method, path, body)
	require.NoError(t, err)
	return status, out
}

// tryAPI is api for goroutines: it returns the error instead of failing the
// test, since require may only be called from the test's goroutine.
func tryAPI(addr string, c testkit.Creds, method, path string, body any) (int, map[string]any, error) {
	var rd io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			return 0, nil, fmt.Errorf("encode body: %w", err)
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, "http://"+addr+path, rd)
	if err != nil {
		return 0, nil, fmt.Errorf("new request: %w", err)
	}
	req.Header.Set("stpi", c.ClientID)
	req.Header.Set("stps", c.ClientSecret)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out, nil
}

func charge(ext string, amount float64) map[string]any {
	return map[string]any{
		"amount": amount, "external_id": ext, "payerQuestion": "Pedido", "postbackUrl": "https://merchant.example.com/h",
		"payer": map[string]any{"name": "Maria", "document": "52998224725", "phoneNumber": "11987654321", "email": "m@example.com",
			"address": map[string]any{"street": "Rua A", "number": "1", "neighborhood": "Centro", "city": "Recife", "state": "PE", "zipCode": "50000000"}},
		"products": []any{map[string]any{"name": "X", "quantity": "1", "price": amount}},
	}
}

// TestJobsSurviveRestart: charge expiry and payout settlement live in the
// database, so work scheduled by one process is finished by the next one.
func TestJobsSurviveRestart(t *testing.T) {
	t.Parallel()
	testkit.ForEachDatabaseURL(t, func(t *testing.T, dbURL string) {
		flags := []string{"--charge-ttl", "2s", "--sandbox-payout-delay", "2s"}
		first := startServe(t, dbURL, flags...)
		c := testkit.DecodeOne(t, first.stdout.String(), testkit.ServeKeys...)

		status, body := api(t, first.addr, c, "POST", "/api/v1/gateway/request-qrcode", charge("restart-paid", 100))
		require.Equal(t, http.StatusCreated, status, "%v", body)
		paid := body["payment_id"].(string)
		status, _ = api(t, first.addr, c, "POST", "/api/v1/sandbox/charges/"+paid+"/pay", nil)
		require.Equal(t, http.StatusOK, status)
		status, body = api(t, first.addr, c, "POST", "/api/v1/gateway/request-qrcode", charge("restart-unpaid", 5))
		require.Equal(t, http.StatusCreated, status)
		unpaid := body["payment_id"].(string)
		status, body = api(t, first.addr, c, "POST", "/api/v1/gateway/pix-payment", map[string]any{
			"amount": 40, "description": "x", "callbackUrl": "https://merchant.example.com/p",
			"creditParty": map[string]any{"name": "F", "keyType": "EMAIL", "key": "f@example.com"}})
		require.Equal(t, http.StatusOK, status, "%v", body)
		payout := body["transaction_id"].(string)
		first.stop(t) // before the TTL and the payout delay pass

		time.Sleep(2500 * time.Millisecond)
		second := startServe(t, dbURL, flags...)
		require.Empty(t, second.stdout.String(), "no second sandbox client")
		// lookupBy fails through tt: the test, or the collector of a
		// condition that runs in a goroutine of its own.
		lookupBy := func(tt require.TestingT, id string) string {
			status, body, err := tryAPI(second.addr, c, "POST", "/api/v1/wallet/transaction", map[string]any{"payment_id": id})
			require.NoError(tt, err)
			require.Equal(tt, http.StatusOK, status)
			data, _ := body["data"].(map[string]any)
			st, _ := data["status"].(string)
			return st
		}
		lookup := func(id string) string { return lookupBy(t, id) }
		require.EventuallyWithT(t, func(ct *assert.CollectT) {
			assert.Equal(ct, "CANCELLED", lookupBy(ct, unpaid))
			assert.Equal(ct, "PAID", lookupBy(ct, payout))
		}, 5*time.Second, 50*time.Millisecond, "the second process finishes the first one's work")
		require.Equal(t, "PAID", lookup(paid))
		status, body = api(t, second.addr, c, "GET", "/api/v1/wallet/balance", nil)
		require.Equal(t, http.StatusOK, status)
		data := body["data"].(map[string]any)
		require.Equal(t, fmt.Sprint(6000), fmt.Sprint(data["available_cents"]), "10000 in, 4000 out")
		require.Equal(t, "0", fmt.Sprint(data["pending_cents"]))
		second.stop(t)
	})
}
