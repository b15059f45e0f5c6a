package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/store"
)

// minDocumentedLimits is how many request limits openapi.yaml states (each
// enum counted once). Removing a limit from the document makes the test fail
// here, so that a limit cannot silently stop being checked; raise it when
// limits are added.
const minDocumentedLimits = 278

// lookupKeys are the request values that only find something: a malformed
// one matches nothing, so the document promises 404 for it, not 400.
var lookupKeys = map[string]bool{
	"createRefund body payment_id":      true,
	"createRefund body external_id":     true,
	"listDeliveries query payment_id":   true,
	"createTransfer body to_account_id": true,
}

// generatedOverrides supply values that padding one character at a time
// cannot produce (an e-mail address at its maximum length needs several
// labels). They are still checked against the document's schema.
var generatedOverrides = map[string]struct{ good, bad string }{
	"createCharge body payer.email maxLength 254": {
		good: strings.Repeat("a", 64) + "@" + strings.Repeat("b", 63) + "." + strings.Repeat("c", 63) + "." + strings.Repeat("d", 61),
		bad:  strings.Repeat("a", 64) + "@" + strings.Repeat("b", 63) + "." + strings.Repeat("c", 63) + "." + strings.Repeat("d", 62),
	},
	"createPayout body creditParty.key maxLength 77 (E-mail key)": {
		good: strings.Repeat("a", 64) + "@examples.com",
		bad:  strings.Repeat("a", 64) + "@exampless.com",
	},
}

// generatedArrays supply arrays that copying one item cannot produce: the
// discounts of a charge need ascending dates.
var generatedArrays = map[string][]any{
	"createCharge body due.discounts maxItems 3": {
		map[string]any{"until": "2099-12-01", "amount": json.Number("3")},
		map[string]any{"until": "2099-12-02", "amount": json.Number("2")},
		map[string]any{"until": "2099-12-03", "amount": json.Number("1")},
	},
	"createCharge body splits maxItems 10":           splitsOf(10),
	"createCharge body splits maxItems 10 (bad)":     splitsOf(11),
	"createRecurrence body splits maxItems 10":       splitsOf(10),
	"createRecurrence body splits maxItems 10 (bad)": splitsOf(11),
	"createCharge body due.discounts maxItems 3 (bad)": {
		map[string]any{"until": "2099-12-01", "amount": json.Number("4")},
		map[string]any{"until": "2099-12-02", "amount": json.Number("3")},
		map[string]any{"until": "2099-12-03", "amount": json.Number("2")},
		map[string]any{"until": "2099-12-04", "amount": json.Number("1")},
	},
}

// splitsOf is n percent splits naming n sub-accounts by placeholder
// (splitPlaceholder), which the fixture replaces by real ones.
func splitsOf(n int) []any {
	out := make([]any, n)
	for i := range out {
		out[i] = map[string]any{"account_id": splitPlaceholder(i), "percent": json.Number("1")}
	}
	return out
}

// sampleSubAccount is the sub-account of the sample fixture the cases are
// generated from.
const sampleSubAccount = "5d7e1c2a-3b4f-4a6e-9c8d-7e6f5a4b3c2d"

// splitPlaceholder is the account_id standing for the fixture's i-th
// sub-account in generated splits.
func splitPlaceholder(i int) string { return fmt.Sprintf("00000000-0000-4000-8000-%012d", i) }

// limitRequest is one API request under construction.
type limitRequest struct {
	method, path string
	body         map[string]any // nil: no body
	query        url.Values
	header       http.Header
}

// limitCase is one documented limit of one request value, with a request
// that violates it by one and one exactly at it (nil when the base request
// already is).
type limitCase struct {
	op, where string
	path      []string
	rule      string
	bad, good func(*limitRequest)
	badStatus int
	fields    []string // the 400's details must name one of these
}

func (c limitCase) name() string {
	return fmt.Sprintf("%s %s %s %s", c.op, c.where, strings.Join(c.path, "."), c.rule)
}

