package pix

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func date(t *testing.T, s string) Date {
	t.Helper()
	d, err := ParseDate(s)
	require.NoError(t, err, s)
	return d
}

func TestParseDate(t *testing.T) {
	t.Parallel()
	for _, ok := range []string{"2026-12-10", "2028-02-29", "2000-02-29", "0001-01-01", "9999-12-31"} {
		d, err := ParseDate(ok)
		require.NoError(t, err, ok)
		require.Equal(t, ok, d.String())
	}
	for _, bad := range []string{"", "2026-2-10", "2026-02-30", "2027-02-29", "1900-02-29", "2026-13-01", "2026-00-10",
		"2026-12-00", "2026-12-10T00:00:00Z", " 2026-12-10", "2026/12/10", "20261210", "+026-12-10", "0000-01-01", "2026-1２-10"} {
		_, err := ParseDate(bad)
		require.ErrorIs(t, err, ErrDate, "%q", bad)
	}
}

func TestDateArithmetic(t *testing.T) {
	t.Parallel()
	// Every day over four centuries, against the standard library.
	start := time.Date(1900, 1, 1, 0, 0, 0, 0, time.UTC)
	d := DateOf(start)
	for i := 0; i < 146097+400; i++ {
		want := DateOf(start.AddDate(0, 0, i))
		got := d.AddDays(i)
		require.Equal(t, want, got, "day %d", i)
		require.Equal(t, i, got.DaysSince(d))
	}
	require.Equal(t, date(t, "2028-02-29"), date(t, "2028-02-28").AddDays(1))
	require.Equal(t, date(t, "2027-03-01"), date(t, "2027-02-28").AddDays(1))
	require.Equal(t, date(t, "2027-01-01"), date(t, "2026-12-31").AddDays(1))
	require.Equal(t, date(t, "2026-03-02"), date(t, "2026-01-31").AddDays(30))
	require.Equal(t, 366, date(t, "2029-01-01").DaysSince(date(t, "2028-01-01")))
	require.True(t, date(t, "2026-12-09").Before(date(t, "2026-12-10")))
	require.False(t, date(t, "2026-12-10").Before(date(t, "2026-12-10")))
	require.True(t, date(t, "2027-01-01").After(date(t, "2026-12-31")))

	sp, err := time.LoadLocation("America/Sao_Paulo")
	require.NoError(t, err)
	// 02:30 UTC on the 11th is still the 10th in São Paulo (UTC−3).
	require.Equal(t, date(t, "2026-12-10"), DateOf(time.Date(2026, 12, 11, 2, 30, 0, 0, time.UTC).In(sp)))
	require.Equal(t, time.Date(2026, 12, 10, 3, 0, 0, 0, time.UTC), date(t, "2026-12-10").Start(sp).UTC())

	b, err := json.Marshal(struct{ D Date }{date(t, "2026-12-10")})
	require.NoError(t, err)
	require.JSONEq(t, `{"D":"2026-12-10"}`, string(b))
	var back struct{ D Date }
	require.NoError(t, json.Unmarshal(b, &back))
	require.Equal(t, date(t, "2026-12-10"), back.D)
	require.Error(t, json.Unmarshal([]byte(`{"D":"2026-12-32"}`), &back))
}

// parseDue parses a due object from JSON text as the API receives it.
func parseDue(t *testing.T, body string, amount Amount, today string) (Due, []FieldIssue) {
	t.Helper()
	var r DueRequest
	require.NoError(t, json.Unmarshal([]byte(body), &r), body)
	return r.Parse(amount, date(t, today))
}

func mustDue(t *testing.T, body string, amount Amount) Due {
	t.Helper()
	d, is := parseDue(t, body, amount, "2026-01-01")
	require.Empty(t, is, body)
	return d
}

