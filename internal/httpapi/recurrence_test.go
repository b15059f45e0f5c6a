package httpapi_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/internal/backoffice"
	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/store"
)

func validRecurrence(ext string) map[string]any {
	return map[string]any{"external_id": ext, "payer": map[string]any{"name": "Maria Souza", "document": "52998224725"},
		"contract": "CTR-1001", "description": "Plano mensal", "frequency": "MONTHLY", "start_date": "2026-12-10",
		"end_date": "2027-02-10", "amount": json.Number("49.90"), "retry": "NONE", "postbackUrl": "https://merchant.example.com/rec"}
}

// TestRecurrencesOverHTTP drives a recurrence through the API and the
// sandbox's actions: create (and its replay and bad input), approve, a
// cycle's charge created, paid and failed, cancellation, and the 404s and
// 422s around them.
func TestRecurrencesOverHTTP(t *testing.T) {
	t.Parallel()
	databases(t, func(t *testing.T, open func(t *testing.T) *store.DB) {
		b := setup(t, open, options{start: spNoon(t, "2026-12-01"), fee: pix.FeeRule{PercentBP: 100}})
		const base = "/api/v1/gateway/recurrences"

		bad := validRecurrence("bad")
		bad["frequency"], bad["start_date"], bad["amount"] = "DAILY", "2026-12-02", json.Number("1.001")
		r := b.do("POST", base, bad)
		require.Equal(t, http.StatusBadRequest, r.status, string(r.body))
		fields := map[string]bool{}
		for _, d := range r.json["details"].([]any) {
			fields[d.(map[string]any)["field"].(string)] = true
		}
		require.Equal(t, map[string]bool{"frequency": true, "start_date": true, "amount": true}, fields)

		r = b.do("POST", base, validRecurrence("sub-1"))
		require.Equal(t, http.StatusCreated, r.status, string(r.body))
		require.Equal(t, json.Number("201"), r.json["statusCode"])
		require.Equal(t, "CREATED", r.json["status"])
		require.Equal(t, "2026-12-10", r.json["next_due_date"])
		require.Equal(t, "2027-02-10", r.json["end_date"])
		require.Equal(t, json.Number("49.9"), r.json["amount"])
		require.NotEmpty(t, r.json["qrcode"])
		require.NotEmpty(t, r.json["qrcode_image"])
		require.Nil(t, r.json["first_payment"])
		id := r.json["recurrence_id"].(string)
		again := b.do("POST", base, validRecurrence("sub-1"))
		require.Equal(t, http.StatusCreated, again.status)
		require.Equal(t, "true", again.header.Get("Idempotent-Replayed"))
		require.JSONEq(t, string(r.body), string(again.body))
		other := validRecurrence("sub-1")
		other["amount"] = json.Number("50.00")
		require.Equal(t, http.StatusUnprocessableEntity, b.do("POST", base, other).status)

		otherCred, err := b.bo.CreateClient(context.Background(), backoffice.ClientParams{Name: "other"})
		require.NoError(t, err)
		require.Equal(t, http.StatusNotFound, b.do("GET", base+"/"+id, nil, otherCred).status)
		require.Equal(t, http.StatusNotFound, b.do("POST", base+"/"+id+"/cancel", nil, otherCred).status)
		require.Equal(t, http.StatusNotFound, b.do("GET", base+"/00000000-0000-4000-8000-000000000000", nil).status)
		require.Equal(t, http.StatusNotFound, b.do("GET", base+"/not-an-id", nil).status)

		r = b.do("POST", "/api/v1/sandbox/recurrences/"+id+"/approve", nil)
		require.Equal(t, http.StatusOK, r.status, string(r.body))
		data := r.json["data"].(map[string]any)
		require.Equal(t, "APPROVED", data["status"])
		require.Nil(t, data["cancelled_by"])
		require.Equal(t, http.StatusUnprocessableEntity, b.do("POST", "/api/v1/sandbox/recurrences/"+id+"/reject", nil).status)

		// The first cycle's charge, paid: an ordinary charge of the recurrence.
		r = b.do("POST", "/api/v1/sandbox/recurrences/"+id+"/next-cycle", nil)
		require.Equal(t, http.StatusOK, r.status, string(r.body))
		require.Equal(t, "2026-12-10", r.json["due_date"])
		require.Equal(t, json.Number("49.9"), r.json["amount"])
		first := r.json["payment_id"].(string)
		r = b.do("POST", "/api/v1/wallet/transaction", map[string]any{"payment_id": first})
		require.Equal(t, http.StatusOK, r.status, string(r.body))
		require.Equal(t, id, r.json["data"].(map[string]any)["recurrence_id"])
		// The payer's page of a cycle charge has no code to scan.
		page := b.send(b.raw, "GET", "/pay/"+first, nil, "")
		require.Equal(t, http.StatusOK, page.status, string(page.body))
		require.Contains(t, string(page.body), `data-testid="debited"`)
		require.NotContains(t, string(page.body), `data-testid="qrcode"`)
		require.Equal(t, http.StatusOK, b.do("POST", "/api/v1/sandbox/charges/"+first+"/pay", nil).status)
		require.Equal(t, http.StatusUnprocessableEntity, b.do("POST", "/api/v1/sandbox/charges/"+first+"/fail", nil).status)

		// The second fails its only attempt.
		r = b.do("POST", "/api/v1/sandbox/recurrences/"+id+"/next-cycle", nil)
		require.Equal(t, "2027-01-10", r.json["due_date"])
		second := r.json["payment_id"].(string)
		r = b.do("POST", "/api/v1/sandbox/charges/"+second+"/fail", nil)
		require.Equal(t, http.StatusOK, r.status, string(r.body))
		require.Equal(t, "CANCELLED", r.json["data"].(map[string]any)["status"])

		// The third is withdrawn with the recurrence.
		third := b.do("POST", "/api/v1/sandbox/recurrences/"+id+"/next-cycle", nil).json["payment_id"].(string)
		require.Equal(t, http.StatusUnprocessableEntity, b.do("POST", "/api/v1/sandbox/recurrences/"+id+"/next-cycle", nil).status,
			"no cycle is due after end_date")
		r = b.do("POST", base+"/"+id+"/cancel", nil)
		require.Equal(t, http.StatusOK, r.status, string(r.body))
		data = r.json["data"].(map[string]any)
		require.Equal(t, "CANCELLED", data["status"])
		require.Equal(t, "merchant", data["cancelled_by"])
		require.Nil(t, data["next_due_date"])
		charges := data["charges"].([]any)
		require.Len(t, charges, 3)
		want := []struct {
			id, status string
			attempts   json.Number
		}{{first, "PAID", "1"}, {second, "CANCELLED", "1"}, {third, "CANCELLED", "0"}}
		for i, w := range want {
			ch := charges[i].(map[string]any)
			require.Equal(t, w.id, ch["payment_id"])
			require.Equal(t, w.status, ch["status"])
			require.Equal(t, w.attempts, ch["attempts"])
		}
		require.Equal(t, http.StatusUnprocessableEntity, b.do("POST", base+"/"+id+"/cancel", nil).status)
		r = b.do("GET", base+"/"+id, nil)
		require.Equal(t, http.StatusOK, r.status)
		require.Equal(t, "CANCELLED", r.json["data"].(map[string]any)["status"])
	})
}

