package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	stdhtml "html"
	"math/big"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/internal/backoffice"
	"github.com/pixgate/pixgate/internal/brcode"
	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/provider"
	"github.com/pixgate/pixgate/internal/store"
	"github.com/pixgate/pixgate/internal/testkit"
)

// The tests of charges with a due date (docs/due-dates.md). The amounts
// they expect are computed here on their own — exact fractions, each part
// rounded half up, calendar days counted by time.Time in UTC — never
// through pix.Due, and checked against the figures the docs publish.

// saoPaulo is the zone whose calendar dates due terms; Brazil has kept
// UTC−3 all year since 2019.
var saoPaulo = time.FixedZone("BRT", -3*60*60)

// spNoon is noon of the São Paulo date day (YYYY-MM-DD).
func spNoon(t *testing.T, day string) time.Time {
	t.Helper()
	d, err := time.ParseInLocation("2006-01-02", day, saoPaulo)
	require.NoError(t, err)
	return d.Add(12 * time.Hour)
}

// dueDiscount is one discount of dueTerms: pct or amt (reais) until until.
type dueDiscount struct{ until, pct, amt string }

// dueTerms is a due object as a request writes it.
type dueTerms struct {
	date      string
	daysAfter int // -1: left out (the default, 30)
	finePct   string
	fineAmt   string
	interest  string // percent per month; "" none
	discounts []dueDiscount
}

// json is the request's due object.
func (d dueTerms) json() map[string]any {
	m := map[string]any{"date": d.date}
	if d.daysAfter >= 0 {
		m["days_after"] = json.Number(fmt.Sprint(d.daysAfter))
	}
	switch {
	case d.finePct != "":
		m["fine"] = map[string]any{"percent": json.Number(d.finePct)}
	case d.fineAmt != "":
		m["fine"] = map[string]any{"amount": json.Number(d.fineAmt)}
	}
	if d.interest != "" {
		m["interest"] = map[string]any{"percent_per_month": json.Number(d.interest)}
	}
	if d.discounts != nil {
		list := []any{}
		for _, disc := range d.discounts {
			e := map[string]any{"until": disc.until}
			if disc.pct != "" {
				e["percent"] = json.Number(disc.pct)
			} else {
				e["amount"] = json.Number(disc.amt)
			}
			list = append(list, e)
		}
		m["discounts"] = list
	}
	return m
}

// rat parses a decimal.
func rat(t *testing.T, s string) *big.Rat {
	t.Helper()
	r, ok := new(big.Rat).SetString(s)
	require.True(t, ok, s)
	return r
}

// halfUp rounds r ≥ 0 to the nearest integer, halves up.
func halfUp(r *big.Rat) int64 {
	n := new(big.Int).Mul(r.Num(), big.NewInt(2))
	n.Add(n, r.Denom())
	return n.Quo(n, new(big.Int).Mul(r.Denom(), big.NewInt(2))).Int64()
}

// percentOf is pct % of cents, rounded half up.
func percentOf(t *testing.T, cents int64, pct string) int64 {
	t.Helper()
	r := new(big.Rat).Mul(big.NewRat(cents, 100), rat(t, pct))
	return halfUp(r)
}

// civil parses a YYYY-MM-DD date at midnight UTC, where every day has 24
// hours.
func civil(t *testing.T, day string) time.Time {
	t.Helper()
	d, err := time.Parse("2006-01-02", day)
	require.NoError(t, err)
	return d
}

// owed is what a charge of amount (reais) with terms d costs on day, in
// centavos, and false when day is after its last day.
func (d dueTerms) owed(t *testing.T, amount, day string) (int64, bool) {
	t.Helper()
	cents := halfUp(new(big.Rat).Mul(rat(t, amount), big.NewRat(100, 1)))
	due, on := civil(t, d.date), civil(t, day)
	days := d.daysAfter
	if days < 0 {
		days = 30
	}
	if on.After(due.AddDate(0, 0, days)) {
		return 0, false
	}
	if !on.After(due) {
		for _, disc := range d.discounts {
			if civil(t, disc.until).Before(on) {
				continue
			}
			if disc.pct != "" {
				return cents - percentOf(t, cents, disc.pct), true
			}
			return cents - halfUp(new(big.Rat).Mul(rat(t, disc.amt), big.NewRat(100, 1))), true
		}
		return cents, true
	}
	total := cents
	switch {
	case d.finePct != "":
		total += percentOf(t, cents, d.finePct)
	case d.fineAmt != "":
		total += halfUp(new(big.Rat).Mul(rat(t, d.fineAmt), big.NewRat(100, 1)))
	}
	if d.interest != "" {
		late := int64(on.Sub(due) / (24 * time.Hour))
		// amount × percent / 100 / 30 × late days, in centavos.
		r := new(big.Rat).Mul(big.NewRat(cents*late, 100*30), rat(t, d.interest))
		total += halfUp(r)
	}
	return total, true
}