// TestDueAmountOn is the table of docs/due-dates.md: every worked example
// published there, and the edges around them.
func TestDueAmountOn(t *testing.T) {
	t.Parallel()
	const (
		withAmounts = `{"date":"2026-12-10","fine":{"percent":2.00},"interest":{"percent_per_month":1.00},
			"discounts":[{"until":"2026-12-01","amount":50.00},{"until":"2026-12-05","amount":20.00}]}`
		withPercents = `{"date":"2026-12-10","days_after":30,"fine":{"amount":5.00},"interest":{"percent_per_month":1},
			"discounts":[{"until":"2026-12-01","percent":5},{"until":"2026-12-05","percent":2.5}]}`
		plain      = `{"date":"2026-12-10","days_after":0}`
		rounding   = `{"date":"2026-12-10","days_after":10,"fine":{"percent":2.5},"interest":{"percent_per_month":2}}`
		halfUp     = `{"date":"2026-12-10","days_after":5,"fine":{"percent":1}}`
		leap       = `{"date":"2028-02-28","days_after":2,"interest":{"percent_per_month":3}}`
		noLeap     = `{"date":"2027-02-28","days_after":2,"interest":{"percent_per_month":3}}`
		monthEnd   = `{"date":"2026-01-31","days_after":30,"fine":{"percent":2},"interest":{"percent_per_month":1}}`
		yearEnd    = `{"date":"2026-12-31","days_after":1,"fine":{"amount":0.01}}`
		heavy      = `{"date":"2026-12-10","days_after":365,"fine":{"percent":100},"interest":{"percent_per_month":100}}`
		notPayable = Amount(-1)
	)
	tests := []struct {
		terms  string
		amount Amount
		day    string
		want   Amount // notPayable: after the last day
		parts  DueAmount
	}{
		// R$ 1,000.00 due 2026-12-10, fixed discounts of 50.00 until the 1st
		// and 20.00 until the 5th, 2% fine, 1% a month, 30 days after.
		{withAmounts, 100000, "2026-11-20", 95000, DueAmount{Original: 100000, Discount: 5000, Total: 95000}},
		{withAmounts, 100000, "2026-12-01", 95000, DueAmount{}},
		{withAmounts, 100000, "2026-12-02", 98000, DueAmount{Original: 100000, Discount: 2000, Total: 98000}},
		{withAmounts, 100000, "2026-12-05", 98000, DueAmount{}},
		{withAmounts, 100000, "2026-12-06", 100000, DueAmount{Original: 100000, Total: 100000}},
		{withAmounts, 100000, "2026-12-10", 100000, DueAmount{}},
		{withAmounts, 100000, "2026-12-11", 102033, DueAmount{Original: 100000, Fine: 2000, Interest: 33, Total: 102033}},
		{withAmounts, 100000, "2026-12-25", 102500, DueAmount{Original: 100000, Fine: 2000, Interest: 500, Total: 102500}},
		{withAmounts, 100000, "2027-01-09", 103000, DueAmount{Original: 100000, Fine: 2000, Interest: 1000, Total: 103000}},
		{withAmounts, 100000, "2027-01-10", notPayable, DueAmount{}},
		// The same with percent discounts (5% until the 1st, 2.5% until the
		// 5th) and a fixed fine of R$ 5.00.
		{withPercents, 100000, "2026-12-01", 95000, DueAmount{}},
		{withPercents, 100000, "2026-12-04", 97500, DueAmount{Original: 100000, Discount: 2500, Total: 97500}},
		{withPercents, 100000, "2026-12-08", 100000, DueAmount{}},
		{withPercents, 100000, "2026-12-11", 100533, DueAmount{Original: 100000, Fine: 500, Interest: 33, Total: 100533}},
		{withPercents, 100000, "2027-01-09", 101500, DueAmount{}},
		{withPercents, 100000, "2027-01-10", notPayable, DueAmount{}},
		// A percent discount rounds half up: 2.5% of R$ 10.10 is 0.2525 → 0.25;
		// 5% of 10.10 is 0.505 → 0.51.
		{withPercents, 1010, "2026-12-03", 985, DueAmount{}},
		{withPercents, 1010, "2026-12-01", 959, DueAmount{}},
		// No terms but the date: the amount until the due date, nothing after.
		{plain, 4990, "2026-12-10", 4990, DueAmount{}},
		{plain, 4990, "2026-12-11", notPayable, DueAmount{}},
		// Each part is rounded on its own: R$ 10.05 at 2.5% is 0.25125 → 0.25,
		// one day at 2% a month is 0.0067 → 0.01.
		{rounding, 1005, "2026-12-11", 1031, DueAmount{Original: 1005, Fine: 25, Interest: 1, Total: 1031}},
		{rounding, 1005, "2026-12-20", 1037, DueAmount{Original: 1005, Fine: 25, Interest: 7, Total: 1037}},
		// Half a centavo goes up: 1% of R$ 1.50 is 0.015 → 0.02.
		{halfUp, 150, "2026-12-12", 152, DueAmount{Original: 150, Fine: 2, Total: 152}},
		// Leap year: 2028-02-28 + 2 days is 2028-03-01, two days late.
		{leap, 10000, "2028-02-29", 10010, DueAmount{Original: 10000, Interest: 10, Total: 10010}},
		{leap, 10000, "2028-03-01", 10020, DueAmount{}},
		{leap, 10000, "2028-03-02", notPayable, DueAmount{}},
		// Not a leap year: 2027-02-28 + 2 days is 2027-03-02.
		{noLeap, 10000, "2027-03-01", 10010, DueAmount{}},
		{noLeap, 10000, "2027-03-02", 10020, DueAmount{}},
		{noLeap, 10000, "2027-03-03", notPayable, DueAmount{}},
		// Month end: 2026-01-31 + 30 days is 2026-03-02 (February has 28).
		{monthEnd, 50000, "2026-02-01", 51017, DueAmount{Original: 50000, Fine: 1000, Interest: 17, Total: 51017}},
		{monthEnd, 50000, "2026-02-28", 51467, DueAmount{}},
		{monthEnd, 50000, "2026-03-02", 51500, DueAmount{Original: 50000, Fine: 1000, Interest: 500, Total: 51500}},
		{monthEnd, 50000, "2026-03-03", notPayable, DueAmount{}},
		// Year end.
		{yearEnd, 100, "2026-12-31", 100, DueAmount{}},
		{yearEnd, 100, "2027-01-01", 101, DueAmount{}},
		{yearEnd, 100, "2027-01-02", notPayable, DueAmount{}},
		// The largest terms on the largest amount stay exact in int64.
		{heavy, MaxAmount, "2027-12-10", MaxAmount*2 + 1_216_666_667, DueAmount{}},
	}
	for _, tt := range tests {
		d := mustDue(t, tt.terms, 0) // amounts vary by row; the share check has its own test
		got, ok := d.AmountOn(tt.amount, date(t, tt.day))
		if tt.want == notPayable {
			require.False(t, ok, "%s on %s", tt.terms, tt.day)
			continue
		}
		require.True(t, ok, "%s on %s", tt.terms, tt.day)
		require.Equal(t, tt.want, got, "%s: %s on %s", tt.amount, tt.terms, tt.day)
		parts, _ := d.On(tt.amount, date(t, tt.day))
		require.Equal(t, got, parts.Total)
		require.Equal(t, parts.Total, parts.Original-parts.Discount+parts.Fine+parts.Interest)
		if tt.parts != (DueAmount{}) {
			require.Equal(t, tt.parts, parts, "%s on %s", tt.terms, tt.day)
		}
	}
}

