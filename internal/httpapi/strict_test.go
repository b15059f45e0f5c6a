package httpapi_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/internal/backoffice"
	"github.com/pixgate/pixgate/internal/store"
)

// withMembers returns body as JSON text with members (raw JSON, e.g.
// `"amount":1,`) written first in its top-level object: how tests send
// duplicate names, which no Go map can hold.
func withMembers(t *testing.T, body map[string]any, members string) string {
	t.Helper()
	raw, err := json.Marshal(body)
	require.NoError(t, err)
	if members == "" {
		return string(raw)
	}
	if len(body) == 0 {
		return "{" + strings.TrimSuffix(members, ",") + "}"
	}
	return "{" + members + string(raw[1:])
}

// without returns a copy of m without key.
func without(m map[string]any, key string) map[string]any {
	c := make(map[string]any, len(m))
	for k, v := range m {
		if k != key {
			c[k] = v
		}
	}
	return c
}

// requireFieldError requires a gateway 400 whose details name field.
func requireFieldError(t *testing.T, r response, field, label string) {
	t.Helper()
	require.Equal(t, http.StatusBadRequest, r.status, "%s: %s", label, r.body)
	require.Equal(t, "Invalid request parameters", r.json["message"], label)
	require.Equal(t, "Bad Request", r.json["error"], label)
	details, _ := r.json["details"].([]any)
	require.NotEmpty(t, details, "%s: %s", label, r.body)
	require.Equal(t, field, details[0].(map[string]any)["field"], "%s: %s", label, r.body)
	require.NotEmpty(t, details[0].(map[string]any)["issue"], label)
}

// requireWalletError requires a wallet 400 ({statusCode, message}) whose
// message names field.
func requireWalletError(t *testing.T, r response, field, label string) {
	t.Helper()
	require.Equal(t, http.StatusBadRequest, r.status, "%s: %s", label, r.body)
	require.Len(t, r.json, 2, "%s: %s", label, r.body)
	require.Contains(t, r.json["message"], "'"+field+"'", "%s: %s", label, r.body)
}