// cents reads a JSON amount in reais as centavos, exactly.
func cents(t *testing.T, v any) int64 {
	t.Helper()
	n, ok := v.(json.Number)
	require.True(t, ok, "%v is not a JSON number", v)
	r := new(big.Rat).Mul(rat(t, string(n)), big.NewRat(100, 1))
	require.True(t, r.IsInt(), "%s has more than two decimals", n)
	return r.Num().Int64()
}

// reais writes centavos as the docs do: 1020.33.
func reais(c int64) string { return fmt.Sprintf("%d.%02d", c/100, c%100) }

// dueCharge creates a charge of amount with terms d and returns the answer.
func (b *bundle) dueCharge(ext, amount string, d dueTerms) response {
	b.t.Helper()
	body := validCharge(ext, amount)
	body["due"] = d.json()
	r := b.do("POST", "/api/v1/gateway/request-qrcode", body)
	require.Equal(b.t, http.StatusCreated, r.status, string(r.body))
	return r
}

// payOn pays charge id through the sandbox on day ("" sends no body).
func (b *bundle) payOn(id, day string) response {
	b.t.Helper()
	var body any
	if day != "" {
		body = map[string]any{"date": day}
	}
	return b.do("POST", "/api/v1/sandbox/charges/"+id+"/pay", body)
}

// requireIssue requires a 400 whose details name field.
func requireIssue(t *testing.T, r response, field string) {
	t.Helper()
	require.Equal(t, http.StatusBadRequest, r.status, string(r.body))
	require.Equal(t, "Invalid request parameters", r.json["message"])
	var named []string
	for _, d := range r.json["details"].([]any) {
		named = append(named, d.(map[string]any)["field"].(string))
	}
	require.Contains(t, named, field, string(r.body))
}

// The docs' first worked example: R$ 1,000.00 due 2026-12-10, 30 days
// after, a 2% fine, 1% a month, R$ 50.00 off until 2026-12-01 and R$ 20.00
// off until 2026-12-05.
var docsTerms = dueTerms{date: "2026-12-10", daysAfter: 30, finePct: "2", interest: "1",
	discounts: []dueDiscount{{until: "2026-12-01", amt: "50"}, {until: "2026-12-05", amt: "20"}}}

// The same with percent discounts and a fixed fine of R$ 5.00.
var docsPercentTerms = dueTerms{date: "2026-12-10", daysAfter: 30, fineAmt: "5", interest: "1",
	discounts: []dueDiscount{{until: "2026-12-01", pct: "5"}, {until: "2026-12-05", pct: "2.5"}}}

