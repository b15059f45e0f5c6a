package httpapi_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/internal/backoffice"
	"github.com/pixgate/pixgate/internal/gateway"
	"github.com/pixgate/pixgate/internal/store"
)

// TestQueryParameterGivenTwice: a query parameter given more than once is a
// 400 naming it on every endpoint, in the error shape of the endpoint's
// family, and nothing is done; under /api/v1/ authentication still answers
// first, and the 400 counts against the rate limit like any other answer.
func TestQueryParameterGivenTwice(t *testing.T) {
	t.Parallel()
	databases(t, func(t *testing.T, open func(t *testing.T) *store.DB) {
		b := setup(t, open, options{})
		b.fund("100")
		paid := b.paidCharge("dup-paid", "50")
		unpaid := b.createCharge("dup-open", "10").json["payment_id"].(string)
		before := b.count(b.cred.ClientID)
		availBefore, pendingBefore := b.balance()

		from := url.QueryEscape("2026-01-01T00:00:00Z")
		to := url.QueryEscape("2026-02-01T00:00:00Z")
		gatewayCases := []struct {
			method, path string
			body         any
			field        string
		}{
			{"POST", "/api/v1/gateway/request-qrcode?a=1&a=2", validCharge("dup-charge", "10"), "a"},
			{"POST", "/api/v1/gateway/pix-payment?x=1&y=2&x=1", payout("10", "EMAIL", "dest@example.com"), "x"},
			{"POST", "/api/v1/gateway/refund?reason=a&reason=b", map[string]any{"payment_id": paid}, "reason"},
			{"GET", "/api/v1/gateway/refunds/" + paid + "?v=1&v=1", nil, "v"},
			{"GET", "/api/v1/webhooks/deliveries?payment_id=" + paid + "&payment_id=" + unpaid, nil, "payment_id"},
			// The name is compared unescaped: %70 is "p".
			{"GET", "/api/v1/webhooks/deliveries?payment_id=" + paid + "&%70ayment_id=" + paid, nil, "payment_id"},
			{"POST", "/api/v1/webhooks/deliveries/evt_x/retry?id=1&id=2", nil, "id"},
			{"POST", "/api/v1/sandbox/charges/" + unpaid + "/pay?amount=1&amount=2", nil, "amount"},
			{"POST", "/api/v1/sandbox/charges/" + unpaid + "/expire?now=&now=", nil, "now"},
			{"GET", "/pay/" + unpaid + "?lang=en&lang=pt", nil, "lang"},
			{"GET", "/pay/" + unpaid + "/status?t=1&t=2", nil, "t"},
			{"GET", "/healthz?a=1&a=1", nil, "a"},
			{"GET", "/readyz?a=1&a=1", nil, "a"},
			{"GET", "/openapi.yaml?v=1&v=2", nil, "v"},
		}
		for _, tc := range gatewayCases {
			r := b.do(tc.method, tc.path, tc.body)
			requireFieldError(t, r, tc.field, tc.method+" "+tc.path)
			require.Contains(t, string(r.body), "more than once", tc.path)
		}
		walletCases := []struct{ method, path, field string }{
			{"GET", "/api/v1/wallet/balance?x=1&x=2", "x"},
			{"POST", "/api/v1/wallet/transaction?q=1&q=2", "q"},
			{"GET", "/api/v1/wallet/transactions?limit=1&limit=2", "limit"},
			{"GET", "/api/v1/wallet/transactions?status=PAID&type=cashin&status=PENDING", "status"},
			{"GET", "/api/v1/wallet/statement?from=" + from + "&to=" + to + "&from=" + from, "from"},
			{"GET", "/api/v1/wallet/statement?from=" + from + "&to=" + to + "&format=csv&format=json", "format"},
		}
		for _, tc := range walletCases {
			var body any
			if tc.method == "POST" {
				body = map[string]any{"payment_id": paid}
			}
			r := b.do(tc.method, tc.path, body)
			requireWalletError(t, r, tc.field, tc.method+" "+tc.path)
			require.Equal(t, "Invalid request parameters: query parameter '"+tc.field+"' is given more than once.", r.json["message"])
		}
		require.Equal(t, before, b.count(b.cred.ClientID), "no rejected request created anything")
		avail, pending := b.balance()
		require.Equal(t, availBefore, avail)
		require.Equal(t, pendingBefore, pending)
		require.Equal(t, "PENDING", b.lookup(unpaid)["status"], "the sandbox calls did nothing")

		// One value of each parameter, or several parameters, still work;
		// so do pairs no handler can read (no name, a ';').
		for _, path := range []string{
			"/api/v1/wallet/transactions?limit=1&status=PAID&type=cashin",
			"/api/v1/wallet/transactions?limit=1&=a&=b&&",
			"/api/v1/wallet/statement?from=" + from + "&to=" + to + "&format=json",
		} {
			r := b.do("GET", path, nil)
			require.Equal(t, http.StatusOK, r.status, "%s: %s", path, r.body)
		}

		// Without credentials an /api/v1/ path answers 401 first, also when
		// the query repeats a parameter.
		for _, path := range []string{"/api/v1/wallet/transactions?limit=1&limit=2", "/api/v1/gateway/refunds/" + paid + "?v=1&v=2"} {
			r := b.do("GET", path, nil, backoffice.Credentials{})
			require.Equal(t, http.StatusUnauthorized, r.status, path)
		}
	})
}