// TestRecurrenceCalendarOverHTTP runs a monthly recurrence from Jan 31
// across month ends, day by day: the cycle job creates each cycle's charge
// on the first day of its window, the API shows it with its due date (Feb
// 28, Mar 31, Apr 30), the payer's bank debits it, and after the cycle of
// end_date the recurrence is FINISHED.
func TestRecurrenceCalendarOverHTTP(t *testing.T) {
	t.Parallel()
	databases(t, func(t *testing.T, open func(t *testing.T) *store.DB) {
		b := setup(t, open, options{start: spNoon(t, "2027-01-15")})
		ctx := context.Background()
		req := validRecurrence("cal")
		req["start_date"], req["end_date"] = "2027-01-31", "2027-04-30"
		r := b.do("POST", "/api/v1/gateway/recurrences", req)
		require.Equal(t, http.StatusCreated, r.status, string(r.body))
		id := r.json["recurrence_id"].(string)
		require.Equal(t, http.StatusOK, b.do("POST", "/api/v1/sandbox/recurrences/"+id+"/approve", nil).status)

		created := map[string]string{} // due date → the day its charge appeared
		for day := 0; day < 110; day++ {
			_, err := b.gw.Recurrences().RunCycles(ctx, 100)
			require.NoError(t, err)
			r := b.do("GET", "/api/v1/gateway/recurrences/"+id, nil)
			require.Equal(t, http.StatusOK, r.status)
			for _, c := range r.json["data"].(map[string]any)["charges"].([]any) {
				ch := c.(map[string]any)
				due := ch["due_date"].(string)
				if _, seen := created[due]; seen {
					continue
				}
				created[due] = b.gw.Today().String()
				pay := b.do("POST", "/api/v1/sandbox/charges/"+ch["payment_id"].(string)+"/pay", nil)
				require.Equal(t, http.StatusOK, pay.status, string(pay.body))
			}
			b.clock.Advance(24 * time.Hour)
		}
		require.Equal(t, map[string]string{"2027-01-31": "2027-01-21", "2027-02-28": "2027-02-18",
			"2027-03-31": "2027-03-21", "2027-04-30": "2027-04-20"}, created)
		r = b.do("GET", "/api/v1/gateway/recurrences/"+id, nil)
		data := r.json["data"].(map[string]any)
		require.Equal(t, "FINISHED", data["status"])
		require.Nil(t, data["next_due_date"])
		for _, c := range data["charges"].([]any) {
			require.Equal(t, "PAID", c.(map[string]any)["status"])
		}
	})
}

