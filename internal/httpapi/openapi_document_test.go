package httpapi_test

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/internal/backoffice"
	"github.com/pixgate/pixgate/internal/httpapi"
	"github.com/pixgate/pixgate/internal/testkit"
)

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