// TestStrictJSONNames: a member name sent twice, or differing from a
// documented field name only by letter case, is a 400 naming the field on
// every endpoint with a body, and creates nothing; unknown members are
// still ignored (docs/api.md, Input rules).
func TestStrictJSONNames(t *testing.T) {
	t.Parallel()
	databases(t, func(t *testing.T, open func(t *testing.T) *store.DB) {
		b := setup(t, open, options{})
		b.fund("100")
		paid := b.paidCharge("strict-paid", "50")
		before := b.count(b.cred.ClientID)
		availBefore, pendingBefore := b.balance()

		charge := validCharge("strict-1", "10")
		payer := charge["payer"].(map[string]any)
		nestedDup := validCharge("strict-2", "10")
		nestedDup["payer"] = json.RawMessage(`{"name":"A","name":"B","document":"52998224725","phoneNumber":"11987654321","email":"a@example.com","address":` + mustJSON(t, payer["address"]) + `}`)
		productCase := validCharge("strict-3", "10")
		productCase["products"] = json.RawMessage(`[{"name":"X","quantity":"1","price":10},{"name":"Y","quantity":"1","price":1,"PRICE":1000}]`)
		addressCase := validCharge("strict-4", "10")
		addressCase["payer"] = json.RawMessage(`{"name":"A","document":"52998224725","phoneNumber":"11987654321","email":"a@example.com",` +
			`"address":{"street":"R","number":"1","neighborhood":"C","city":"S","state":"SP","zipCode":"01001000","ZipCode":"99999999"}}`)
		pay := payout("10", "EMAIL", "dest@example.com")
		kelvin := payout("10", "EMAIL", "dest@example.com")
		// U+212A KELVIN SIGN folds to "k": encoding/json v1 would read it as "key".
		kelvin["creditParty"] = json.RawMessage(`{"name":"F","keyType":"EMAIL","key":"dest@example.com","\u212aey":"evil@example.com"}`)

		for _, tc := range []struct {
			label, path, body, field string
		}{
			{"charge duplicate", "/api/v1/gateway/request-qrcode", withMembers(t, without(charge, "amount"), `"amount":1,"amount":1000,`), "amount"},
			{"charge upper case", "/api/v1/gateway/request-qrcode", withMembers(t, charge, `"AMOUNT":1000,`), "amount"},
			{"charge title case", "/api/v1/gateway/request-qrcode", withMembers(t, charge, `"Amount":1000,`), "amount"},
			{"charge escaped duplicate", "/api/v1/gateway/request-qrcode", withMembers(t, charge, `"\u0061mount":1000,`), "amount"},
			{"charge external_id case", "/api/v1/gateway/request-qrcode", withMembers(t, charge, `"External_ID":"other",`), "external_id"},
			{"charge nested duplicate", "/api/v1/gateway/request-qrcode", withMembers(t, nestedDup, ""), "payer.name"},
			{"charge product case", "/api/v1/gateway/request-qrcode", withMembers(t, productCase, ""), "products[1].price"},
			{"charge address case", "/api/v1/gateway/request-qrcode", withMembers(t, addressCase, ""), "payer.address.zipCode"},
			{"payout duplicate", "/api/v1/gateway/pix-payment", withMembers(t, without(pay, "amount"), `"amount":1,"amount":90,`), "amount"},
			{"payout case", "/api/v1/gateway/pix-payment", withMembers(t, pay, `"AMOUNT":90,`), "amount"},
			{"payout kelvin sign", "/api/v1/gateway/pix-payment", withMembers(t, kelvin, ""), "creditParty.key"},
			{"refund duplicate", "/api/v1/gateway/refund", `{"payment_id":"` + paid + `","amount":1,"amount":50}`, "amount"},
			{"refund case", "/api/v1/gateway/refund", `{"payment_id":"` + paid + `","amount":1,"Amount":50}`, "amount"},
		} {
			requireFieldError(t, b.do("POST", tc.path, tc.body), tc.field, tc.label)
		}
		for _, tc := range []struct {
			label, body, field string
		}{
			{"lookup duplicate", `{"external_id":"strict-paid","external_id":"other"}`, "external_id"},
			{"lookup case", `{"payment_id":"` + paid + `","PAYMENT_ID":"other"}`, "payment_id"},
			{"lookup escaped duplicate", `{"payment_id":"` + paid + `","payment\u005fid":"other"}`, "payment_id"},
		} {
			requireWalletError(t, b.do("POST", "/api/v1/wallet/transaction", tc.body), tc.field, tc.label)
		}
		require.Equal(t, before, b.count(b.cred.ClientID), "no rejected request created anything")
		avail, pending := b.balance()
		require.Equal(t, availBefore, avail)
		require.Equal(t, pendingBefore, pending)

		// Unknown members, whatever their case, are still ignored; the
		// documented spelling works.
		r := b.do("POST", "/api/v1/gateway/request-qrcode", withMembers(t, charge, `"note":"x","NOTE":"y","extra":{"a":[1,{"b":2}]},`))
		require.Equal(t, http.StatusCreated, r.status, string(r.body))
		require.Equal(t, json.Number("10"), r.json["amount"])
	})
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	raw, err := json.Marshal(v)
	require.NoError(t, err)
	return string(raw)
}