func TestDueLastDayAndDeadline(t *testing.T) {
	t.Parallel()
	sp, err := time.LoadLocation("America/Sao_Paulo")
	require.NoError(t, err)
	d := mustDue(t, `{"date":"2026-12-10"}`, 100)
	require.Equal(t, DefaultDaysAfter, d.DaysAfter)
	require.Equal(t, date(t, "2027-01-09"), d.LastDay())
	// Payable through 2027-01-09 in São Paulo: until 03:00 UTC on the 10th.
	require.Equal(t, time.Date(2027, 1, 10, 3, 0, 0, 0, time.UTC), d.Deadline(sp).UTC())
	d = mustDue(t, `{"date":"2026-12-10","days_after":0}`, 100)
	require.Equal(t, date(t, "2026-12-10"), d.LastDay())
}

func TestDueParseAccepts(t *testing.T) {
	t.Parallel()
	d, is := parseDue(t, `{"date":"2026-03-10","days_after":365,"fine":{"amount":1000000.00},"interest":{"percent_per_month":0.01},
		"discounts":[{"until":"2026-03-01","percent":99.99},{"until":"2026-03-05","percent":50},{"until":"2026-03-10","percent":0.01}]}`, 1_000_000, "2026-03-10")
	require.Empty(t, is)
	require.Equal(t, Due{Date: date(t, "2026-03-10"), DaysAfter: 365, Fine: DueFine{Amount: MaxAmount}, InterestBP: 1,
		Discounts: []DueDiscount{{Until: date(t, "2026-03-01"), PercentBP: 9999}, {Until: date(t, "2026-03-05"), PercentBP: 5000},
			{Until: date(t, "2026-03-10"), PercentBP: 1}}}, d)

	// null members are absent; days_after defaults; exponents follow the
	// precision rule of amounts.
	d, is = parseDue(t, `{"date":"2026-03-10","days_after":null,"fine":null,"interest":null,"discounts":null}`, 100, "2026-03-10")
	require.Empty(t, is)
	require.Equal(t, Due{Date: date(t, "2026-03-10"), DaysAfter: 30}, d)
	d, is = parseDue(t, `{"date":"2026-03-10","fine":{"percent":1e2,"amount":null},"discounts":[{"until":"2026-03-09","amount":0.99}]}`, 100, "2026-03-10")
	require.Empty(t, is)
	require.Equal(t, int64(10000), d.Fine.PercentBP)
	require.Equal(t, Amount(99), d.Discounts[0].Amount, "leaves exactly R$ 0.01")
}