// TestQueryDuplicateCountsOnce: a refused repeated parameter is one request
// against the client's rate limit, like any other answer, and carries the
// rate-limit headers.
func TestQueryDuplicateCountsOnce(t *testing.T) {
	t.Parallel()
	databases(t, func(t *testing.T, open func(t *testing.T) *store.DB) {
		b := setup(t, open, options{rateLimit: 3})
		for _, tc := range []struct {
			query     string
			status    int
			remaining string
		}{
			{"?limit=1&limit=2", http.StatusBadRequest, "2"},
			{"?limit=1", http.StatusOK, "1"},
			{"?limit=1&limit=2", http.StatusBadRequest, "0"},
		} {
			r := b.do("GET", "/api/v1/wallet/transactions"+tc.query, nil)
			require.Equal(t, tc.status, r.status, tc.query)
			require.Equal(t, "3", r.header.Get("X-RateLimit-Limit"), tc.query)
			require.Equal(t, tc.remaining, r.header.Get("X-RateLimit-Remaining"), tc.query)
		}
		r := b.send(b.raw, "GET", "/api/v1/wallet/transactions?limit=1", nil, "")
		require.Equal(t, http.StatusTooManyRequests, r.status)
	})
}

// TestPlusSentAsSpace: an offset such as +03:00 sent unescaped in a query
// arrives as a space; the 400 for such a from or to says so, and only then.
func TestPlusSentAsSpace(t *testing.T) {
	t.Parallel()
	databases(t, func(t *testing.T, open func(t *testing.T) *store.DB) {
		b := setup(t, open, options{})
		const hint = "(a '+' in a URL query must be sent as %2B)"
		for _, tc := range []struct {
			path, field string
			hinted      bool
		}{
			{"/api/v1/wallet/statement?from=2026-01-01T00:00:00+03:00&to=2026-01-02T00:00:00Z", "from", true},
			{"/api/v1/wallet/statement?from=2026-01-01T00:00:00Z&to=2026-01-02T00:00:00.000+03:00", "to", true},
			{"/api/v1/wallet/transactions?from=2026-01-01T00:00:00+03:00", "from", true},
			{"/api/v1/wallet/transactions?to=2026-01-01T00:00:00+03:00", "to", true},
			// A space that is not where an offset's '+' would be: no hint.
			{"/api/v1/wallet/statement?from=2026-01-01+00:00:00Z&to=2026-01-02T00:00:00Z", "from", false},
			{"/api/v1/wallet/transactions?from=yesterday+03:00", "from", false},
		} {
			r := b.do("GET", tc.path, nil)
			requireWalletError(t, r, tc.field, tc.path)
			msg := r.json["message"].(string)
			if tc.hinted {
				require.Contains(t, msg, hint, tc.path)
			} else {
				require.NotContains(t, msg, "%2B", tc.path)
			}
		}
		// Escaped as %2B, the same value is read.
		r := b.do("GET", "/api/v1/wallet/statement?from=2026-01-01T00:00:00%2B03:00&to=2026-01-02T00:00:00Z", nil)
		require.Equal(t, http.StatusOK, r.status, string(r.body))
		require.Equal(t, "2025-12-31T21:00:00.000Z", r.json["data"].(map[string]any)["from"])
	})
}