// limitFixture holds what the base requests refer to.
type limitFixture struct {
	n          int
	chargeID   string // a PENDING charge, for lookups
	paidCharge string // a PAID charge with plenty left to refund
	dueCharge  string // a charge with a due date, for the sandbox's pay action
	// MED: paid charges to dispute and to return (each its own, so that
	// an open dispute refuses no other base request), and an OPEN
	// dispute each to defend and to resolve.
	disputeCharge, returnCharge, defendDispute, resolveDispute string
	// subAccount is the account_id of a sub-account of the client, to
	// transfer to.
	subAccount string
	// splitAccounts are the sub-accounts generated splits name.
	splitAccounts []string
}

// real replaces the placeholders of generated splits in r's body by the
// fixture's sub-accounts.
func (f *limitFixture) real(r *limitRequest) *limitRequest {
	splits, _ := r.body["splits"].([]any)
	if splits == nil {
		return r
	}
	// A copy: generated values are shared by every run of the cases.
	splits = cloneAny(splits).([]any)
	r.body["splits"] = splits
	for _, sp := range splits {
		m, ok := sp.(map[string]any)
		if !ok {
			continue
		}
		if m["account_id"] == sampleSubAccount {
			// Copied from the sample's base request when the cases were made.
			m["account_id"] = f.subAccount
		}
		for i, a := range f.splitAccounts {
			if m["account_id"] == splitPlaceholder(i) {
				m["account_id"] = a
			}
		}
	}
	return r
}

func (f *limitFixture) next() int { f.n++; return f.n }

