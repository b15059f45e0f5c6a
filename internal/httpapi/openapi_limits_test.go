package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/internal/backoffice"
	"github.com/pixgate/pixgate/internal/httpapi"
	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/store"
	"github.com/pixgate/pixgate/internal/testkit"
)

// minDocumentedLimits is how many request limits openapi.yaml states (each
// enum counted once). Removing a limit from the document makes the test fail
// here, so that a limit cannot silently stop being checked; raise it when
// limits are added.
const minDocumentedLimits = 187

// lookupKeys are the request values that only find something: a malformed
// one matches nothing, so the document promises 404 for it, not 400.
var lookupKeys = map[string]bool{
	"createRefund body payment_id":    true,
	"createRefund body external_id":   true,
	"listDeliveries query payment_id": true,
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
	"createCharge body due.discounts maxItems 3 (bad)": {
		map[string]any{"until": "2099-12-01", "amount": json.Number("4")},
		map[string]any{"until": "2099-12-02", "amount": json.Number("3")},
		map[string]any{"until": "2099-12-03", "amount": json.Number("2")},
		map[string]any{"until": "2099-12-04", "amount": json.Number("1")},
	},
}

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
		dueCharge: "5b0d6c1e-2f3a-4b4c-8d5e-6f7a8b9c0d1e"}
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
		due := baseRequests["createCharge"](f)
		r := b.sendLimit(due)
		require.Equal(t, http.StatusCreated, r.status, string(r.body))
		f.dueCharge = r.json["payment_id"].(string)

		for op, base := range baseRequests {
			r := b.sendLimit(base(f))
			require.True(t, r.status < 300, "base request of %s: %d %s", op, r.status, r.body)
		}
		for _, c := range g.cases {
			base := baseRequests[c.op]
			if c.bad != nil {
				req := base(f)
				c.bad(req)
				r := b.sendLimit(req)
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
				r := b.sendLimit(req)
				require.True(t, r.status != http.StatusBadRequest && r.status < 500,
					"%s: request exactly at the limit was refused\nrequest: %s\nresponse: %d %s", c.name(), req, r.status, r.body)
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

// limitGen derives limit cases from request schemas.
type limitGen struct {
	t     *testing.T
	cases []limitCase
}

func (g *limitGen) add(c limitCase) {
	if c.badStatus == 0 {
		c.badStatus = http.StatusBadRequest
		// Only the form of a lookup key is answered 404; its absence is 400.
		if lookupKeys[c.op+" "+c.where+" "+strings.Join(c.path, ".")] && c.rule != "required" {
			c.badStatus = http.StatusNotFound
		}
	}
	if c.fields == nil && c.where != "query" {
		c.fields = []string{fieldName(c.path)}
	}
	g.cases = append(g.cases, c)
}

// fieldName is how the server names a field in details: payer.address.city,
// products[0].name.
func fieldName(path []string) string {
	var b strings.Builder
	for i, k := range path {
		if _, err := strconv.Atoi(k); err == nil {
			b.WriteString("[" + k + "]")
			continue
		}
		if i > 0 {
			b.WriteByte('.')
		}
		b.WriteString(k)
	}
	return b.String()
}

// walk collects the limits of schema s at path, whose value in the base
// request is base (nil when absent); pre runs before each case's own edit
// (it selects a oneOf alternative).
func (g *limitGen) walk(op, where string, path []string, sref *openapi3.SchemaRef, base any, pre func(*limitRequest)) {
	g.t.Helper()
	if sref == nil || sref.Value == nil {
		return
	}
	s := sref.Value
	key := op + " " + where + " " + strings.Join(path, ".")
	// An allOf part constrains the same value (a request's "one of these
	// identifiers" rule): its limits are the value's.
	for _, part := range s.AllOf {
		g.walk(op, where, path, part, base, pre)
	}
	if len(s.Properties) > 0 || len(s.AnyOf) > 0 || len(s.OneOf) > 0 {
		obj, _ := base.(map[string]any)
		for _, name := range s.Required {
			p := append(slices.Clone(path), name)
			g.add(limitCase{op: op, where: where, path: p, rule: "required",
				bad: func(r *limitRequest) { pre(r); r.del(where, p) }})
		}
		if len(s.AnyOf) > 0 {
			var keys []string
			for _, alt := range s.AnyOf {
				keys = append(keys, alt.Value.Required...)
			}
			clear := func(r *limitRequest) {
				pre(r)
				for _, k := range keys {
					r.del(where, append(slices.Clone(path), k))
				}
			}
			fields := make([]string, len(keys))
			for i, k := range keys {
				fields[i] = fieldName(append(slices.Clone(path), k))
			}
			g.add(limitCase{op: op, where: where, path: path, rule: "anyOf none of " + strings.Join(keys, ", "), bad: clear, fields: fields,
				badStatus: http.StatusBadRequest})
			for _, alt := range s.AnyOf {
				for _, k := range alt.Value.Required {
					ps := alt.Value.Properties[k]
					if ps == nil || ps.Value.MinLength == 0 {
						continue
					}
					short := strings.Repeat("a", int(ps.Value.MinLength)-1)
					p := append(slices.Clone(path), k)
					g.add(limitCase{op: op, where: where, path: p, rule: fmt.Sprintf("anyOf minLength %d", ps.Value.MinLength),
						bad: func(r *limitRequest) { clear(r); r.set(where, p, short) }, fields: fields, badStatus: http.StatusBadRequest})
				}
			}
		}
		disc := ""
		for _, alt := range s.OneOf {
			for name, ps := range alt.Value.Properties {
				if ps.Value.Const != nil {
					disc = name
				}
			}
		}
		// Members of other alternatives are not carried into a branch: the
		// alternatives exclude each other (a fine is a percent or an amount).
		others := func(alt *openapi3.SchemaRef) map[string]bool {
			out := map[string]bool{}
			for _, o := range s.OneOf {
				for name := range o.Value.Properties {
					if o != alt && alt.Value.Properties[name] == nil {
						out[name] = true
					}
				}
			}
			return out
		}
		for _, alt := range s.OneOf {
			branch := map[string]any{}
			skip := others(alt)
			for k, v := range obj {
				if !skip[k] {
					branch[k] = v
				}
			}
			for name, ps := range alt.Value.Properties {
				switch {
				case ps.Value.Const != nil:
					branch[name] = ps.Value.Const
				case len(ps.Value.Examples) > 0:
					branch[name] = ps.Value.Examples[0]
				}
			}
			require.NoError(g.t, alt.Value.VisitJSON(branch), "%s: the example of %s", key, alt.Value.Title)
			branchPre := func(r *limitRequest) { pre(r); r.set(where, path, cloneMap(branch)) }
			discPath := path
			if disc != "" {
				discPath = append(slices.Clone(path), disc)
			}
			g.add(limitCase{op: op, where: where, path: discPath, rule: "oneOf " + alt.Value.Title, good: branchPre})
			for name, ps := range alt.Value.Properties {
				if name != disc {
					g.walkNamed(op, where, append(slices.Clone(path), name), ps, branch[name], branchPre, " ("+alt.Value.Title+")")
				}
			}
		}
		names := make([]string, 0, len(s.Properties))
		for name := range s.Properties {
			names = append(names, name)
		}
		slices.Sort(names)
		for _, name := range names {
			p := append(slices.Clone(path), name)
			ps := s.Properties[name]
			if name == disc {
				// Each value is accepted with its own alternative (above);
				// only the refusal of other values is checked here.
				g.enumBad(op, where, p, ps.Value, pre)
				continue
			}
			var v any
			if obj != nil {
				v = obj[name]
			}
			g.walk(op, where, p, ps, v, pre)
		}
		return
	}
	g.walkNamed(op, where, path, sref, base, pre, "")
}

// walkNamed collects the limits of a leaf or array schema; suffix tells
// apart the same path in different oneOf alternatives.
func (g *limitGen) walkNamed(op, where string, path []string, sref *openapi3.SchemaRef, base any, pre func(*limitRequest), suffix string) {
	g.t.Helper()
	s := sref.Value
	key := op + " " + where + " " + strings.Join(path, ".")
	at := func(v any) func(*limitRequest) {
		return func(r *limitRequest) { pre(r); r.set(where, path, v) }
	}
	check := func(rule string, good, bad any) {
		g.t.Helper()
		if good != nil {
			require.NoError(g.t, visit(s, where, good), "%s %s: generated value %v is outside the document", key, rule, good)
		}
		if bad != nil {
			err := visit(s, where, bad)
			if err == nil {
				err = tooManyDecimals(g.t, s, bad)
			}
			require.Error(g.t, err, "%s %s: generated value %v is within the document", key, rule, bad)
		}
	}
	addPair := func(rule string, good, bad any) {
		check(rule, good, bad)
		c := limitCase{op: op, where: where, path: path, rule: rule + suffix}
		if bad != nil {
			c.bad = at(bad)
		}
		if good != nil {
			c.good = at(good)
		}
		g.add(c)
	}
	if s.Type.Is("array") {
		items, _ := base.([]any)
		require.NotEmpty(g.t, items, "%s: the base request needs an item", key)
		copies := func(n uint64) []any {
			out := make([]any, n)
			for i := range out {
				out[i] = cloneAny(items[0])
			}
			return out
		}
		if s.MinItems > 0 {
			addPair(fmt.Sprintf("minItems %d", s.MinItems), copies(s.MinItems), copies(s.MinItems-1))
		}
		if s.MaxItems != nil {
			rule := fmt.Sprintf("maxItems %d", *s.MaxItems)
			good, bad := copies(*s.MaxItems), copies(*s.MaxItems+1)
			if o, found := generatedArrays[key+" "+rule]; found {
				good, bad = o, generatedArrays[key+" "+rule+" (bad)"]
			}
			addPair(rule, good, bad)
		}
		g.walk(op, where, append(slices.Clone(path), "0"), s.Items, items[0], pre)
		return
	}
	if s.Type.Includes("number") || s.Type.Includes("integer") {
		g.numberLimits(s, where, addPair)
		return
	}
	if !s.Type.Includes("string") {
		return
	}
	str, _ := base.(string)
	if str == "" && len(s.Examples) > 0 {
		str, _ = s.Examples[0].(string)
	}
	// Lengths count characters, so values are padded with a two-byte one
	// where the pattern allows; a limit in bytes (x-length-unit) is padded
	// with ASCII only, from the base value without its non-ASCII.
	bytesUnit := s.Extensions["x-length-unit"] == "bytes"
	// sized returns a value of n characters that matches the pattern, and
	// the pad it used (a longer value by one repeats it).
	sized := func(n int) (string, string, bool) {
		from := str
		pads := []string{"ã", "a", "1"}
		if bytesUnit {
			pads = pads[1:]
			from = strings.Map(func(r rune) rune {
				if r >= utf8.RuneSelf {
					return -1
				}
				return r
			}, str)
		}
		for _, pad := range pads {
			v := from
			if n <= utf8.RuneCountInString(from) {
				v = string([]rune(from)[:n])
			} else {
				v += strings.Repeat(pad, n-utf8.RuneCountInString(from))
			}
			if s.Pattern == "" || regexp.MustCompile(s.Pattern).MatchString(v) {
				return v, pad, true
			}
		}
		return "", "", false
	}
	lengthPair := func(rule string, good string, ok bool, bad func(string) string) {
		if o, found := generatedOverrides[key+" "+rule+suffix]; found {
			addPair(rule, o.good, o.bad)
			return
		}
		require.True(g.t, ok, "%s %s%s: no value of that length matches the pattern; add an override", key, rule, suffix)
		addPair(rule, good, bad(good))
	}
	if s.MinLength > 0 {
		good, _, ok := sized(int(s.MinLength))
		lengthPair(fmt.Sprintf("minLength %d", s.MinLength), good, ok, func(v string) string {
			r := []rune(v)
			return string(r[:len(r)-1])
		})
	}
	if s.MaxLength != nil {
		good, pad, ok := sized(int(*s.MaxLength))
		lengthPair(fmt.Sprintf("maxLength %d", *s.MaxLength), good, ok, func(v string) string { return v + pad })
	}
	if s.Pattern != "" {
		re := regexp.MustCompile(s.Pattern)
		require.True(g.t, re.MatchString(str), "%s: the base value %q does not match %s", key, str, s.Pattern)
		var bad string
		found := false
		for _, c := range []string{"0" + strings.TrimPrefix(str, str[:1]), str + "!", str[:1] + " " + str[1:], " "} {
			n := uint64(utf8.RuneCountInString(c))
			if !re.MatchString(c) && n >= s.MinLength && (s.MaxLength == nil || n <= *s.MaxLength) {
				bad, found = c, true
				break
			}
		}
		require.True(g.t, found, "%s: no near value violates %s", key, s.Pattern)
		addPair("pattern "+s.Pattern, str, bad)
	}
	if len(s.Enum) > 0 {
		g.enumBad(op, where, path, s, pre)
		for _, v := range s.Enum {
			check("enum", v, nil)
			g.add(limitCase{op: op, where: where, path: path, rule: fmt.Sprintf("enum value %v", v), good: at(v)})
		}
	}
	if s.Format == "date-time" {
		addPair("format date-time", "2025-01-31T13:45:00.000Z", "2025-01-31")
	}
}

// enumBad adds the refusal of a value outside enum s.
func (g *limitGen) enumBad(op, where string, path []string, s *openapi3.Schema, pre func(*limitRequest)) {
	first := fmt.Sprint(s.Enum[0])
	for _, c := range []string{strings.ToLower(first), first + "X"} {
		if !slices.Contains(s.Enum, any(c)) {
			g.add(limitCase{op: op, where: where, path: path, rule: "enum",
				bad: func(r *limitRequest) { pre(r); r.set(where, path, c) }})
			return
		}
	}
	g.t.Fatalf("%s %v: no value outside the enum", op, path)
}

// numberLimits adds the bounds of a number (exact decimal arithmetic: the
// step is multipleOf, or 10^-n for x-decimals n, or 1 for integers).
func (g *limitGen) numberLimits(s *openapi3.Schema, where string, addPair func(rule string, good, bad any)) {
	step := big.NewRat(1, 1)
	if s.MultipleOf != nil {
		step = ratOf(*s.MultipleOf)
	}
	decimals, hasDecimals := xDecimals(g.t, s)
	if hasDecimals {
		step = new(big.Rat).SetFrac(big.NewInt(1), new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(decimals)), nil))
	}
	val := func(r *big.Rat) any {
		txt := ratText(r)
		if where == "body" {
			return json.Number(txt)
		}
		return txt
	}
	plus := func(a, b *big.Rat) *big.Rat { return new(big.Rat).Add(a, b) }
	minus := func(a, b *big.Rat) *big.Rat { return new(big.Rat).Sub(a, b) }
	if s.ExclusiveMin.Value != nil {
		m := ratOf(*s.ExclusiveMin.Value)
		addPair("exclusiveMinimum "+ratText(m), val(plus(m, step)), val(m))
	}
	if s.Min != nil {
		m := ratOf(*s.Min)
		addPair("minimum "+ratText(m), val(m), val(minus(m, step)))
	}
	if s.Max != nil {
		m := ratOf(*s.Max)
		addPair("maximum "+ratText(m), val(m), val(plus(m, step)))
	}
	if s.ExclusiveMax.Value != nil {
		m := ratOf(*s.ExclusiveMax.Value)
		addPair("exclusiveMaximum "+ratText(m), val(minus(m, step)), val(m))
	}
	if s.MultipleOf != nil || hasDecimals {
		one := big.NewRat(1, 1)
		addPair("step "+ratText(step), val(plus(one, step)), val(plus(one, new(big.Rat).Quo(step, big.NewRat(10, 1)))))
	}
	if hasDecimals {
		// The number JSON Schema validators read badly as a multiple of
		// 0.01 (19.9 / 0.01 is not an integer in binary floating point)
		// is a valid amount: the server reads the text exactly.
		addPair("x-decimals 19.9", val(big.NewRat(199, 10)), val(big.NewRat(19999, 1000)))
	}
}

