package httpapi_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/internal/backoffice"
	"github.com/pixgate/pixgate/internal/store"
)

// refundPage lists the caller's refunds with query q, requiring a 200.
func (b *bundle) refundPage(q url.Values, cred ...backoffice.Credentials) ([]map[string]any, string) {
	b.t.Helper()
	r := b.do("GET", "/api/v1/gateway/refunds?"+q.Encode(), nil, cred...)
	require.Equal(b.t, http.StatusOK, r.status, string(r.body))
	require.Equal(b.t, json.Number("200"), r.json["statusCode"])
	var out []map[string]any
	for _, it := range r.json["data"].([]any) {
		out = append(out, it.(map[string]any))
	}
	next, _ := r.json["next_cursor"].(string)
	require.Contains(b.t, r.json, "next_cursor")
	return out, next
}

// TestListRefunds: GET /api/v1/gateway/refunds lists the caller's refunds
// newest first, each as GET /refunds/{id} shows it, filtered by payment_id
// and status, a page at a time with no row repeated or skipped while new
// refunds arrive; a bad filter, limit or cursor is a 400 naming it and
// another client's refunds are never listed. On both databases.
func TestListRefunds(t *testing.T) {
	t.Parallel()
	databases(t, func(t *testing.T, open func(t *testing.T) *store.DB) {
		b := setup(t, open, options{})
		ctx := context.Background()
		first := b.paidCharge("list-1", "100")
		second := b.paidCharge("list-2", "50")
		var ids []string // oldest first
		refund := func(charge, amount, reason string) string {
			body := map[string]any{"payment_id": charge, "amount": json.Number(amount)}
			if reason != "" {
				body["reason"] = reason
			}
			r := b.refund(body, "")
			require.Equal(t, http.StatusOK, r.status, string(r.body))
			id := r.json["refund_id"].(string)
			ids = append(ids, id)
			return id
		}
		refund(first, "10", "")
		failed := refund(first, "5", "sandbox:fail")
		refund(second, "7.5", "troca")
		refund(first, "1", "")
		b.clock.Advance(2 * 3600e9)
		b.settle()

		// Another client, with a refund of its own.
		other, err := b.bo.CreateClient(ctx, backoffice.ClientParams{Name: "other"})
		require.NoError(t, err)
		rows, next := b.refundPage(url.Values{}, other)
		require.Empty(t, rows)
		require.Empty(t, next)

		// All, newest first, each as GET /refunds/{id} shows it.
		rows, next = b.refundPage(url.Values{})
		require.Empty(t, next)
		require.Len(t, rows, 4)
		for i, row := range rows {
			require.Equal(t, ids[len(ids)-1-i], row["refund_id"])
			one := b.do("GET", "/api/v1/gateway/refunds/"+row["refund_id"].(string), nil)
			require.Equal(t, http.StatusOK, one.status)
			require.Equal(t, one.json["data"], row)
		}

		// Filters.
		rows, _ = b.refundPage(url.Values{"payment_id": {second}})
		require.Len(t, rows, 1)
		require.Equal(t, second, rows[0]["payment_id"])
		require.Equal(t, "troca", rows[0]["reason"])
		rows, _ = b.refundPage(url.Values{"status": {"FAILED"}})
		require.Len(t, rows, 1)
		require.Equal(t, failed, rows[0]["refund_id"])
		rows, _ = b.refundPage(url.Values{"status": {"COMPLETED"}, "payment_id": {first}})
		require.Len(t, rows, 2)
		rows, _ = b.refundPage(url.Values{"payment_id": {"3f1c2a9e-7b4d-4c21-9a6e-2d8f5b7c1e04"}})
		require.Empty(t, rows, "no such charge: nothing")
		rows, _ = b.refundPage(url.Values{"payment_id": {first}}, other)
		require.Empty(t, rows, "another client's charge: nothing")

		// Pages of 3 while a new refund arrives: nothing repeated or skipped.
		page1, next := b.refundPage(url.Values{"limit": {"3"}})
		require.Len(t, page1, 3)
		require.NotEmpty(t, next)
		refund(second, "2", "")
		page2, last := b.refundPage(url.Values{"limit": {"3"}, "cursor": {next}})
		require.Empty(t, last)
		require.Len(t, page2, 1)
		require.Equal(t, ids[0], page2[0]["refund_id"])
		rows, _ = b.refundPage(url.Values{"limit": {"1"}})
		require.Equal(t, ids[len(ids)-1], rows[0]["refund_id"], "the newest first")

		for _, tc := range []struct{ query, field string }{
			{"status=DONE", "status"},
			{"status=completed", "status"},
			{"payment_id=abc", "payment_id"},
			{"limit=0", "limit"},
			{"limit=101", "limit"},
			{"limit=x", "limit"},
			{"cursor=bm90LWEtY3Vyc29y", "cursor"},
			{"cursor=%21%21", "cursor"},
			{"status=FAILED&status=PENDING", "status"},
		} {
			requireFieldError(t, b.do("GET", "/api/v1/gateway/refunds?"+tc.query, nil), tc.field, tc.query)
		}
	})
}
