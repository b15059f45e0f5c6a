package testkit_test

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/internal/testkit"
)

// apiDocument reads the API's OpenAPI document from its source file (not via
// package httpapi, so these tests do not depend on that package compiling).
func apiDocument(t testing.TB) []byte {
	t.Helper()
	doc, err := os.ReadFile(filepath.Join("..", "httpapi", "openapi.yaml"))
	require.NoError(t, err)
	return doc
}

// recorder is a testing.TB that records failures instead of failing the real
// test, so tests can assert that a check fails.
type recorder struct {
	testing.TB
	mu       sync.Mutex
	failures []string
}

func (r *recorder) Helper() {}

func (r *recorder) record(msg string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.failures = append(r.failures, msg)
}

func (r *recorder) Errorf(format string, args ...any) { r.record(fmt.Sprintf(format, args...)) }
func (r *recorder) Error(args ...any)                 { r.record(fmt.Sprint(args...)) }
func (r *recorder) Fatalf(format string, args ...any) { r.record(fmt.Sprintf(format, args...)) }
func (r *recorder) Fatal(args ...any)                 { r.record(fmt.Sprint(args...)) }
func (r *recorder) Fail()                             { r.record("Fail") }
func (r *recorder) FailNow()                          { r.record("FailNow") }

func (r *recorder) Failed() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.failures) > 0
}

func (r *recorder) String() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return strings.Join(r.failures, "\n---\n")
}

func TestOpenAPIDocumentLoads(t *testing.T) {
	t.Parallel()
	r := &recorder{TB: t}
	require.NotNil(t, testkit.NewOpenAPI(r, apiDocument(t)))
	require.False(t, r.Failed(), r.String())
}

func TestOpenAPINewRejectsInvalidDocument(t *testing.T) {
	t.Parallel()
	for name, doc := range map[string]string{
		"not yaml": "openapi: [",
		"bad example": strings.Replace(string(apiDocument(t)),
			"data: {available_cents: 152075,", "data: {available_cents: 1520.75,", 1),
		"response without description": `
openapi: 3.1.0
info: {title: t, version: "1"}
paths:
  /x:
    get:
      responses:
        "200": {}
`,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			r := &recorder{TB: t}
			require.Nil(t, testkit.NewOpenAPI(r, []byte(doc)))
			require.True(t, r.Failed())
		})
	}
}

// TestOpenAPIDocumentRules guards rules of the document that Check relies on
// or that the API promises on every path.
func TestOpenAPIDocumentRules(t *testing.T) {
	t.Parallel()
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(apiDocument(t))
	require.NoError(t, err)
	require.Equal(t, "3.1.0", doc.OpenAPI)

	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			name := method + " " + path
			require.Nil(t, op.Responses.Default(), "%s: a default response would let undocumented statuses pass", name)
			for status, resp := range op.Responses.Map() {
				require.NotNil(t, resp.Value.Headers["X-Request-Id"], "%s %s: X-Request-Id", name, status)
			}
			if !strings.HasPrefix(path, "/api/v1/") {
				continue
			}
			security := doc.Security
			if op.Security != nil {
				security = *op.Security
			}
			require.Len(t, security, 1, name)
			require.Contains(t, security[0], "stpi", name)
			require.Contains(t, security[0], "stps", name)
			for _, status := range []int{401, 429, 500} {
				require.NotNil(t, op.Responses.Status(status), "%s: %d", name, status)
			}
			for status, resp := range op.Responses.Map() {
				for _, h := range []string{"X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset"} {
					require.NotNil(t, resp.Value.Headers[h], "%s %s: %s", name, status, h)
				}
			}
			require.NotNil(t, op.Responses.Status(429).Value.Headers["Retry-After"], name)
		}
	}
}