// TestTextMustBeValid: a NUL character or invalid UTF-8 in any text field
// or identifier — body strings at any depth, query parameters, path values,
// the Idempotency-Key header — is a 400 on both databases, never a 500
// (PostgreSQL refuses both) and never stored as U+FFFD (docs/api.md, Input rules).
func TestTextMustBeValid(t *testing.T) {
	t.Parallel()
	databases(t, func(t *testing.T, open func(t *testing.T) *store.DB) {
		b := setup(t, open, options{})
		b.fund("100")
		paid := b.paidCharge("text-paid", "50")
		before := b.count(b.cred.ClientID)
		availBefore, pendingBefore := b.balance()

		// Bodies: NUL through its escape; invalid UTF-8 as raw bytes
		// (json.Marshal would have replaced them with U+FFFD).
		nul := validCharge("text-1", "10")
		nul["payer"].(map[string]any)["name"] = "Jo\x00ão"
		badProduct := validCharge("text-2", "10")
		badProduct["products"] = []any{map[string]any{"name": "ok", "quantity": "1", "price": json.Number("5")},
			map[string]any{"name": "INVALID", "quantity": "1", "price": json.Number("5")}}
		badQuestion := validCharge("text-3", "10")
		badQuestion["payerQuestion"] = "INVALID"
		nulExternal := validCharge("a\x00b", "10")
		badPayout := payout("10", "EMAIL", "dest@example.com")
		badPayout["description"] = "INVALID"
		nulPayoutID := payout("10", "EMAIL", "dest@example.com")
		nulPayoutID["external_id"] = "p\x00"
		invalidUTF8 := func(body map[string]any) string {
			return strings.Replace(mustJSON(t, body), "INVALID", "Caf\xe9 \xff\xfe", 1)
		}
		for _, tc := range []struct {
			label, path, body, field string
		}{
			{"charge NUL in payer.name", "/api/v1/gateway/request-qrcode", mustJSON(t, nul), "payer.name"},
			{"charge NUL in external_id", "/api/v1/gateway/request-qrcode", mustJSON(t, nulExternal), "external_id"},
			{"charge invalid UTF-8 in products", "/api/v1/gateway/request-qrcode", invalidUTF8(badProduct), "products[1].name"},
			{"charge invalid UTF-8 in payerQuestion", "/api/v1/gateway/request-qrcode", invalidUTF8(badQuestion), "payerQuestion"},
			{"payout invalid UTF-8 in description", "/api/v1/gateway/pix-payment", invalidUTF8(badPayout), "description"},
			{"payout NUL in external_id", "/api/v1/gateway/pix-payment", mustJSON(t, nulPayoutID), "external_id"},
			{"refund NUL in external_id", "/api/v1/gateway/refund", `{"external_id":"text-paid\u0000","amount":1}`, "external_id"},
			{"refund NUL in payment_id", "/api/v1/gateway/refund", `{"payment_id":"` + paid + `\u0000"}`, "payment_id"},
			{"refund invalid UTF-8 in reason", "/api/v1/gateway/refund", `{"payment_id":"` + paid + "\",\"reason\":\"devolu\xe7\xe3o\"}", "reason"},
		} {
			requireFieldError(t, b.do("POST", tc.path, tc.body), tc.field, tc.label)
		}
		for _, tc := range []struct {
			label, body, field string
		}{
			{"lookup NUL in external_id", `{"external_id":"text-paid\u0000"}`, "external_id"},
			{"lookup NUL in payment_id", `{"payment_id":"\u0000"}`, "payment_id"},
			{"lookup invalid UTF-8", "{\"external_id\":\"\xff\"}", "external_id"},
		} {
			requireWalletError(t, b.do("POST", "/api/v1/wallet/transaction", tc.body), tc.field, tc.label)
		}

		// Query parameters, path values and the Idempotency-Key header.
		for _, tc := range []struct{ label, query, field string }{
			{"history status NUL", "?status=%00", "status"},
			{"history cursor invalid", "?cursor=%FF%FE", "cursor"},
			{"history type invalid", "?limit=10&type=cash%C3", "type"},
		} {
			r := b.send(b.raw, "GET", "/api/v1/wallet/transactions"+tc.query, nil, "")
			requireWalletError(t, r, tc.field, tc.label)
		}
		requireFieldError(t, b.send(b.raw, "GET", "/api/v1/webhooks/deliveries?payment_id=%00", nil, ""), "payment_id", "deliveries NUL")
		requireFieldError(t, b.send(b.raw, "GET", "/api/v1/webhooks/deliveries?payment_id=%E7%FF", nil, ""), "payment_id", "deliveries invalid")
		requireFieldError(t, b.send(b.raw, "POST", "/api/v1/webhooks/deliveries/evt_%00/retry", nil, ""), "event_id", "retry NUL")
		requireFieldError(t, b.send(b.raw, "POST", "/api/v1/sandbox/charges/%FF/pay", nil, ""), "payment_id", "sandbox pay invalid")
		requireFieldError(t, b.send(b.raw, "POST", "/api/v1/sandbox/charges/a%00/expire", nil, ""), "payment_id", "sandbox expire NUL")
		requireFieldError(t, b.send(b.raw, "GET", "/pay/%00", nil, ""), "payment_id", "pay page NUL")
		req := b.request("POST", "/api/v1/gateway/request-qrcode", validCharge("text-key", "10"), "application/json")
		req.Header.Set("Idempotency-Key", "key-\xff")
		requireFieldError(t, b.exchange(b.raw, req), "Idempotency-Key", "Idempotency-Key invalid")

		// Without credentials, authentication still answers first.
		r := b.send(b.raw, "POST", "/api/v1/sandbox/charges/%FF/pay", nil, "", backoffice.Credentials{})
		require.Equal(t, http.StatusUnauthorized, r.status, string(r.body))
		// A credential that is not UTF-8 is refused like a wrong one.
		r = b.send(b.raw, "GET", "/api/v1/wallet/balance", nil, "", backoffice.Credentials{ClientID: b.cred.ClientID, ClientSecret: "sk_\xff\xfe"})
		require.Equal(t, http.StatusUnauthorized, r.status, string(r.body))

		require.Equal(t, before, b.count(b.cred.ClientID), "no rejected request created anything")
		avail, pending := b.balance()
		require.Equal(t, availBefore, avail)
		require.Equal(t, pendingBefore, pending)
	})
}