// TestDueWorkedExamples pays, through the sandbox on the day each names,
// every worked example docs/due-dates.md publishes, and checks the amount
// credited against the published figure and the test's own computation;
// the fee is the client's rule on what was paid, and a day after the
// validity is refused.
func TestDueWorkedExamples(t *testing.T) {
	t.Parallel()
	rows := []struct {
		start  string // the São Paulo date the charge is created on
		amount string
		terms  dueTerms
		day    string
		want   string // "" for a day on which it cannot be paid
	}{
		{"2026-11-20", "1000.00", docsTerms, "2026-11-20", "950.00"},
		{"2026-11-20", "1000.00", docsTerms, "2026-12-01", "950.00"},
		{"2026-11-20", "1000.00", docsTerms, "2026-12-02", "980.00"},
		{"2026-11-20", "1000.00", docsTerms, "2026-12-05", "980.00"},
		{"2026-11-20", "1000.00", docsTerms, "2026-12-06", "1000.00"},
		{"2026-11-20", "1000.00", docsTerms, "2026-12-10", "1000.00"},
		{"2026-11-20", "1000.00", docsTerms, "2026-12-11", "1020.33"},
		{"2026-11-20", "1000.00", docsTerms, "2026-12-25", "1025.00"},
		{"2026-11-20", "1000.00", docsTerms, "2027-01-09", "1030.00"},
		{"2026-11-20", "1000.00", docsTerms, "2027-01-10", ""},
		{"2026-11-20", "1000.00", docsPercentTerms, "2026-12-01", "950.00"},
		{"2026-11-20", "1000.00", docsPercentTerms, "2026-12-04", "975.00"},
		{"2026-11-20", "1000.00", docsPercentTerms, "2026-12-08", "1000.00"},
		{"2026-11-20", "1000.00", docsPercentTerms, "2026-12-11", "1005.33"},
		{"2026-11-20", "1000.00", docsPercentTerms, "2027-01-09", "1015.00"},
		{"2026-11-20", "10.10", docsPercentTerms, "2026-12-04", "9.85"},
		{"2026-11-20", "10.10", docsPercentTerms, "2026-12-01", "9.59"},
		{"2026-11-20", "10.05", dueTerms{date: "2026-12-10", daysAfter: -1, finePct: "2.5", interest: "2"}, "2026-12-11", "10.31"},
		{"2026-11-20", "10.05", dueTerms{date: "2026-12-10", daysAfter: -1, finePct: "2.5", interest: "2"}, "2026-12-20", "10.37"},
		{"2026-11-20", "1.50", dueTerms{date: "2026-12-10", daysAfter: -1, finePct: "1"}, "2026-12-12", "1.52"},
		{"2026-11-20", "100.00", dueTerms{date: "2028-02-28", daysAfter: 2, interest: "3"}, "2028-02-29", "100.10"},
		{"2026-11-20", "100.00", dueTerms{date: "2028-02-28", daysAfter: 2, interest: "3"}, "2028-03-01", "100.20"},
		{"2026-11-20", "100.00", dueTerms{date: "2028-02-28", daysAfter: 2, interest: "3"}, "2028-03-02", ""},
		{"2026-11-20", "100.00", dueTerms{date: "2027-02-28", daysAfter: 2, interest: "3"}, "2027-03-02", "100.20"},
		{"2026-11-20", "100.00", dueTerms{date: "2027-02-28", daysAfter: 2, interest: "3"}, "2027-03-03", ""},
		{"2026-01-15", "500.00", dueTerms{date: "2026-01-31", daysAfter: 30, finePct: "2", interest: "1"}, "2026-02-01", "510.17"},
		{"2026-01-15", "500.00", dueTerms{date: "2026-01-31", daysAfter: 30, finePct: "2", interest: "1"}, "2026-03-02", "515.00"},
		{"2026-01-15", "500.00", dueTerms{date: "2026-01-31", daysAfter: 30, finePct: "2", interest: "1"}, "2026-03-03", ""},
		{"2026-11-20", "80.00", dueTerms{date: "2026-12-31", daysAfter: 1}, "2027-01-01", "80.00"},
		{"2026-11-20", "80.00", dueTerms{date: "2026-12-31", daysAfter: 1}, "2027-01-02", ""},
	}
	fee := pix.FeeRule{PercentBP: 100, Fixed: 50} // 1% + R$ 0.50
	databases(t, func(t *testing.T, open func(t *testing.T) *store.DB) {
		bundles := map[string]*bundle{}
		for i, row := range rows {
			b := bundles[row.start]
			if b == nil {
				b = setup(t, open, options{start: spNoon(t, row.start), fee: fee})
				bundles[row.start] = b
			}
			name := fmt.Sprintf("row %d: %s %+v paid on %s", i, row.amount, row.terms, row.day)
			owed, payable := row.terms.owed(t, row.amount, row.day)
			require.Equal(t, row.want != "", payable, name)
			if payable {
				require.Equal(t, row.want, reais(owed), "%s: the test's own computation gives the published figure", name)
			}
			id := b.dueCharge(fmt.Sprintf("ex-%d", i), row.amount, row.terms).json["payment_id"].(string)
			r := b.payOn(id, row.day)
			if !payable {
				requireIssue(t, r, "date")
				require.Equal(t, "PENDING", b.lookup(id)["status"], name)
				continue
			}
			require.Equal(t, http.StatusOK, r.status, "%s: %s", name, r.body)
			data := r.json["data"].(map[string]any)
			require.Equal(t, "PAID", data["status"], name)
			require.Equal(t, owed, cents(t, data["paid_amount"]), name)
			require.Equal(t, false, data["amount_mismatch"], "%s: paid what was due that day", name)
			require.Nil(t, data["amount_due_today"], "%s: a paid charge owes nothing", name)
			require.Contains(t, data, "amount_due_today")
			require.Equal(t, percentOf(t, owed, "1")+50, cents(t, data["tax"]), "%s: the fee is on what was paid", name)
		}
	})
}