const (
	uuid1 = "3f1c2a9e-7b4d-4c21-9a6e-2d8f5b7c1e04"
	uuid2 = "9b2e4f6a-1c3d-4e5f-8a7b-6c5d4e3f2a1b"

	validCharge = `{"payment_id":"` + uuid1 + `","external_id":"order-1","amount":0.07,` +
		`"qrcode":"00020126580014br.gov.bcb.pix01367d9f0335-8dcc-4054-9bf9-0dbd61d36906520400005303986540510.505802BR5915PIXGATE SANDBOX6009SAO PAULO62290525Ab12Cd34Ef56Gh78Ij90Kl12M6304103B",` +
		`"qrcode_image":"iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAAAAAA6fptVAAAACklEQVR4nGNgAAAAAgABSK+kcQAAAABJRU5ErkJggg==",` +
		`"status":"PENDING","expires_at":"2025-02-01T13:45:00.000Z"}`
	validTransaction = `{"payment_id":"` + uuid1 + `","external_id":"order-1","type":"cashin","status":"PAID",` +
		`"amount":1000000,"tax":0.29,"refunded_amount":1.15,"created_at":"2025-01-31T13:45:00.000Z",` +
		`"confirmed_date":"2025-01-31T13:47:12.345Z","paid_amount":1000000,"amount_mismatch":false,` +
		`"end_to_end_id":"E00000000202501311347abcdef01234","txid":"pixgate0000000000000000001","payer_name":"Maria Souza","payer_document":"***.247.250-**"}`
	pendingPayoutTransaction = `{"payment_id":"` + uuid2 + `","external_id":null,"type":"cashout","status":"PENDING",` +
		`"amount":25,"tax":0,"refunded_amount":0,"created_at":"2025-01-31T13:45:00.000Z","confirmed_date":null,"paid_amount":null,` +
		`"end_to_end_id":null,"txid":null,"payer_name":null,"payer_document":null}`
	validBalance = `{"statusCode":200,"message":"Saldo consultado com sucesso.",` +
		`"data":{"available_cents":152075,"currency":"BRL","pending_cents":0,"blocked_cents":0,"debt_cents":0},"timestamp":"2025-01-31T10:45:00.000-03:00"}`
	gateway401 = `{"statusCode":401,"message":"Invalid credentials","error":"Unauthorized"}`
	wallet401  = `{"statusCode":401,"message":"Falha na autenticação."}`
	body429    = `{"statusCode":429,"message":"Rate limit exceeded","error":"Too Many Requests","retryAfter":60}`
)

// fake is one canned response of the fake server.
type fake struct {
	status      int
	contentType string            // "" means application/json; "-" means no Content-Type at all
	headers     map[string]string // set on top of the standard headers; "" deletes one
	body        string
}

func (f fake) serve(w http.ResponseWriter, _ *http.Request) {
	h := w.Header()
	h.Set("X-Request-Id", "req-1")
	h.Set("X-RateLimit-Limit", "100")
	h.Set("X-RateLimit-Remaining", "99")
	h.Set("X-RateLimit-Reset", "0")
	switch f.contentType {
	case "":
		h.Set("Content-Type", "application/json")
	case "-":
		h["Content-Type"] = nil // no sniffing either
	default:
		h.Set("Content-Type", f.contentType)
	}
	for k, v := range f.headers {
		if v == "" {
			h.Del(k)
		} else {
			h.Set(k, v)
		}
	}
	w.WriteHeader(f.status)
	_, _ = io.WriteString(w, f.body)
}