// TestNonCanonicalPaths: the mux never redirects; a path that is not in
// canonical form is not a route. Under /api/v1 it authenticates first, so
// without credentials it is a 401 with the rate-limit headers, not a 307.
func TestNonCanonicalPaths(t *testing.T) {
	t.Parallel()
	databases(t, func(t *testing.T, open func(t *testing.T) *store.DB) {
		b := setup(t, open, options{})
		noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		for _, path := range []string{"//api/v1/wallet/balance", "/api/v1//wallet/balance", "/api/v1/wallet/./balance",
			"/x/../api/v1/wallet/balance", "/api/v1"} {
			r := b.send(noFollow, "GET", path, nil, "", backoffice.Credentials{})
			require.Equal(t, http.StatusUnauthorized, r.status, "%s: %s", path, r.body)
			require.NotEmpty(t, r.header.Get("X-RateLimit-Limit"), path)
			require.NotEmpty(t, r.header.Get("X-RateLimit-Reset"), path)
			require.Empty(t, r.header.Get("Location"), path)
			if path != "/api/v1" {
				require.Len(t, r.json, 2, "wallet shape, read from the cleaned path: %s", r.body)
			}
			r = b.send(noFollow, "GET", path, nil, "")
			require.Equal(t, http.StatusNotFound, r.status, "%s: %s", path, r.body)
			require.Empty(t, r.header.Get("Location"), path)
		}
		for _, path := range []string{"//healthz", "/assets", "/pay//x", "/a/../healthz"} {
			r := b.send(noFollow, "GET", path, nil, "", backoffice.Credentials{})
			require.Equal(t, http.StatusNotFound, r.status, "%s: %s", path, r.body)
			require.Equal(t, "Not Found", r.json["error"], path)
			require.Empty(t, r.header.Get("Location"), path)
		}
		require.Equal(t, http.StatusOK, b.send(noFollow, "GET", "/healthz", nil, "").status)
	})
}