// baseRequests are valid requests per operation; every call returns fresh
// identifiers so that idempotency never replays one request for another.
var baseRequests = map[string]func(f *limitFixture) *limitRequest{
	"createCharge": func(f *limitFixture) *limitRequest {
		n := f.next()
		// With due terms, so that their limits are checked too; R$ 100.00
		// leaves a centavo after a 99.99% discount.
		body := validCharge(fmt.Sprintf("c-%d-", n), "100.00")
		body["due"] = map[string]any{"date": "2099-12-10", "days_after": json.Number("30"),
			"interest":  map[string]any{"percent_per_month": json.Number("1")},
			"discounts": []any{map[string]any{"until": "2099-12-05", "percent": json.Number("10")}}}
		body["splits"] = []any{map[string]any{"account_id": f.subAccount, "percent": json.Number("10")}}
		return &limitRequest{method: "POST", path: "/api/v1/gateway/request-qrcode", body: body,
			header: http.Header{"Idempotency-Key": {fmt.Sprintf("charge-%d-", n)}}}
	},
	"createPayout": func(f *limitFixture) *limitRequest {
		n := f.next()
		return &limitRequest{method: "POST", path: "/api/v1/gateway/pix-payment", body: map[string]any{
			"amount":      json.Number("0.01"),
			"description": "Pagamento fornecedor",
			"creditParty": map[string]any{"name": "João Souza", "keyType": "EMAIL", "key": "joao@example.com"},
			"callbackUrl": "https://merchant.example.com/webhooks/pix",
			"external_id": fmt.Sprintf("p-%d-", n),
		}, header: http.Header{"Idempotency-Key": {fmt.Sprintf("payout-%d-", n)}}}
	},
	"createPayoutBatch": func(f *limitFixture) *limitRequest {
		n := f.next()
		return &limitRequest{method: "POST", path: "/api/v1/gateway/pix-payments/batch", body: map[string]any{
			"external_id": fmt.Sprintf("b-%d-", n),
			"callbackUrl": "https://merchant.example.com/webhooks/pix",
			"items": []any{map[string]any{
				"amount":      json.Number("0.01"),
				"description": "Pagamento fornecedor",
				"creditParty": map[string]any{"name": "João Souza", "keyType": "EMAIL", "key": "joao@example.com"},
				"callbackUrl": "https://merchant.example.com/webhooks/pix",
				"external_id": fmt.Sprintf("bi-%d-", n),
			}},
		}}
	},
	"createRefund": func(f *limitFixture) *limitRequest {
		n := f.next()
		return &limitRequest{method: "POST", path: "/api/v1/gateway/refund", body: map[string]any{
			"payment_id": f.paidCharge, "amount": json.Number("0.01"), "reason": "Produto devolvido",
		}, header: http.Header{"Idempotency-Key": {fmt.Sprintf("refund-%d-", n)}}}
	},
	"getTransaction": func(f *limitFixture) *limitRequest {
		return &limitRequest{method: "POST", path: "/api/v1/wallet/transaction", body: map[string]any{"payment_id": f.chargeID}}
	},
	"listTransactions": func(*limitFixture) *limitRequest {
		return &limitRequest{method: "GET", path: "/api/v1/wallet/transactions", query: url.Values{}}
	},
	"listRecurrences": func(*limitFixture) *limitRequest {
		return &limitRequest{method: "GET", path: "/api/v1/gateway/recurrences", query: url.Values{}}
	},
	"getStatement": func(*limitFixture) *limitRequest {
		// The window's own limit (at most 366 days) is not a schema keyword:
		// TestStatementErrors and TestStatementDocumentsWindow check it.
		return &limitRequest{method: "GET", path: "/api/v1/wallet/statement",
			query: url.Values{"from": {"2025-01-01T00:00:00Z"}, "to": {"2025-02-01T00:00:00Z"}}}
	},
	"listRefunds": func(f *limitFixture) *limitRequest {
		return &limitRequest{method: "GET", path: "/api/v1/gateway/refunds", query: url.Values{"payment_id": {f.paidCharge}, "status": {"PENDING"}}}
	},
	"listDeliveries": func(f *limitFixture) *limitRequest {
		return &limitRequest{method: "GET", path: "/api/v1/webhooks/deliveries", query: url.Values{"payment_id": {f.chargeID}}}
	},
	"createRecurrence": func(f *limitFixture) *limitRequest {
		n := f.next()
		// With an end date and a first payment, so that their limits are
		// checked too.
		return &limitRequest{method: "POST", path: "/api/v1/gateway/recurrences", body: map[string]any{
			"external_id": fmt.Sprintf("r-%d-", n),
			"payer":       map[string]any{"name": "Maria Souza", "document": "52998224725"},
			"contract":    "CTR-1001", "description": "Plano mensal",
			"frequency": "MONTHLY", "start_date": "2099-12-10", "end_date": "2100-12-10",
			"amount": json.Number("49.90"), "retry": "NONE", "first_payment": json.Number("49.90"),
			"postbackUrl": "https://merchant.example.com/webhooks/pix",
			"splits":      []any{map[string]any{"account_id": f.subAccount, "percent": json.Number("10")}},
		}, header: http.Header{"Idempotency-Key": {fmt.Sprintf("recurrence-%d-", n)}}}
	},
	"testWebhook": func(*limitFixture) *limitRequest {
		return &limitRequest{method: "POST", path: "/api/v1/webhooks/test", body: map[string]any{"url": "https://merchant.example.com/webhooks/pix"}}
	},
	"sandboxAdvanceClock": func(*limitFixture) *limitRequest {
		// A millisecond at a time leaves the clock where the other base
		// requests expect it.
		return &limitRequest{method: "POST", path: "/api/v1/sandbox/clock", body: map[string]any{"advance": "1ms"}}
	},
	"listDisputes": func(f *limitFixture) *limitRequest {
		return &limitRequest{method: "GET", path: "/api/v1/gateway/disputes",
			query: url.Values{"status": {"OPEN"}, "payment_id": {f.disputeCharge}, "limit": {"10"}}}
	},
	"defendDispute": func(f *limitFixture) *limitRequest {
		// Only the first is taken; the others are refused (422) after
		// their body passed, which is what a limit case checks.
		return &limitRequest{method: "POST", path: "/api/v1/gateway/disputes/" + f.defendDispute + "/defense",
			body: map[string]any{"accept": false, "justification": "O produto foi entregue"}}
	},
	"sandboxDisputeCharge": func(f *limitFixture) *limitRequest {
		return &limitRequest{method: "POST", path: "/api/v1/sandbox/charges/" + f.disputeCharge + "/dispute",
			body: map[string]any{"amount": json.Number("0.01"), "reason": "FRAUD"}}
	},
	"sandboxMedReturn": func(f *limitFixture) *limitRequest {
		return &limitRequest{method: "POST", path: "/api/v1/sandbox/charges/" + f.returnCharge + "/med-return",
			body: map[string]any{"amount": json.Number("0.01"), "natureza": "MED_FRAUDE"}}
	},
	"sandboxResolveDispute": func(f *limitFixture) *limitRequest {
		return &limitRequest{method: "POST", path: "/api/v1/sandbox/disputes/" + f.resolveDispute + "/resolve",
			body: map[string]any{"outcome": "returned", "amount": json.Number("0.01")}}
	},
	"createAccount": func(f *limitFixture) *limitRequest {
		n := f.next()
		return &limitRequest{method: "POST", path: "/api/v1/accounts", body: map[string]any{"name": "Loja do João", "document": "52998224725",
			"external_id": fmt.Sprintf("acct-%d-", n), "postbackUrl": "https://seller.example.com/webhooks/pix"}}
	},
	"listAccounts": func(*limitFixture) *limitRequest {
		return &limitRequest{method: "GET", path: "/api/v1/accounts", query: url.Values{"limit": {"10"}}}
	},
	"createTransfer": func(f *limitFixture) *limitRequest {
		n := f.next()
		return &limitRequest{method: "POST", path: "/api/v1/wallet/transfers", body: map[string]any{"to_account_id": f.subAccount,
			"amount": json.Number("0.01"), "description": "Repasse", "external_id": fmt.Sprintf("tr-%d-", n)},
			header: http.Header{"Idempotency-Key": {fmt.Sprintf("transfer-%d-", n)}}}
	},
	"sandboxPayCharge": func(f *limitFixture) *limitRequest {
		// Paying again on another day answers the charge as first paid.
		return &limitRequest{method: "POST", path: "/api/v1/sandbox/charges/" + f.dueCharge + "/pay", body: map[string]any{"date": "2099-12-10"}}
	},
}