// TestDueCharge: the 201 answer, the lookup and the history of a charge
// with a due date echo its terms (defaults spelled out) and show the
// amount due today, which follows the São Paulo calendar and is null once
// the charge can no longer be paid; its static BR Code carries the amount
// due on the day it was created; a replay answers the same; expires_at is
// the end of its last day in São Paulo, whatever PIXGATE_CHARGE_TTL says,
// and the charge is then cancelled with pix.cashin.cancelled.
func TestDueCharge(t *testing.T) {
	t.Parallel()
	databases(t, func(t *testing.T, open func(t *testing.T) *store.DB) {
		ctx := context.Background()
		b := setup(t, open, options{start: spNoon(t, "2026-11-20")})
		body := validCharge("bill-1", "1000.00")
		body["due"] = docsTerms.json()
		r := b.do("POST", "/api/v1/gateway/request-qrcode", body)
		require.Equal(t, http.StatusCreated, r.status, string(r.body))
		id := r.json["payment_id"].(string)
		wantDue := map[string]any{"date": "2026-12-10", "days_after": json.Number("30"),
			"fine": map[string]any{"percent": json.Number("2")}, "interest": map[string]any{"percent_per_month": json.Number("1")},
			"discounts": []any{map[string]any{"until": "2026-12-01", "amount": json.Number("50")},
				map[string]any{"until": "2026-12-05", "amount": json.Number("20")}}}
		require.Equal(t, wantDue, r.json["due"])
		owed, _ := docsTerms.owed(t, "1000.00", "2026-11-20")
		require.Equal(t, owed, cents(t, r.json["amount_due_today"]))
		require.Equal(t, "2027-01-10T03:00:00.000Z", r.json["expires_at"], "the end of 2027-01-09 in São Paulo")
		parsed, err := brcode.Parse(r.json["qrcode"].(string))
		require.NoError(t, err)
		payload, err := parsed.Payload()
		require.NoError(t, err)
		require.Equal(t, owed, payload.Amount, "field 54 is the amount due on the day the charge was created")
		first := r.body

		// An immediate charge shows neither.
		imm := b.createCharge("plain-1", "10.00")
		require.NotContains(t, imm.json, "due")
		require.NotContains(t, imm.json, "amount_due_today")
		require.NotContains(t, b.lookup(imm.json["payment_id"].(string)), "due")
		require.NotContains(t, b.lookup(imm.json["payment_id"].(string)), "amount_due_today")

		// Left out, days_after is 30.
		d := dueTerms{date: "2026-12-10", daysAfter: -1}
		r = b.dueCharge("bill-default", "10.00", d)
		require.Equal(t, json.Number("30"), r.json["due"].(map[string]any)["days_after"])
		require.Equal(t, "2027-01-10T03:00:00.000Z", r.json["expires_at"])

		// The amount due today follows the São Paulo calendar.
		steps := []struct {
			at   time.Time
			want string // "" for null
		}{
			{spNoon(t, "2026-11-20"), "950.00"},
			{spNoon(t, "2026-12-02"), "980.00"},
			{spNoon(t, "2026-12-11"), "1020.33"},
			// 02:59 UTC on Jan 10 is still Jan 9 in São Paulo, the last day.
			{time.Date(2027, 1, 10, 2, 59, 0, 0, time.UTC), "1030.00"},
		}
		for _, s := range steps {
			if gap := s.at.Sub(b.clock.Now()); gap > 0 {
				b.clock.Advance(gap)
			}
			day := b.clock.Now().In(saoPaulo).Format("2006-01-02")
			owed, ok := docsTerms.owed(t, "1000.00", day)
			require.True(t, ok)
			require.Equal(t, s.want, reais(owed), day)
			// PIXGATE_CHARGE_TTL (24 h here) does not apply: the job
			// leaves the charge alone until its last day has passed.
			_, err := b.gw.Cashin().ExpireDue(ctx, 10)
			require.NoError(t, err)
			look := b.lookup(id)
			require.Equal(t, owed, cents(t, look["amount_due_today"]), day)
			require.Equal(t, wantDue, look["due"])
			require.Equal(t, "PENDING", look["status"], day)
		}
		// The history echoes the terms too.
		h := b.do("GET", "/api/v1/wallet/transactions?limit=100", nil)
		require.Equal(t, http.StatusOK, h.status)
		var item map[string]any
		for _, it := range h.json["data"].([]any) {
			if it.(map[string]any)["payment_id"] == id {
				item = it.(map[string]any)
			}
		}
		require.NotNil(t, item)
		require.Equal(t, wantDue, item["due"])
		require.Equal(t, json.Number("1030"), item["amount_due_today"])

		// A replay answers the first response, priced on the day of creation.
		r = b.do("POST", "/api/v1/gateway/request-qrcode", body)
		require.Equal(t, http.StatusCreated, r.status)
		require.Equal(t, "true", r.header.Get("Idempotent-Replayed"))
		require.JSONEq(t, string(first), string(r.body))

		// After the last day: nothing is due, and the job cancels it.
		b.clock.Advance(2 * time.Minute) // 03:01 UTC, Jan 10 in São Paulo
		look := b.lookup(id)
		require.Contains(t, look, "amount_due_today")
		require.Nil(t, look["amount_due_today"], "past its last day, a charge cannot be paid")
		require.Equal(t, http.StatusBadRequest, b.payOn(id, "").status, "nor paid in the sandbox")
		n, err := b.gw.Cashin().ExpireDue(ctx, 10)
		require.NoError(t, err)
		require.GreaterOrEqual(t, n, 1)
		look = b.lookup(id)
		require.Equal(t, "CANCELLED", look["status"])
		require.Nil(t, look["amount_due_today"])
		require.Equal(t, wantDue, look["due"])
		require.Equal(t, []string{pix.EventCashinCancelled}, b.eventTypes(id))
	})
}