func TestOpenAPICheck(t *testing.T) {
	t.Parallel()
	doc := apiDocument(t)
	api := testkit.NewOpenAPI(t, doc)

	withField := func(body, field string) string { return strings.TrimSuffix(body, "}") + "," + field + "}" }
	for _, tc := range []struct {
		name         string
		method, path string
		fake         fake
		ok           bool
	}{
		// Conforming responses pass.
		{"healthz", "GET", "/healthz", fake{status: 200, body: `{"status":"ok"}`}, true},
		{"readyz unavailable", "GET", "/readyz", fake{status: 503, body: `{"status":"unavailable"}`}, true},
		{"openapi document", "GET", "/openapi.yaml", fake{status: 200, contentType: "application/yaml", body: string(doc)}, true},
		{"charge", "POST", "/api/v1/gateway/request-qrcode", fake{status: 201, body: validCharge}, true},
		{"charge replayed", "POST", "/api/v1/gateway/request-qrcode",
			fake{status: 201, headers: map[string]string{"Idempotent-Replayed": "true"}, body: validCharge}, true},
		{"charge json charset", "POST", "/api/v1/gateway/request-qrcode",
			fake{status: 201, contentType: "application/json; charset=utf-8", body: validCharge}, true},
		{"charge 400 with details", "POST", "/api/v1/gateway/request-qrcode", fake{status: 400,
			body: `{"statusCode":400,"message":"Invalid request parameters","error":"Bad Request","details":[{"field":"payer.document","issue":"invalid"}]}`}, true},
		{"payout without external_id", "POST", "/api/v1/gateway/pix-payment", fake{status: 200,
			body: `{"statusCode":200,"transaction_id":"` + uuid2 + `","external_id":null,"amount":999999.99,"tax":0.07,"status":"PENDING"}`}, true},
		{"payout 422", "POST", "/api/v1/gateway/pix-payment", fake{status: 422,
			body: `{"statusCode":422,"message":"Insufficient balance","error":"Unprocessable Entity"}`}, true},
		{"payout 401", "POST", "/api/v1/gateway/pix-payment", fake{status: 401, body: gateway401}, true},
		{"refund", "POST", "/api/v1/gateway/refund", fake{status: 200,
			body: `{"statusCode":200,"refund_id":"` + uuid2 + `","payment_id":"` + uuid1 + `","amount":5.25,"status":"PENDING"}`}, true},
		{"balance", "GET", "/api/v1/wallet/balance", fake{status: 200, body: validBalance}, true},
		{"balance 401", "GET", "/api/v1/wallet/balance", fake{status: 401, body: wallet401}, true},
		{"balance 429", "GET", "/api/v1/wallet/balance",
			fake{status: 429, headers: map[string]string{"Retry-After": "60"}, body: body429}, true},
		{"balance 500", "GET", "/api/v1/wallet/balance", fake{status: 500, body: `{"statusCode":500,"message":"Erro interno."}`}, true},
		{"lookup", "POST", "/api/v1/wallet/transaction",
			fake{status: 200, body: `{"statusCode":200,"message":"ok","data":` + validTransaction + `}`}, true},
		{"lookup pending payout", "POST", "/api/v1/wallet/transaction",
			fake{status: 200, body: `{"statusCode":200,"message":"ok","data":` + pendingPayoutTransaction + `}`}, true},
		{"lookup 404", "POST", "/api/v1/wallet/transaction",
			fake{status: 404, body: `{"statusCode":404,"message":"Transação não encontrada."}`}, true},
		{"history", "GET", "/api/v1/wallet/transactions?limit=2&type=cashin", fake{status: 200,
			body: `{"statusCode":200,"message":"ok","data":[` + validTransaction + `,` + pendingPayoutTransaction + `],"next_cursor":"abc"}`}, true},
		{"history last page", "GET", "/api/v1/wallet/transactions",
			fake{status: 200, body: `{"statusCode":200,"message":"ok","data":[],"next_cursor":null}`}, true},
		{"sandbox pay", "POST", "/api/v1/sandbox/charges/" + uuid1 + "/pay",
			fake{status: 200, body: `{"statusCode":200,"message":"ok","data":` + validTransaction + `}`}, true},
		{"sandbox expire not pending", "POST", "/api/v1/sandbox/charges/" + uuid1 + "/expire",
			fake{status: 422, body: `{"statusCode":422,"message":"Charge is not PENDING","error":"Unprocessable Entity"}`}, true},
		{"sandbox bad id 404", "POST", "/api/v1/sandbox/charges/not-a-uuid/pay",
			fake{status: 404, body: `{"statusCode":404,"message":"Charge not found","error":"Not Found"}`}, true},
		{"deliveries", "GET", "/api/v1/webhooks/deliveries?payment_id=" + uuid1, fake{status: 200,
			body: `{"statusCode":200,"message":"ok","data":[{"event_id":"evt_1","event":"pix.cashin.paid","payment_id":"` + uuid1 +
				`","url":"http://127.0.0.1:9/hook","status":"failed","attempts":[{"at":"2025-01-31T13:47:12.400Z","status_code":null,` +
				`"latency_ms":3,"error":"connection refused"},{"at":"2025-01-31T13:47:17.400Z","status_code":500,"latency_ms":4,"error":"HTTP 500"}]}]}`}, true},
		{"delivery retry", "POST", "/api/v1/webhooks/deliveries/evt_1/retry",
			fake{status: 202, body: `{"statusCode":202,"message":"queued"}`}, true},
		{"pay page", "GET", "/pay/" + uuid1, fake{status: 200, contentType: "text/html; charset=utf-8", body: "<!doctype html><p>R$ 10,50</p>"}, true},
		{"pay page 404", "GET", "/pay/" + uuid1, fake{status: 404, contentType: "text/html; charset=utf-8", body: "<p>not found</p>"}, true},

		// Drift fails.
		{"missing required field", "POST", "/api/v1/gateway/request-qrcode",
			fake{status: 201, body: strings.Replace(validCharge, `,"expires_at":"2025-02-01T13:45:00.000Z"`, "", 1)}, false},
		{"extra field", "POST", "/api/v1/gateway/request-qrcode", fake{status: 201, body: withField(validCharge, `"fee":0`)}, false},
		{"extra nested field", "GET", "/api/v1/wallet/balance",
			fake{status: 200, body: strings.Replace(validBalance, `"pending_cents":0`, `"pending_cents":0,"frozen_cents":0`, 1)}, false},
		{"wrong type", "GET", "/api/v1/wallet/balance",
			fake{status: 200, body: strings.Replace(validBalance, `152075`, `"152075"`, 1)}, false},
		{"money as string", "POST", "/api/v1/gateway/pix-payment", fake{status: 200,
			body: `{"statusCode":200,"transaction_id":"` + uuid2 + `","external_id":"p-1","amount":"25.00","tax":0,"status":"PENDING"}`}, false},
		{"money with three decimals", "POST", "/api/v1/gateway/pix-payment", fake{status: 200,
			body: `{"statusCode":200,"transaction_id":"` + uuid2 + `","external_id":"p-1","amount":25.005,"tax":0,"status":"PENDING"}`}, false},
		{"zero amount", "POST", "/api/v1/gateway/request-qrcode",
			fake{status: 201, body: strings.Replace(validCharge, `"amount":0.07`, `"amount":0`, 1)}, false},
		{"negative tax", "POST", "/api/v1/gateway/pix-payment", fake{status: 200,
			body: `{"statusCode":200,"transaction_id":"` + uuid2 + `","external_id":"p-1","amount":25,"tax":-0.01,"status":"PENDING"}`}, false},
		{"null where not nullable", "POST", "/api/v1/gateway/request-qrcode",
			fake{status: 201, body: strings.Replace(validCharge, `"external_id":"order-1"`, `"external_id":null`, 1)}, false},
		{"upper-case uuid", "POST", "/api/v1/gateway/request-qrcode",
			fake{status: 201, body: strings.Replace(validCharge, uuid1, strings.ToUpper(uuid1), 1)}, false},
		{"date without milliseconds", "POST", "/api/v1/wallet/transaction", fake{status: 200,
			body: `{"statusCode":200,"message":"ok","data":` + strings.Replace(validTransaction, "13:45:00.000Z", "13:45:00Z", 1) + `}`}, false},
		{"balance timestamp in UTC", "GET", "/api/v1/wallet/balance",
			fake{status: 200, body: strings.Replace(validBalance, "10:45:00.000-03:00", "13:45:00.000Z", 1)}, false},
		{"status outside enum", "POST", "/api/v1/wallet/transaction", fake{status: 200,
			body: `{"statusCode":200,"message":"ok","data":` + strings.Replace(validTransaction, `"PAID"`, `"COMPLETED"`, 1) + `}`}, false},
		{"qrcode_image with data URL", "POST", "/api/v1/gateway/request-qrcode",
			fake{status: 201, body: strings.Replace(validCharge, `"iVBOR`, `"data:image/png;base64,iVBOR`, 1)}, false},
		{"undocumented status", "GET", "/api/v1/wallet/balance", fake{status: 404, body: `{"statusCode":404,"message":"x"}`}, false},
		{"undocumented status on public path", "GET", "/healthz", fake{status: 418, body: `{"status":"ok"}`}, false},
		{"gateway body on wallet path", "GET", "/api/v1/wallet/balance", fake{status: 401, body: gateway401}, false},
		{"wallet body on gateway path", "POST", "/api/v1/gateway/refund", fake{status: 401, body: wallet401}, false},
		{"wrong 401 message", "POST", "/api/v1/gateway/refund",
			fake{status: 401, body: strings.Replace(gateway401, "Invalid credentials", "Unauthorized", 1)}, false},
		{"statusCode differs from status", "POST", "/api/v1/gateway/refund",
			fake{status: 400, body: `{"statusCode":422,"message":"Invalid request parameters","error":"Bad Request"}`}, false},
		{"429 body without retryAfter", "GET", "/api/v1/wallet/balance", fake{status: 429, headers: map[string]string{"Retry-After": "60"},
			body: `{"statusCode":429,"message":"Rate limit exceeded","error":"Too Many Requests"}`}, false},
		{"429 without Retry-After header", "GET", "/api/v1/wallet/balance", fake{status: 429, body: body429}, false},
		{"missing X-Request-Id", "GET", "/api/v1/wallet/balance",
			fake{status: 200, headers: map[string]string{"X-Request-Id": ""}, body: validBalance}, false},
		{"missing rate-limit header", "GET", "/api/v1/wallet/balance",
			fake{status: 200, headers: map[string]string{"X-RateLimit-Remaining": ""}, body: validBalance}, false},
		{"rate-limit header not an integer", "GET", "/api/v1/wallet/balance",
			fake{status: 200, headers: map[string]string{"X-RateLimit-Reset": "soon"}, body: validBalance}, false},
		{"bad Idempotent-Replayed", "POST", "/api/v1/gateway/request-qrcode",
			fake{status: 201, headers: map[string]string{"Idempotent-Replayed": "yes"}, body: validCharge}, false},
		{"wrong content type", "GET", "/api/v1/wallet/balance", fake{status: 200, contentType: "text/plain", body: validBalance}, false},
		{"no content type", "GET", "/api/v1/wallet/balance", fake{status: 200, contentType: "-", body: validBalance}, false},
		{"empty body", "GET", "/api/v1/wallet/balance", fake{status: 200}, false},
		{"malformed JSON", "GET", "/api/v1/wallet/balance", fake{status: 200, body: validBalance[:20]}, false},
		{"json pay page", "GET", "/pay/" + uuid1, fake{status: 200, body: `{}`}, false},
		{"undocumented path", "GET", "/api/v1/wallet/nothing", fake{status: 404, body: `{"statusCode":404,"message":"x"}`}, false},
		{"undocumented method", "GET", "/api/v1/gateway/refund",
			fake{status: 405, body: `{"statusCode":405,"message":"Method not allowed","error":"Method Not Allowed"}`}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := httptest.NewServer(http.HandlerFunc(tc.fake.serve))
			t.Cleanup(srv.Close)

			r := &recorder{TB: t}
			client := api.Client(r, nil)
			var body io.Reader
			if tc.method == http.MethodPost {
				body = strings.NewReader(`{"sent":true}`)
			}
			req, err := http.NewRequest(tc.method, srv.URL+tc.path, body)
			require.NoError(t, err)
			resp, err := client.Do(req)
			require.NoError(t, err)
			got, err := io.ReadAll(resp.Body)
			require.NoError(t, err)
			require.NoError(t, resp.Body.Close())
			require.Equal(t, tc.fake.body, string(got), "the caller reads the whole body")

			if tc.ok {
				require.False(t, r.Failed(), "unexpected failure:\n%s", r.String())
			} else {
				require.True(t, r.Failed(), "drift not reported")
				t.Log(r.String())
			}
		})
	}
}