// TestOpenAPILimits checks, for every limit openapi.yaml states on a request
// body field, query parameter or header, that a request violating it by one
// gets 400 and one exactly at it does not: the document is the client's
// only statement of what the server accepts, so the two must agree.
func TestOpenAPILimits(t *testing.T) {
	t.Parallel()
	doc := loadAPIDocument(t)
	g := &limitGen{t: t}
	sample := &limitFixture{chargeID: "3f1c2a9e-7b4d-4c21-9a6e-2d8f5b7c1e04", paidCharge: "9b2e4f6a-1c3d-4e5f-8a7b-6c5d4e3f2a1b",
		dueCharge: "5b0d6c1e-2f3a-4b4c-8d5e-6f7a8b9c0d1e", disputeCharge: "6c1e2f3a-4b4c-4d5e-8f7a-8b9c0d1e2f3a",
		returnCharge: "7d2f3a4b-5c6d-4e7f-8a9b-0c1d2e3f4a5b", defendDispute: "8e3a4b5c-6d7e-4f8a-9b0c-1d2e3f4a5b6c",
		resolveDispute: "9f4b5c6d-7e8f-4a9b-8c1d-2e3f4a5b6c7d", subAccount: sampleSubAccount}
	covered := map[string]bool{}
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			base, ok := baseRequests[op.OperationID]
			hasLimits := op.RequestBody != nil || slices.ContainsFunc(op.Parameters, func(p *openapi3.ParameterRef) bool { return p.Value.In != "path" })
			if !ok {
				require.False(t, hasLimits, "%s %s (%s) has request limits but no base request in this test", method, path, op.OperationID)
				continue
			}
			covered[op.OperationID] = true
			req := base(sample)
			if op.RequestBody != nil {
				s := op.RequestBody.Value.Content.Get("application/json").Schema
				g.walk(op.OperationID, "body", nil, s, req.body, func(*limitRequest) {})
			}
			for _, p := range op.Parameters {
				switch p.Value.In {
				case "query", "header":
					var v any
					if p.Value.In == "query" && req.query.Has(p.Value.Name) {
						v = req.query.Get(p.Value.Name)
					} else if p.Value.In == "header" && req.header.Get(p.Value.Name) != "" {
						v = req.header.Get(p.Value.Name)
					}
					if p.Value.Required {
						g.add(limitCase{op: op.OperationID, where: p.Value.In, path: []string{p.Value.Name}, rule: "required",
							bad: func(r *limitRequest) { r.del(p.Value.In, []string{p.Value.Name}) }})
					}
					g.walk(op.OperationID, p.Value.In, []string{p.Value.Name}, p.Value.Schema, v, func(*limitRequest) {})
				}
			}
		}
	}
	for op := range baseRequests {
		require.True(t, covered[op], "base request for %s, which the document does not have", op)
	}
	if t.Failed() {
		return
	}
	slices.SortStableFunc(g.cases, func(a, b limitCase) int { return strings.Compare(a.name(), b.name()) })
	limits := map[string]bool{}
	for _, c := range g.cases {
		limits[c.op+" "+c.where+" "+strings.Join(c.path, ".")+" "+strings.Fields(c.rule)[0]] = true
	}
	t.Logf("%d documented limits, %d cases", len(limits), len(g.cases))
	require.GreaterOrEqual(t, len(limits), minDocumentedLimits, "limits were removed from openapi.yaml")

	databases(t, func(t *testing.T, open func(t *testing.T) *store.DB) {
		b := setup(t, open, options{})
		// The test events go nowhere: this test is about what requests the
		// server accepts, and the example host does not resolve here.
		b.gw.SendWebhook = func(context.Context, pix.Event) pix.Attempt { return pix.Attempt{StatusCode: http.StatusNoContent} }
		f := &limitFixture{n: 1000}
		f.chargeID = b.createCharge("fx-lookup", "10.00").json["payment_id"].(string)
		f.paidCharge = b.createCharge("fx-refund", "100000.00").json["payment_id"].(string)
		require.Equal(t, http.StatusOK, b.do("POST", "/api/v1/sandbox/charges/"+f.paidCharge+"/pay", nil).status)
		funds := b.createCharge("fx-funds", "1000000.00").json["payment_id"].(string)
		require.Equal(t, http.StatusOK, b.do("POST", "/api/v1/sandbox/charges/"+funds+"/pay", nil).status)
		sub, _ := b.subAccount("Vendedor", "fx-sub")
		f.subAccount = sub["account_id"].(string)
		for i := range 11 {
			d, _ := b.subAccount(fmt.Sprint("Vendedor ", i), fmt.Sprint("fx-split-", i))
			f.splitAccounts = append(f.splitAccounts, d["account_id"].(string))
		}
		due := baseRequests["createCharge"](f)
		r := b.sendLimit(due)
		require.Equal(t, http.StatusCreated, r.status, string(r.body))
		f.dueCharge = r.json["payment_id"].(string)
		f.disputeCharge, f.returnCharge = b.paidCharge("fx-dispute", "100000.00"), b.paidCharge("fx-return", "100000.00")
		f.defendDispute = b.dispute(b.paidCharge("fx-defend", "10.00"), nil)["dispute_id"].(string)
		f.resolveDispute = b.dispute(b.paidCharge("fx-resolve", "10.00"), nil)["dispute_id"].(string)

		for op, base := range baseRequests {
			r := b.sendLimit(f.real(base(f)))
			require.True(t, r.status < 300, "base request of %s: %d %s", op, r.status, r.body)
		}
		for _, c := range g.cases {
			base := baseRequests[c.op]
			if c.bad != nil {
				req := base(f)
				c.bad(req)
				r := b.sendLimit(f.real(req))
				require.Equal(t, c.badStatus, r.status, "%s: violating request was not refused\nrequest: %s\nresponse: %s", c.name(), req, r.body)
				if details, ok := r.json["details"].([]any); ok && c.badStatus == http.StatusBadRequest && len(c.fields) > 0 {
					var named []string
					for _, d := range details {
						named = append(named, fmt.Sprint(d.(map[string]any)["field"]))
					}
					require.True(t, slices.ContainsFunc(named, func(f string) bool { return slices.Contains(c.fields, f) }),
						"%s: the 400 names %v, not %v\nresponse: %s", c.name(), named, c.fields, r.body)
				} else if c.badStatus == http.StatusBadRequest && r.json["error"] != nil && len(c.fields) > 0 {
					require.Fail(t, "no details", "%s: the 400 does not say which field\nresponse: %s", c.name(), r.body)
				}
			}
			if c.good != nil {
				req := base(f)
				c.good(req)
				r := b.sendLimit(f.real(req))
				require.True(t, r.status != http.StatusBadRequest && r.status < 500,
					"%s: request exactly at the limit was refused\nresponse: %d %s\nrequest: %s", c.name(), r.status, clipLimit(string(r.body)), req)
			}
		}
	})
}