// tooManyDecimals is the document's x-decimals limit on v (a number's
// text), which JSON Schema validators do not know: an error when v has more
// decimals than s allows.
func tooManyDecimals(t *testing.T, s *openapi3.Schema, v any) error {
	n, ok := xDecimals(t, s)
	if !ok {
		return nil
	}
	txt := fmt.Sprint(v)
	if _, frac, found := strings.Cut(txt, "."); found && len(frac) > n {
		return fmt.Errorf("%s has more than %d decimals", txt, n)
	}
	return nil
}

// xDecimals reads the x-decimals extension of s: the most decimals its
// numbers may have.
func xDecimals(t *testing.T, s *openapi3.Schema) (int, bool) {
	v, ok := s.Extensions["x-decimals"]
	if !ok {
		return 0, false
	}
	switch n := v.(type) {
	case float64:
		return int(n), true
	case json.Number:
		i, err := n.Int64()
		require.NoError(t, err)
		return int(i), true
	case int:
		return n, true
	}
	t.Fatalf("x-decimals is %T %v, not a number", v, v)
	return 0, false
}

func ratOf(f float64) *big.Rat {
	r, ok := new(big.Rat).SetString(strconv.FormatFloat(f, 'f', -1, 64))
	if !ok {
		panic(f)
	}
	return r
}