// TestDueValidation: every bad due object is a 400 whose details name each
// bad field, and nothing is created; the limits themselves are accepted.
// "Today" is the São Paulo date: at 02:30 UTC on Nov 21 it is still Nov 20.
func TestDueValidation(t *testing.T) {
	t.Parallel()
	databases(t, func(t *testing.T, open func(t *testing.T) *store.DB) {
		b := setup(t, open, options{start: time.Date(2026, 11, 21, 2, 30, 0, 0, time.UTC)})
		n := 0
		send := func(amount string, due any) response {
			n++
			body := validCharge(fmt.Sprintf("v-%d", n), amount)
			body["due"] = due
			return b.do("POST", "/api/v1/gateway/request-qrcode", body)
		}
		num := func(s string) json.Number { return json.Number(s) }
		with := func(extra map[string]any) map[string]any {
			m := map[string]any{"date": "2026-12-10"}
			for k, v := range extra {
				m[k] = v
			}
			return m
		}
		bad := []struct {
			due    any
			fields []string
		}{
			{map[string]any{}, []string{"due.date"}},
			{map[string]any{"date": "2026-11-19"}, []string{"due.date"}}, // yesterday in São Paulo
			{map[string]any{"date": "2026-02-30"}, []string{"due.date"}},
			{map[string]any{"date": "10/12/2026"}, []string{"due.date"}},
			{map[string]any{"date": "2026-12-10T00:00:00Z"}, []string{"due.date"}},
			{map[string]any{"date": num("20261210")}, []string{"due.date"}},
			{map[string]any{"date": "9999-12-31"}, []string{"due.date"}},
			{"2026-12-10", []string{"due"}},
			{with(map[string]any{"days_after": num("-1")}), []string{"due.days_after"}},
			{with(map[string]any{"days_after": num("366")}), []string{"due.days_after"}},
			{with(map[string]any{"days_after": num("1.5")}), []string{"due.days_after"}},
			{with(map[string]any{"days_after": "30"}), []string{"due.days_after"}},
			{with(map[string]any{"fine": map[string]any{"percent": num("2"), "amount": num("5")}}), []string{"due.fine"}},
			{with(map[string]any{"fine": map[string]any{}}), []string{"due.fine"}},
			{with(map[string]any{"fine": map[string]any{"percent": num("0")}}), []string{"due.fine.percent"}},
			{with(map[string]any{"fine": map[string]any{"percent": num("-1")}}), []string{"due.fine.percent"}},
			{with(map[string]any{"fine": map[string]any{"percent": num("100.01")}}), []string{"due.fine.percent"}},
			{with(map[string]any{"fine": map[string]any{"percent": num("1.001")}}), []string{"due.fine.percent"}},
			{with(map[string]any{"fine": map[string]any{"amount": num("0")}}), []string{"due.fine.amount"}},
			{with(map[string]any{"fine": map[string]any{"amount": num("5.001")}}), []string{"due.fine.amount"}},
			{with(map[string]any{"fine": map[string]any{"amount": num("1000000.01")}}), []string{"due.fine.amount"}},
			{with(map[string]any{"interest": map[string]any{}}), []string{"due.interest.percent_per_month"}},
			{with(map[string]any{"interest": map[string]any{"percent_per_month": num("0")}}), []string{"due.interest.percent_per_month"}},
			{with(map[string]any{"interest": map[string]any{"percent_per_month": num("100.5")}}), []string{"due.interest.percent_per_month"}},
			{with(map[string]any{"discounts": []any{}}), []string{"due.discounts"}},
			{with(map[string]any{"discounts": []any{
				map[string]any{"until": "2026-12-01", "amount": num("1")}, map[string]any{"until": "2026-12-02", "amount": num("1")},
				map[string]any{"until": "2026-12-03", "amount": num("1")}, map[string]any{"until": "2026-12-04", "amount": num("1")},
			}}), []string{"due.discounts"}},
			{with(map[string]any{"discounts": []any{
				map[string]any{"until": "2026-12-01", "amount": num("1")}, map[string]any{"until": "2026-12-02", "percent": num("1")},
			}}), []string{"due.discounts"}},
			{with(map[string]any{"discounts": []any{
				map[string]any{"until": "2026-12-05", "amount": num("2")}, map[string]any{"until": "2026-12-05", "amount": num("1")},
			}}), []string{"due.discounts[1].until"}},
			{with(map[string]any{"discounts": []any{
				map[string]any{"until": "2026-12-05", "amount": num("2")}, map[string]any{"until": "2026-12-01", "amount": num("1")},
			}}), []string{"due.discounts[1].until"}},
			{with(map[string]any{"discounts": []any{map[string]any{"until": "2026-12-11", "amount": num("1")}}}), []string{"due.discounts[0].until"}},
			{with(map[string]any{"discounts": []any{map[string]any{"until": "2026-12-1", "amount": num("1")}}}), []string{"due.discounts[0].until"}},
			{with(map[string]any{"discounts": []any{map[string]any{"amount": num("1")}}}), []string{"due.discounts[0].until"}},
			{with(map[string]any{"discounts": []any{map[string]any{"until": "2026-12-01"}}}), []string{"due.discounts[0]"}},
			{with(map[string]any{"discounts": []any{map[string]any{"until": "2026-12-01", "amount": num("1"), "percent": num("1")}}}), []string{"due.discounts[0]"}},
			{with(map[string]any{"discounts": []any{map[string]any{"until": "2026-12-01", "amount": num("10")}}}), []string{"due.discounts[0].amount"}},
			{with(map[string]any{"discounts": []any{map[string]any{"until": "2026-12-01", "amount": num("-1")}}}), []string{"due.discounts[0].amount"}},
			{with(map[string]any{"discounts": []any{map[string]any{"until": "2026-12-01", "percent": num("100")}}}), []string{"due.discounts[0].percent"}},
			// 99.99% of R$ 10.00 is 9.999, rounded to 10.00: nothing left.
			{with(map[string]any{"discounts": []any{map[string]any{"until": "2026-12-01", "percent": num("99.99")}}}), []string{"due.discounts[0].percent"}},
			{with(map[string]any{"discounts": []any{map[string]any{"until": "2026-12-01", "percent": num("0.001")}}}), []string{"due.discounts[0].percent"}},
			// Every bad field at once.
			{map[string]any{"date": "2026-11-01", "days_after": num("400"), "fine": map[string]any{"percent": num("101")},
				"interest": map[string]any{"percent_per_month": num("-2")}, "discounts": []any{map[string]any{"until": "x", "amount": num("0")}}},
				[]string{"due.date", "due.days_after", "due.fine.percent", "due.interest.percent_per_month", "due.discounts[0].until", "due.discounts[0].amount"}},
		}
		for i, c := range bad {
			r := send("10.00", c.due)
			for _, f := range c.fields {
				requireIssue(t, r, f)
			}
			require.Equal(t, 0, b.count(b.cred.ClientID), "case %d: nothing is created", i)
		}

		good := []any{
			map[string]any{"date": "2026-11-20"}, // today in São Paulo, though Nov 21 in UTC
			with(map[string]any{"days_after": num("0")}),
			with(map[string]any{"days_after": num("365")}),
			with(map[string]any{"fine": map[string]any{"percent": num("100")}, "interest": map[string]any{"percent_per_month": num("100")}}),
			with(map[string]any{"fine": map[string]any{"amount": num("1000000")}, "interest": map[string]any{"percent_per_month": num("0.01")}}),
			with(map[string]any{"discounts": []any{map[string]any{"until": "2026-12-10", "amount": num("9.99")}}}),
			with(map[string]any{"discounts": []any{map[string]any{"until": "2026-11-01", "percent": num("99.94")}}}),
			with(map[string]any{"discounts": []any{
				map[string]any{"until": "2026-12-01", "percent": num("3")}, map[string]any{"until": "2026-12-02", "percent": num("2")},
				map[string]any{"until": "2026-12-10", "percent": num("1")},
			}}),
			with(map[string]any{"fine": nil, "interest": nil, "discounts": nil}),
		}
		for i, due := range good {
			r := send("10.00", due)
			require.Equal(t, http.StatusCreated, r.status, "good case %d: %s", i, r.body)
			require.Equal(t, i+1, b.count(b.cred.ClientID))
		}
		// "due": null is an immediate charge.
		r := send("10.00", nil)
		require.Equal(t, http.StatusCreated, r.status, string(r.body))
		require.NotContains(t, r.json, "due")
	})
}