// TestRecurrenceListOverHTTP: GET /api/v1/gateway/recurrences lists the
// calling client's recurrences newest first, a page at a time by cursor
// (no row repeated or skipped while new ones arrive), filtered by status;
// another client's are never shown, and a bad limit, cursor or status is a
// 400 naming it in details. A start_date past the calendar's last cycle
// day is refused the same way.
func TestRecurrenceListOverHTTP(t *testing.T) {
	t.Parallel()
	databases(t, func(t *testing.T, open func(t *testing.T) *store.DB) {
		b := setup(t, open, options{start: spNoon(t, "2026-12-01")})
		const base = "/api/v1/gateway/recurrences"
		var ids []string
		for _, ext := range []string{"l1", "l2", "l3"} {
			r := b.do("POST", base, validRecurrence(ext))
			require.Equal(t, http.StatusCreated, r.status, string(r.body))
			ids = append(ids, r.json["recurrence_id"].(string))
			b.clock.Advance(time.Second)
		}
		require.Equal(t, http.StatusOK, b.do("POST", "/api/v1/sandbox/recurrences/"+ids[1]+"/approve", nil).status)
		otherCred, err := b.bo.CreateClient(context.Background(), backoffice.ClientParams{Name: "other"})
		require.NoError(t, err)
		other := validRecurrence("o1")
		require.Equal(t, http.StatusCreated, b.do("POST", base, other, otherCred).status)

		listed := func(r response) []string {
			t.Helper()
			require.Equal(t, http.StatusOK, r.status, string(r.body))
			require.Equal(t, "Recurrences listed successfully.", r.json["message"])
			var out []string
			for _, it := range r.json["data"].([]any) {
				out = append(out, it.(map[string]any)["recurrence_id"].(string))
			}
			return out
		}
		r := b.do("GET", base+"?limit=2", nil)
		require.Equal(t, []string{ids[2], ids[1]}, listed(r))
		cursor := r.json["next_cursor"].(string)
		// A recurrence created meanwhile shifts nothing.
		require.Equal(t, http.StatusCreated, b.do("POST", base, validRecurrence("l4")).status)
		r = b.do("GET", base+"?limit=2&cursor="+url.QueryEscape(cursor), nil)
		require.Equal(t, []string{ids[0]}, listed(r))
		require.Nil(t, r.json["next_cursor"])

		r = b.do("GET", base+"?status=APPROVED", nil)
		require.Equal(t, []string{ids[1]}, listed(r))
		item := r.json["data"].([]any)[0].(map[string]any)
		require.Equal(t, "l2", item["external_id"])
		require.Equal(t, "APPROVED", item["status"])
		require.NotContains(t, item, "charges")
		require.Len(t, listed(b.do("GET", base, nil, otherCred)), 1)

		for q, field := range map[string]string{"limit=0": "limit", "limit=101": "limit", "limit=x": "limit",
			"status=PAID": "status", "status=approved": "status", "cursor=bm90LWEtY3Vyc29y": "cursor"} {
			r := b.do("GET", base+"?"+q, nil)
			require.Equal(t, http.StatusBadRequest, r.status, q)
			require.Equal(t, "Bad Request", r.json["error"], q)
			d := r.json["details"].([]any)[0].(map[string]any)
			require.Equal(t, field, d["field"], q)
		}

		late := validRecurrence("late")
		late["start_date"], late["end_date"] = "9999-12-31", nil
		r = b.do("POST", base, late)
		require.Equal(t, http.StatusBadRequest, r.status, string(r.body))
		require.Equal(t, "start_date", r.json["details"].([]any)[0].(map[string]any)["field"])
	})
}