// ratText writes r with as few decimals as it needs.
func ratText(r *big.Rat) string {
	for prec := 0; ; prec++ {
		txt := r.FloatString(prec)
		if back, _ := new(big.Rat).SetString(txt); back.Cmp(r) == 0 {
			return txt
		}
	}
}

// visit validates v (a body value, or a parameter's text) against s.
func visit(s *openapi3.Schema, where string, v any) error {
	if where != "body" {
		if txt, ok := v.(string); ok && (s.Type.Includes("integer") || s.Type.Includes("number")) {
			f, err := strconv.ParseFloat(txt, 64)
			if err != nil {
				return err
			}
			v = f
		}
		if s.Format == "date-time" {
			if _, err := time.Parse(time.RFC3339, v.(string)); err != nil {
				return err
			}
		}
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return err
	}
	var generic any
	if err := json.Unmarshal(raw, &generic); err != nil {
		return err
	}
	return s.VisitJSON(generic, openapi3.EnableJSONSchema2020())
}

func cloneAny(v any) any {
	switch c := v.(type) {
	case map[string]any:
		return cloneMap(c)
	case []any:
		out := make([]any, len(c))
		for i, e := range c {
			out[i] = cloneAny(e)
		}
		return out
	}
	return v
}

func cloneMap(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = cloneAny(v)
	}
	return out
}