// TestWalletMessagesLanguage: a wallet message is the API specification's
// Portuguese text where it fixes one (authentication, the lookup's errors,
// 500), and English everywhere else (docs/api.md).
func TestWalletMessagesLanguage(t *testing.T) {
	t.Parallel()
	databases(t, func(t *testing.T, open func(t *testing.T) *store.DB) {
		b := setup(t, open, options{})
		paid := b.paidCharge("lang-paid", "10")
		lookup := "/api/v1/wallet/transaction"
		from, to := url.QueryEscape("2026-01-01T00:00:00Z"), url.QueryEscape("2026-01-02T00:00:00Z")
		for _, tc := range []struct {
			method, path string
			body         any
			status       int
			message      string
		}{
			// Fixed by the specification, kept to the letter.
			{"POST", lookup, `{}`, http.StatusBadRequest, gateway.MsgLookupNeedsID},
			{"POST", lookup, `{"payment_id":"00000000-0000-4000-8000-000000000000"}`, http.StatusNotFound, "Transação não encontrada."},
			// Everything else in English.
			{"GET", "/api/v1/wallet/balance", nil, http.StatusOK, "Balance retrieved successfully."},
			{"POST", lookup, `{"payment_id":"` + paid + `"}`, http.StatusOK, "Transaction found."},
			{"GET", "/api/v1/wallet/transactions", nil, http.StatusOK, "Transactions listed successfully."},
			{"GET", "/api/v1/wallet/statement?from=" + from + "&to=" + to, nil, http.StatusOK, "Statement generated successfully."},
			{"POST", lookup, `{"payment_id":"a","payment_id":"b"}`, http.StatusBadRequest,
				"Invalid request parameters: field 'payment_id' appears more than once in the request body."},
			{"POST", lookup, `{"Payment_ID":"a"}`, http.StatusBadRequest,
				"Invalid request parameters: field 'payment_id' was sent as 'Payment_ID'; field names are case-sensitive."},
			{"POST", lookup, `{"payment_id":"a\u0000"}`, http.StatusBadRequest,
				"Invalid request parameters: 'payment_id' must be valid UTF-8 text without NUL characters."},
			{"POST", lookup, `{"external_id":"` + strings.Repeat("a", 70<<10) + `"}`, http.StatusRequestEntityTooLarge,
				"Request body too large (limit 64 KiB)"},
		} {
			r := b.do(tc.method, tc.path, tc.body)
			require.Equal(t, tc.status, r.status, "%s %s: %s", tc.method, tc.path, r.body)
			require.Equal(t, tc.message, r.json["message"], tc.path)
		}
		r := b.send(b.raw, "POST", lookup, `{}`, "text/plain")
		require.Equal(t, http.StatusUnsupportedMediaType, r.status)
		require.Equal(t, "Content-Type must be application/json", r.json["message"])
		r = b.send(b.raw, "GET", "/api/v1/wallet/unknown", nil, "")
		require.Equal(t, http.StatusNotFound, r.status)
		require.Equal(t, "Not found", r.json["message"])
		r = b.send(b.raw, "GET", "/api/v1/wallet/balance", nil, "", backoffice.Credentials{})
		require.Equal(t, http.StatusUnauthorized, r.status)
		require.Equal(t, "Falha na autenticação.", r.json["message"])
	})
}
