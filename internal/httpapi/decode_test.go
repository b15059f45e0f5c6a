package httpapi

import (
	"bytes"
	"net/http/httptest"
	"testing"

	"github.com/pixgate/pixgate/internal/gateway"
)

var payoutBody = []byte(`{"amount":125.50,"description":"Pagamento fornecedor","external_id":"po-12345",` +
	`"creditParty":{"name":"Fornecedor Ltda","keyType":"EMAIL","key":"dest@example.com"},` +
	`"callbackUrl":"https://merchant.example.com/webhooks/payout"}`)

// BenchmarkReadJSONPayout measures the strict decoding of a payout body,
// which every payout pays.
func BenchmarkReadJSONPayout(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		r := httptest.NewRequest("POST", "/api/v1/gateway/pix-payment", bytes.NewReader(payoutBody))
		r.Header.Set("Content-Type", "application/json")
		var req gateway.PayoutRequest
		if _, err := readJSON(r, &req); err != nil {
			b.Fatal(err)
		}
	}
}