func TestDueParseRefuses(t *testing.T) {
	t.Parallel()
	const today = "2026-03-10"
	tests := []struct {
		body   string
		amount Amount
		want   []FieldIssue
	}{
		{`{}`, 10000, []FieldIssue{{"due.date", issueRequired}}},
		{`{"date":"2026-03-09"}`, 10000, []FieldIssue{{"due.date", issueDueDatePast}}},
		{`{"date":"10/03/2026"}`, 10000, []FieldIssue{{"due.date", "must be a date YYYY-MM-DD"}}},
		{`{"date":"2026-02-30"}`, 10000, []FieldIssue{{"due.date", "must be a date YYYY-MM-DD"}}},
		{`{"date":"2026-03-10","days_after":-1}`, 10000, []FieldIssue{{"due.days_after", issueDaysAfter}}},
		{`{"date":"2026-03-10","days_after":366}`, 10000, []FieldIssue{{"due.days_after", issueDaysAfter}}},
		{`{"date":"2026-03-10","days_after":1.5}`, 10000, []FieldIssue{{"due.days_after", issueDaysAfter}}},
		{`{"date":"2026-03-10","days_after":"30"}`, 10000, []FieldIssue{{"due.days_after", issueDaysAfter}}},
		{`{"date":"2026-03-10","fine":{}}`, 10000, []FieldIssue{{"due.fine", issuePercentOrAmt}}},
		{`{"date":"2026-03-10","fine":{"percent":2,"amount":1}}`, 10000, []FieldIssue{{"due.fine", issuePercentOrAmt}}},
		{`{"date":"2026-03-10","fine":{"percent":2.001}}`, 10000, []FieldIssue{{"due.fine.percent", issuePercent}}},
		{`{"date":"2026-03-10","fine":{"percent":-2}}`, 10000, []FieldIssue{{"due.fine.percent", issuePercent}}},
		{`{"date":"2026-03-10","fine":{"percent":100.01}}`, 10000, []FieldIssue{{"due.fine.percent", issuePercent}}},
		{`{"date":"2026-03-10","fine":{"percent":0}}`, 10000, []FieldIssue{{"due.fine.percent", issuePercent}}},
		{`{"date":"2026-03-10","fine":{"percent":"2"}}`, 10000, []FieldIssue{{"due.fine.percent", issuePercent}}},
		{`{"date":"2026-03-10","fine":{"amount":-5}}`, 10000, []FieldIssue{{"due.fine.amount", issueDueAmount}}},
		{`{"date":"2026-03-10","fine":{"amount":5.001}}`, 10000, []FieldIssue{{"due.fine.amount", issueDueAmount}}},
		{`{"date":"2026-03-10","interest":{}}`, 10000, []FieldIssue{{"due.interest.percent_per_month", issueRequired}}},
		{`{"date":"2026-03-10","interest":{"percent_per_month":1.005}}`, 10000, []FieldIssue{{"due.interest.percent_per_month", issuePercent}}},
		{`{"date":"2026-03-10","interest":{"percent_per_month":101}}`, 10000, []FieldIssue{{"due.interest.percent_per_month", issuePercent}}},
		{`{"date":"2026-03-10","discounts":[]}`, 10000, []FieldIssue{{"due.discounts", issueDiscountCount}}},
		{`{"date":"2026-03-10","discounts":[{"until":"2026-03-01","amount":1},{"until":"2026-03-02","amount":1},
			{"until":"2026-03-03","amount":1},{"until":"2026-03-04","amount":1}]}`, 10000, []FieldIssue{{"due.discounts", issueDiscountCount}}},
		{`{"date":"2026-03-10","discounts":[{"until":"2026-03-01","amount":1},{"until":"2026-03-02","percent":1}]}`, 10000,
			[]FieldIssue{{"due.discounts", issueDiscountKinds}}},
		{`{"date":"2026-03-10","discounts":[{"until":"2026-03-05","amount":2},{"until":"2026-03-05","amount":1}]}`, 10000,
			[]FieldIssue{{"due.discounts[1].until", issueUntilOrder}}},
		{`{"date":"2026-03-10","discounts":[{"until":"2026-03-05","amount":2},{"until":"2026-03-04","amount":1}]}`, 10000,
			[]FieldIssue{{"due.discounts[1].until", issueUntilOrder}}},
		{`{"date":"2026-03-10","discounts":[{"until":"2026-03-11","amount":1}]}`, 10000, []FieldIssue{{"due.discounts[0].until", issueUntilAfterDue}}},
		{`{"date":"2026-03-10","discounts":[{"amount":1}]}`, 10000, []FieldIssue{{"due.discounts[0].until", issueRequired}}},
		{`{"date":"2026-03-10","discounts":[{"until":"2026-3-1","amount":1}]}`, 10000, []FieldIssue{{"due.discounts[0].until", "must be a date YYYY-MM-DD"}}},
		{`{"date":"2026-03-10","discounts":[{"until":"2026-03-01"}]}`, 10000, []FieldIssue{{"due.discounts[0]", issuePercentOrAmt}}},
		{`{"date":"2026-03-10","discounts":[{"until":"2026-03-01","amount":1,"percent":1}]}`, 10000, []FieldIssue{{"due.discounts[0]", issuePercentOrAmt}}},
		{`{"date":"2026-03-10","discounts":[{"until":"2026-03-01","amount":1.00}]}`, 100, []FieldIssue{{"due.discounts[0].amount", issueDiscountLeft}}},
		{`{"date":"2026-03-10","discounts":[{"until":"2026-03-01","amount":2.00}]}`, 100, []FieldIssue{{"due.discounts[0].amount", issueDiscountLeft}}},
		{`{"date":"2026-03-10","discounts":[{"until":"2026-03-01","percent":100}]}`, 10000, []FieldIssue{{"due.discounts[0].percent", issueDiscountLeft}}},
		// 50% of R$ 0.01 rounds up to the whole centavo.
		{`{"date":"2026-03-10","discounts":[{"until":"2026-03-01","percent":50}]}`, 1, []FieldIssue{{"due.discounts[0].percent", issueDiscountLeft}}},
		{`{"date":"2026-03-10","discounts":[{"until":"2026-03-01","percent":0.001}]}`, 10000, []FieldIssue{{"due.discounts[0].percent", issuePercent}}},
		{`{"date":"2026-03-10","discounts":[{"until":"2026-03-01","amount":0}]}`, 10000, []FieldIssue{{"due.discounts[0].amount", issueDueAmount}}},
		// Every problem at once, each naming its field.
		{`{"date":"2026-03-09","days_after":400,"fine":{"percent":2,"amount":1},"interest":{"percent_per_month":-1},
			"discounts":[{"until":"x","amount":1},{"until":"2026-03-01","percent":1.234}]}`, 10000, []FieldIssue{
			{"due.date", issueDueDatePast}, {"due.days_after", issueDaysAfter}, {"due.fine", issuePercentOrAmt},
			{"due.interest.percent_per_month", issuePercent}, {"due.discounts[0].until", "must be a date YYYY-MM-DD"},
			{"due.discounts[1].percent", issuePercent}, {"due.discounts", issueDiscountKinds}}},
	}
	for _, tt := range tests {
		d, is := parseDue(t, tt.body, tt.amount, today)
		require.Equal(t, tt.want, is, tt.body)
		require.Equal(t, Due{}, d, tt.body)
	}
	// An invalid charge amount (0) skips only the discount's share check.
	_, is := parseDue(t, `{"date":"2026-03-10","discounts":[{"until":"2026-03-01","amount":5.00}]}`, 0, today)
	require.Empty(t, is)
}

func TestDueJSONRoundTrip(t *testing.T) {
	t.Parallel()
	for _, body := range []string{
		`{"date":"2026-12-10","days_after":30,"fine":{"percent":2},"interest":{"percent_per_month":1.5},"discounts":[{"until":"2026-12-01","amount":50},{"until":"2026-12-05","amount":20.5}]}`,
		`{"date":"2026-12-10","days_after":0,"fine":{"amount":5.25},"discounts":[{"until":"2026-12-10","percent":0.25}]}`,
		`{"date":"2026-12-10","days_after":365}`,
	} {
		d := mustDue(t, body, 100000)
		b, err := json.Marshal(d)
		require.NoError(t, err)
		require.JSONEq(t, body, string(b))
		var back Due
		require.NoError(t, json.Unmarshal(b, &back))
		require.Equal(t, d, back)
	}
	// Stored terms whose date has passed still read back.
	var old Due
	require.NoError(t, json.Unmarshal([]byte(`{"date":"2001-01-01","days_after":1}`), &old))
	require.Equal(t, date(t, "2001-01-02"), old.LastDay())
	require.Error(t, json.Unmarshal([]byte(`{"date":"2001-01-01","days_after":1000}`), &old))
}