// TestDueSandboxPay: the sandbox's pay action takes an optional date (São
// Paulo; default today) and pays what is due that day; the fee is the
// client's rule on what was paid, and the event, the lookup and the
// statement carry the amount paid. A day before the charge was created or
// after its last day is refused, as is any day but today for an immediate
// charge, whose body-less pay is unchanged.
func TestDueSandboxPay(t *testing.T) {
	t.Parallel()
	fee := pix.FeeRule{PercentBP: 100, Fixed: 50} // 1% + R$ 0.50
	databases(t, func(t *testing.T, open func(t *testing.T) *store.DB) {
		ctx := context.Background()
		// 02:30 UTC on Nov 21: Nov 20 in São Paulo.
		start := time.Date(2026, 11, 21, 2, 30, 0, 0, time.UTC)
		b := setup(t, open, options{start: start, fee: fee})
		id := b.dueCharge("late-1", "1000.00", docsTerms).json["payment_id"].(string)
		require.Equal(t, json.Number("10.5"), b.lookup(id)["tax"], "the fee on the amount, until paid")

		for _, c := range []struct {
			body  any
			field string
		}{
			{map[string]any{"date": "2026-11-19"}, "date"}, // before the charge was created
			{map[string]any{"date": "2027-01-10"}, "date"}, // after its last day
			{map[string]any{"date": "2026-12-32"}, "date"},
			{map[string]any{"date": "11/12/2026"}, "date"},
			{map[string]any{"date": json.Number("20261211")}, "date"},
		} {
			r := b.do("POST", "/api/v1/sandbox/charges/"+id+"/pay", c.body)
			requireIssue(t, r, c.field)
		}
		r := b.send(b.http, "POST", "/api/v1/sandbox/charges/"+id+"/pay", `{"date":"2026-12-11"}`, "text/plain")
		require.Equal(t, http.StatusUnsupportedMediaType, r.status, string(r.body))
		require.Equal(t, "PENDING", b.lookup(id)["status"], "nothing was paid")
		avail, _ := b.balance()
		require.Equal(t, json.Number("0"), avail)

		// Paid the day after the due date: the fine and a day of interest.
		r = b.payOn(id, "2026-12-11")
		require.Equal(t, http.StatusOK, r.status, string(r.body))
		owed, _ := docsTerms.owed(t, "1000.00", "2026-12-11")
		require.Equal(t, "1020.33", reais(owed))
		tax := percentOf(t, owed, "1") + 50
		look := b.lookup(id)
		require.Equal(t, "PAID", look["status"])
		require.Equal(t, json.Number("1000"), look["amount"], "amount stays what the charge asked for")
		require.Equal(t, owed, cents(t, look["paid_amount"]))
		require.Equal(t, tax, cents(t, look["tax"]))
		require.Equal(t, false, look["amount_mismatch"])
		avail, _ = b.balance()
		require.Equal(t, json.Number(fmt.Sprint(owed-tax)), avail)

		events, err := b.db.Events(ctx, id)
		require.NoError(t, err)
		require.Len(t, events, 1)
		var ev map[string]any
		d := json.NewDecoder(strings.NewReader(events[0].Payload))
		d.UseNumber()
		require.NoError(t, d.Decode(&ev))
		require.Equal(t, pix.EventCashinPaid, ev["event"])
		require.Equal(t, owed, cents(t, ev["value"]), "value is what was paid")
		require.Equal(t, owed, cents(t, ev["paid_amount"]))
		require.Equal(t, tax, cents(t, ev["tax"]))
		require.Equal(t, false, ev["amount_mismatch"])

		st := b.statement(start.Add(-time.Hour), b.clock.Now().Add(time.Hour))
		var moves [][2]any
		for _, m := range st.Data.Movements {
			moves = append(moves, [2]any{m.Type, m.AmountCents})
		}
		require.Equal(t, [][2]any{{"charge", owed}, {"charge_fee", -tax}}, moves)

		// Paying again answers the charge as paid; nothing moves twice.
		r = b.payOn(id, "2026-12-20")
		require.Equal(t, http.StatusOK, r.status, string(r.body))
		require.Equal(t, owed, cents(t, r.json["data"].(map[string]any)["paid_amount"]))
		avail, _ = b.balance()
		require.Equal(t, json.Number(fmt.Sprint(owed-tax)), avail)

		// Without a body: today in São Paulo (Nov 20, though Nov 21 in UTC),
		// here the due date itself, so no fine.
		today := b.dueCharge("today-1", "10.00", dueTerms{date: "2026-11-20", daysAfter: 5, finePct: "2"}).json["payment_id"].(string)
		r = b.payOn(today, "")
		require.Equal(t, http.StatusOK, r.status, string(r.body))
		require.Equal(t, json.Number("10"), r.json["data"].(map[string]any)["paid_amount"])

		// An immediate charge: today only; a body-less pay as always.
		imm := b.createCharge("imm-1", "10.00").json["payment_id"].(string)
		requireIssue(t, b.payOn(imm, "2026-11-21"), "date")
		requireIssue(t, b.payOn(imm, "2026-11-19"), "date")
		r = b.payOn(imm, "2026-11-20")
		require.Equal(t, http.StatusOK, r.status, string(r.body))
		imm2 := b.createCharge("imm-2", "10.00").json["payment_id"].(string)
		r = b.payOn(imm2, "")
		require.Equal(t, http.StatusOK, r.status, string(r.body))
		require.Equal(t, json.Number("10"), r.json["data"].(map[string]any)["paid_amount"])
		require.NotContains(t, r.json["data"], "due")

		// An unknown charge with a good body is still 404.
		r = b.payOn("3f1c2a9e-7b4d-4c21-9a6e-2d8f5b7c1e04", "2026-11-20")
		require.Equal(t, http.StatusNotFound, r.status)
	})
}