// loadAPIDocument loads the served document the way clients read it.
func loadAPIDocument(t *testing.T) *openapi3.T {
	t.Helper()
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(httpapi.OpenAPIDocument())
	require.NoError(t, err)
	require.NoError(t, doc.Validate(loader.Context))
	return doc
}

// TestOpenAPILinks checks the document's links, which stateful API testers
// follow from one response to the next request: each names an operation of
// the document, fills only parameters and body fields that operation has,
// from a response field that exists; and the chains a client needs are there.
func TestOpenAPILinks(t *testing.T) {
	t.Parallel()
	doc := loadAPIDocument(t)
	ops := map[string]*openapi3.Operation{}
	for _, item := range doc.Paths.Map() {
		for _, op := range item.Operations() {
			ops[op.OperationID] = op
		}
	}
	found := map[string][]string{}
	for _, item := range doc.Paths.Map() {
		for _, op := range item.Operations() {
			for status, resp := range op.Responses.Map() {
				for name, l := range resp.Value.Links {
					where := fmt.Sprintf("%s %s link %s", op.OperationID, status, name)
					target := ops[l.Value.OperationID]
					require.NotNil(t, target, "%s: no operation %q", where, l.Value.OperationID)
					found[op.OperationID] = append(found[op.OperationID], l.Value.OperationID)
					schema := resp.Value.Content.Get("application/json").Schema
					for param, expr := range l.Value.Parameters {
						require.True(t, slices.ContainsFunc(target.Parameters, func(p *openapi3.ParameterRef) bool { return p.Value.Name == param }),
							"%s: %s has no parameter %s", where, l.Value.OperationID, param)
						requireResponseField(t, where, schema, expr)
					}
					if l.Value.RequestBody != nil {
						body := target.RequestBody.Value.Content.Get("application/json").Schema.Value
						for field, expr := range l.Value.RequestBody.(map[string]any) {
							require.Contains(t, body.Properties, field, "%s: the body of %s has no %s", where, l.Value.OperationID, field)
							requireResponseField(t, where, schema, expr)
						}
					}
				}
			}
		}
	}
	for from, to := range map[string][]string{
		"createCharge":        {"getTransaction", "sandboxPayCharge", "createRefund", "listDeliveries"},
		"createPayout":        {"getTransaction", "listDeliveries"},
		"createRefund":        {"getRefund"},
		"sandboxPayCharge":    {"createRefund"},
		"listDeliveries":      {"retryDelivery"},
		"getRefund":           {"getTransaction"},
		"sandboxExpireCharge": {"getTransaction"},
		"createRecurrence":    {"getRecurrence", "cancelRecurrence", "sandboxApproveRecurrence", "sandboxRejectRecurrence"},
		"getRecurrence":       {"getTransaction", "sandboxNextCycle"},
		"sandboxNextCycle":    {"sandboxPayCharge", "sandboxFailCharge", "getTransaction"},
	} {
		for _, op := range to {
			require.Contains(t, found[from], op, "no link from %s to %s", from, op)
		}
	}
}

