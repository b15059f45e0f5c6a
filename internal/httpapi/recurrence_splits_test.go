package httpapi_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/internal/store"
)

// TestRecurrenceSplitsEchoed: a recurrence's splits come back as the
// request gave them — percents or amounts, numbers in order — in the
// create answer, its replay, GET and the cancellation; a recurrence
// without splits shows []; the list leaves them out.
func TestRecurrenceSplitsEchoed(t *testing.T) {
	t.Parallel()
	databases(t, func(t *testing.T, open func(t *testing.T) *store.DB) {
		b := setup(t, open, options{start: spNoon(t, "2026-12-01")})
		s := b.sellers(2)
		const base = "/api/v1/gateway/recurrences"
		entry := func(account, kind, n string) any {
			return map[string]any{"account_id": account, kind: json.Number(n)}
		}
		cases := []struct {
			ext  string
			sent []any
			want []any
		}{
			{ext: "rec-percent", sent: []any{percent(s[0].account, "12.50"), percent(s[1].account, "0.05")},
				want: []any{entry(s[0].account, "percent", "12.5"), entry(s[1].account, "percent", "0.05")}},
			{ext: "rec-amount", sent: []any{fixed(s[1].account, "10.00"), fixed(s[0].account, "0.99")},
				want: []any{entry(s[1].account, "amount", "10"), entry(s[0].account, "amount", "0.99")}},
			{ext: "rec-plain", want: []any{}},
		}
		ids := map[string]string{}
		for _, c := range cases {
			req := validRecurrence(c.ext)
			if c.sent != nil {
				req["splits"] = c.sent
			}
			r := b.do("POST", base, req)
			require.Equal(t, http.StatusCreated, r.status, string(r.body))
			require.Equal(t, c.want, r.json["splits"], "%s: create", c.ext)
			id := r.json["recurrence_id"].(string)
			ids[c.ext] = id

			again := b.do("POST", base, req)
			require.Equal(t, "true", again.header.Get("Idempotent-Replayed"), c.ext)
			require.JSONEq(t, string(r.body), string(again.body), "%s: the replay reads the splits back", c.ext)

			got := b.do("GET", base+"/"+id, nil)
			require.Equal(t, http.StatusOK, got.status, string(got.body))
			require.Equal(t, c.want, got.json["data"].(map[string]any)["splits"], "%s: GET", c.ext)
		}

		r := b.do("POST", base+"/"+ids["rec-amount"]+"/cancel", nil)
		require.Equal(t, http.StatusOK, r.status, string(r.body))
		require.Equal(t, "CANCELLED", r.json["data"].(map[string]any)["status"])
		require.Equal(t, cases[1].want, r.json["data"].(map[string]any)["splits"], "cancel")

		list := b.do("GET", base, nil)
		require.Equal(t, http.StatusOK, list.status, string(list.body))
		rows := list.json["data"].([]any)
		require.Len(t, rows, 3)
		for _, row := range rows {
			require.NotContains(t, row.(map[string]any), "splits", "the list costs one query a page")
		}
	})
}