// TestDueNeedsAProviderThatTakesThem: with a provider that cannot register
// charges with a due date, a request with due is a 422 and nothing is
// created, not even an intent at the PSP; an immediate charge still works.
func TestDueNeedsAProviderThatTakesThem(t *testing.T) {
	t.Parallel()
	databases(t, func(t *testing.T, open func(t *testing.T) *store.DB) {
		ctx := context.Background()
		b := setup(t, open, options{start: spNoon(t, "2026-11-20"),
			provider: func(p provider.Provider) provider.Provider { return struct{ provider.Provider }{p} }})
		body := validCharge("due-1", "1000.00")
		body["due"] = docsTerms.json()
		r := b.do("POST", "/api/v1/gateway/request-qrcode", body)
		require.Equal(t, http.StatusUnprocessableEntity, r.status, string(r.body))
		require.Equal(t, "Charges with a due date are not available with this provider", r.json["message"])
		require.Equal(t, 0, b.count(b.cred.ClientID))
		intents, err := b.db.StaleCobIntents(ctx, b.clock.Now().Add(time.Hour), 10)
		require.NoError(t, err)
		require.Empty(t, intents)
		// Bad terms are still a 400 first.
		body = validCharge("due-2", "10.00")
		body["due"] = map[string]any{"date": "x"}
		requireIssue(t, b.do("POST", "/api/v1/gateway/request-qrcode", body), "due.date")
		b.createCharge("plain", "10.00")
		require.Equal(t, 1, b.count(b.cred.ClientID))
	})
}