// sendLimit sends req with the bundle's credentials through the checking
// client, so every answer is also validated against the document.
func (b *bundle) sendLimit(req *limitRequest) response {
	b.t.Helper()
	u := req.path
	if len(req.query) > 0 {
		u += "?" + req.query.Encode()
	}
	var body any
	if req.body != nil {
		raw, err := json.Marshal(req.body)
		require.NoError(b.t, err)
		body = raw
	}
	hr := b.request(req.method, u, body, "application/json")
	for k, v := range req.header {
		hr.Header[http.CanonicalHeaderKey(k)] = v
	}
	return b.exchange(b.http, hr)
}

func (r *limitRequest) String() string {
	raw, _ := json.Marshal(r.body)
	return fmt.Sprintf("%s %s?%s headers %v body %s", r.method, r.path, r.query.Encode(), r.header, clipLimit(string(raw)))
}

func clipLimit(s string) string {
	if len(s) > 600 {
		return s[:600] + "…"
	}
	return s
}

// set puts v at path in the body (keys, or indexes of arrays), or sets a
// query parameter or header.
func (r *limitRequest) set(where string, path []string, v any) {
	switch where {
	case "query":
		r.query.Set(path[0], v.(string))
	case "header":
		r.header[http.CanonicalHeaderKey(path[0])] = []string{v.(string)}
	default:
		var cur any = r.body
		for i, k := range path {
			last := i == len(path)-1
			switch c := cur.(type) {
			case map[string]any:
				if last {
					c[k] = v
					return
				}
				if c[k] == nil {
					c[k] = map[string]any{}
				}
				cur = c[k]
			case []any:
				n, _ := strconv.Atoi(k)
				if last {
					c[n] = v
					return
				}
				cur = c[n]
			}
		}
	}
}

func (r *limitRequest) del(where string, path []string) {
	switch where {
	case "query":
		r.query.Del(path[0])
	case "header":
		r.header.Del(path[0])
	default:
		var cur any = r.body
		for _, k := range path[:len(path)-1] {
			switch c := cur.(type) {
			case map[string]any:
				cur = c[k]
			case []any:
				n, _ := strconv.Atoi(k)
				cur = c[n]
			}
		}
		delete(cur.(map[string]any), path[len(path)-1])
	}
}
