package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/internal/backoffice"
	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/testkit"
)

// webhookSchemas maps each event name the document's webhooks accept to
// the name of the one webhook that documents it and its body's schema.
func webhookSchemas(t *testing.T, doc *openapi3.T) map[string]struct {
	webhook string
	schema  *openapi3.Schema
} {
	t.Helper()
	out := map[string]struct {
		webhook string
		schema  *openapi3.Schema
	}{}
	for name, item := range doc.Webhooks {
		require.NotNil(t, item.Post, "webhook %s is a POST", name)
		schema := item.Post.RequestBody.Value.Content.Get("application/json").Schema.Value
		events := eventNames(schema)
		require.NotEmpty(t, events, "webhook %s names its events", name)
		for _, e := range events {
			prev, twice := out[e]
			require.False(t, twice, "event %s is documented by both %s and %s", e, prev.webhook, name)
			out[e] = struct {
				webhook string
				schema  *openapi3.Schema
			}{name, schema}
		}
	}
	return out
}

// eventNames lists the values the `event` property of s may take (enum or
// const), also inside its oneOf, anyOf and allOf alternatives.
func eventNames(s *openapi3.Schema) []string {
	var out []string
	if p := s.Properties["event"]; p != nil {
		for _, v := range p.Value.Enum {
			out = append(out, fmt.Sprint(v))
		}
		if p.Value.Const != nil {
			out = append(out, fmt.Sprint(p.Value.Const))
		}
	}
	for _, alts := range []openapi3.SchemaRefs{s.OneOf, s.AnyOf, s.AllOf} {
		for _, a := range alts {
			out = append(out, eventNames(a.Value)...)
		}
	}
	return out
}

// TestOpenAPIWebhookBodies checks the webhooks the document describes
// against what pixgate sends: every EventName is documented by exactly one
// webhook, each webhook's examples match its schema, and the bodies a
// sandbox round of charges and MED disputes (opened, released, returned,
// and a return nobody announced) writes to the outbox match the schema of
// the webhook their event names; the deliveries list of a disputed charge
// matches the document too.
func TestOpenAPIWebhookBodies(t *testing.T) {
	t.Parallel()
	doc := loadAPIDocument(t)
	schemas := webhookSchemas(t, doc)
	names := doc.Components.Schemas["EventName"].Value.Enum
	var eventName []string
	for _, v := range names {
		eventName = append(eventName, fmt.Sprint(v))
	}
	var documented []string
	for e := range schemas {
		if e != "webhook.test" { // sent by the test endpoint only, never stored
			documented = append(documented, e)
		}
	}
	sort.Strings(documented)
	sort.Strings(eventName)
	require.Equal(t, eventName, documented, "EventName lists exactly the events the webhooks document")
	require.Subset(t, eventName, []string{pix.EventDisputeOpened, pix.EventDisputeClosed})

	for name, item := range doc.Webhooks {
		media := item.Post.RequestBody.Value.Content.Get("application/json")
		examples := map[string]any{}
		if media.Example != nil {
			examples["example"] = media.Example
		}
		for k, ex := range media.Examples {
			examples[k] = ex.Value.Value
		}
		require.NotEmpty(t, examples, "webhook %s has an example", name)
		for k, ex := range examples {
			require.NoError(t, media.Schema.Value.VisitJSON(ex, openapi3.EnableJSONSchema2020()), "webhook %s, example %s", name, k)
		}
	}

	b := setup(t, testkit.OpenSQLite, options{})
	released, returned, unannounced := b.paidCharge("wh-1", "100"), b.paidCharge("wh-2", "100"), b.paidCharge("wh-3", "100")
	d := b.dispute(released, nil)
	require.Equal(t, http.StatusOK, b.resolve(d["dispute_id"].(string), map[string]any{"outcome": "released"}).status)
	d = b.dispute(returned, map[string]any{"amount": json.Number("40.00"), "reason": "PIX_AUTOMATICO"})
	r := b.resolve(d["dispute_id"].(string), map[string]any{"outcome": "returned", "amount": json.Number("25.50")})
	require.Equal(t, http.StatusOK, r.status, string(r.body))
	r = b.do("POST", "/api/v1/sandbox/charges/"+unannounced+"/med-return", map[string]any{"natureza": "MED_OPERACIONAL"})
	require.Equal(t, http.StatusOK, r.status, string(r.body))

	// A split charge: pix.cashin.paid with splits, pix.split.received to the seller.
	sel := b.sellers(1)[0]
	split := b.splitCharge("wh-split", "100", []any{percent(sel.account, "12.5")})
	b.pay(split)
	splitTx := b.historyOf(sel.cred)[0]["payment_id"].(string)

	seen := map[string]int{}
	for _, id := range []string{released, returned, unannounced, split, splitTx} {
		evs, err := b.db.Events(context.Background(), id)
		require.NoError(t, err)
		for _, e := range evs {
			s, ok := schemas[e.Type]
			require.True(t, ok, "no webhook documents %s", e.Type)
			var body any
			require.NoError(t, json.Unmarshal([]byte(e.Payload), &body))
			require.NoError(t, s.schema.VisitJSON(body, openapi3.EnableJSONSchema2020()), "%s body does not match webhook %s: %s",
				e.Type, s.webhook, e.Payload)
			seen[e.Type]++
		}
		// The deliveries list names each event by EventName.
		cred := []backoffice.Credentials{}
		if id == splitTx {
			cred = append(cred, sel.cred)
		}
		del := b.do("GET", "/api/v1/webhooks/deliveries?payment_id="+id, nil, cred...)
		require.Equal(t, http.StatusOK, del.status, string(del.body))
	}
	require.Equal(t, map[string]int{pix.EventCashinPaid: 4, pix.EventDisputeOpened: 2, pix.EventDisputeClosed: 3, pix.EventSplitReceived: 1}, seen)
	require.Equal(t, "splitEvent", schemas[pix.EventSplitReceived].webhook)
	require.Equal(t, "disputeEvent", schemas[pix.EventDisputeClosed].webhook)
	require.True(t, slices.Contains(eventNames(schemas[pix.EventDisputeOpened].schema), pix.EventDisputeClosed),
		"one webhook documents both dispute events")
}