// TestDuePayPage: the payer's page of a charge with a due date shows its
// due date and what it costs today (São Paulo date), and once paid what
// was paid; its sandbox button pays today's amount.
func TestDuePayPage(t *testing.T) {
	t.Parallel()
	b := setup(t, testkit.OpenSQLite, options{start: spNoon(t, "2026-12-02")})
	id := b.dueCharge("page-1", "1000.00", docsTerms).json["payment_id"].(string)
	page := func() string {
		r := b.send(b.raw, "GET", "/pay/"+id, nil, "", backoffice.Credentials{})
		require.Equal(t, http.StatusOK, r.status)
		return stdhtml.UnescapeString(string(r.body))
	}
	p := page()
	require.Contains(t, p, `<p class="amount" data-testid="amount">R$ 980,00</p>`, "R$ 20.00 off on 2026-12-02")
	require.Contains(t, p, `<span data-testid="due-date">10/12/2026</span>`)
	r := b.send(b.raw, "POST", "/pay/"+id+"/sandbox-pay", nil, "", backoffice.Credentials{})
	require.Equal(t, http.StatusOK, r.status)
	require.Equal(t, json.Number("980"), b.lookup(id)["paid_amount"])
	p = page()
	require.Contains(t, p, `<p class="amount" data-testid="amount">R$ 980,00</p>`, "what was paid")
	require.Contains(t, p, `data-testid="confirmed-at"`)
}