func TestOpenAPICheckDirect(t *testing.T) {
	t.Parallel()
	api := testkit.NewOpenAPI(t, apiDocument(t))
	req := httptest.NewRequest(http.MethodGet, "/api/v1/wallet/balance", nil)

	good := httptest.NewRecorder()
	fake{status: 200, body: validBalance}.serve(good, req)
	r := &recorder{TB: t}
	api.Check(r, req, nil, good.Result(), good.Body.Bytes())
	require.False(t, r.Failed(), r.String())

	bad := httptest.NewRecorder()
	fake{status: 200, body: withoutPending(validBalance)}.serve(bad, req)
	r = &recorder{TB: t}
	api.Check(r, req, nil, bad.Result(), bad.Body.Bytes())
	require.True(t, r.Failed())
	require.Contains(t, r.String(), "pending_cents")
	require.Contains(t, r.String(), "GET /api/v1/wallet/balance → 200")

	// With no request given, the response's own request is used.
	resp := good.Result()
	resp.Request = req
	r = &recorder{TB: t}
	api.Check(r, nil, nil, resp, good.Body.Bytes())
	require.False(t, r.Failed(), r.String())
}

func withoutPending(balance string) string {
	return strings.Replace(balance, `,"pending_cents":0`, "", 1)
}

func TestOpenAPIClientForwardsRequest(t *testing.T) {
	t.Parallel()
	api := testkit.NewOpenAPI(t, apiDocument(t))
	var gotBody []byte
	var gotHeader string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotBody, _ = io.ReadAll(r.Body)
		gotHeader = r.Header.Get("Idempotency-Key")
		fake{status: 200, body: `{"statusCode":200,"refund_id":"` + uuid2 + `","payment_id":"` + uuid1 +
			`","amount":5.25,"status":"PENDING"}`}.serve(w, r)
	}))
	t.Cleanup(srv.Close)

	r := &recorder{TB: t}
	sent := []byte(`{"payment_id":"` + uuid1 + `","amount":5.25}`)
	req, err := http.NewRequest(http.MethodPost, srv.URL+"/api/v1/gateway/refund", bytes.NewReader(sent))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Idempotency-Key", "k-1")
	resp, err := api.Client(r, http.DefaultTransport).Do(req)
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, sent, gotBody)
	require.Equal(t, "k-1", gotHeader)
	require.False(t, r.Failed(), r.String())
}