// requireResponseField checks that expr, "$response.body#/a/0/b", points at
// a field the response schema documents.
func requireResponseField(t *testing.T, where string, schema *openapi3.SchemaRef, expr any) {
	t.Helper()
	text, _ := expr.(string)
	pointer, ok := strings.CutPrefix(text, "$response.body#/")
	require.True(t, ok, "%s: %v is not a $response.body expression", where, expr)
	s := schema.Value
	for _, part := range strings.Split(pointer, "/") {
		if _, err := strconv.Atoi(part); err == nil {
			require.NotNil(t, s.Items, "%s: %s: %s indexes a non-array", where, text, part)
			s = s.Items.Value
			continue
		}
		p := s.Properties[part]
		require.NotNil(t, p, "%s: %s: no field %s", where, text, part)
		s = p.Value
	}
}

// TestOpenAPIPayStatus checks the documented answers of the payer's status
// endpoint through the checking client (its own test reads them unchecked).
func TestOpenAPIPayStatus(t *testing.T) {
	t.Parallel()
	b := setup(t, testkit.OpenSQLite, options{})
	id := b.createCharge("status-doc", "10.00").json["payment_id"].(string)
	none := backoffice.Credentials{}
	for path, status := range map[string]int{
		"/pay/" + id + "/status":                           http.StatusOK,
		"/pay/0b7c3a52-2222-4222-8222-222222222222/status": http.StatusNotFound,
		"/pay/" + id + "%00/status":                        http.StatusBadRequest,
		"/pay/" + id + "%00":                               http.StatusBadRequest,
		"/pay/0b7c3a52-2222-4222-8222-222222222222":        http.StatusNotFound,
	} {
		r := b.send(b.http, "GET", path, nil, "", none)
		require.Equal(t, status, r.status, path)
	}
}
