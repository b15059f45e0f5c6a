package pix

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func dates(t *testing.T, ss ...string) []Date {
	t.Helper()
	out := make([]Date, len(ss))
	for i, s := range ss {
		out[i] = date(t, s)
	}
	return out
}

// TestScheduleWorkedExamples: the calendar of docs/recurrences.md, month
// ends and leap years included; each date is counted from start_date, so a
// short month does not pull the later ones back.
func TestScheduleWorkedExamples(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name  string
		s     Schedule
		until string
		want  []string
	}{
		{"monthly from Jan 31 across a leap February", Schedule{Frequency: Monthly, Start: date(t, "2028-01-31")}, "2028-07-01",
			[]string{"2028-01-31", "2028-02-29", "2028-03-31", "2028-04-30", "2028-05-31", "2028-06-30"}},
		{"monthly from Jan 31, common year", Schedule{Frequency: Monthly, Start: date(t, "2027-01-31")}, "2027-04-30",
			[]string{"2027-01-31", "2027-02-28", "2027-03-31", "2027-04-30"}},
		{"monthly from the 30th", Schedule{Frequency: Monthly, Start: date(t, "2026-12-30")}, "2027-03-31",
			[]string{"2026-12-30", "2027-01-30", "2027-02-28", "2027-03-30"}},
		{"quarterly from Nov 30", Schedule{Frequency: Quarterly, Start: date(t, "2026-11-30")}, "2027-12-31",
			[]string{"2026-11-30", "2027-02-28", "2027-05-30", "2027-08-30", "2027-11-30"}},
		{"semiannual from Aug 31", Schedule{Frequency: Semiannual, Start: date(t, "2027-08-31")}, "2029-09-01",
			[]string{"2027-08-31", "2028-02-29", "2028-08-31", "2029-02-28", "2029-08-31"}},
		{"annual from Feb 29", Schedule{Frequency: Annual, Start: date(t, "2028-02-29")}, "2032-12-31",
			[]string{"2028-02-29", "2029-02-28", "2030-02-28", "2031-02-28", "2032-02-29"}},
		{"annual across 2100, not a leap year", Schedule{Frequency: Annual, Start: date(t, "2096-02-29")}, "2104-03-01",
			[]string{"2096-02-29", "2097-02-28", "2098-02-28", "2099-02-28", "2100-02-28", "2101-02-28", "2102-02-28", "2103-02-28", "2104-02-29"}},
		{"weekly across the year's end", Schedule{Frequency: Weekly, Start: date(t, "2026-12-17")}, "2027-01-14",
			[]string{"2026-12-17", "2026-12-24", "2026-12-31", "2027-01-07", "2027-01-14"}},
		{"end_date stops it", Schedule{Frequency: Monthly, Start: date(t, "2026-12-10"), End: date(t, "2027-03-09")}, "",
			[]string{"2026-12-10", "2027-01-10", "2027-02-10"}},
		{"end_date on a due date includes it", Schedule{Frequency: Monthly, Start: date(t, "2026-12-10"), End: date(t, "2027-03-10")}, "",
			[]string{"2026-12-10", "2027-01-10", "2027-02-10", "2027-03-10"}},
		{"end_date on start_date: one cycle", Schedule{Frequency: Annual, Start: date(t, "2026-12-10"), End: date(t, "2026-12-10")}, "",
			[]string{"2026-12-10"}},
	} {
		require.Equal(t, dates(t, c.want...), c.s.Cycles(dateOrZero(t, c.until)), c.name)
	}
	require.Nil(t, Schedule{Frequency: Monthly, Start: date(t, "2026-12-10")}.Cycles(Date{}), "endless: no list")
	_, ok := Schedule{Frequency: "DAILY", Start: date(t, "2026-12-10")}.Due(0)
	require.False(t, ok, "an unknown frequency has no calendar")
	_, ok = Schedule{Frequency: Monthly, Start: date(t, "2026-12-10")}.Due(-1)
	require.False(t, ok)

	n, last, ok := Schedule{Frequency: Monthly, Start: date(t, "2026-12-10"), End: date(t, "2027-12-10")}.Last()
	require.True(t, ok)
	require.Equal(t, 12, n)
	require.Equal(t, date(t, "2027-12-10"), last)
	_, _, ok = Schedule{Frequency: Monthly, Start: date(t, "2026-12-10")}.Last()
	require.False(t, ok)
}

func dateOrZero(t *testing.T, s string) Date {
	if s == "" {
		return Date{}
	}
	return date(t, s)
}

// TestScheduleAgainstTheStandardLibrary checks every start date of eight
// years (two leap days among them) and every frequency, 60 cycles each,
// against a computation by time.Date: the first of the target month, and
// its last day as day 0 of the month after.
func TestScheduleAgainstTheStandardLibrary(t *testing.T) {
	t.Parallel()
	months := map[Frequency]int{Monthly: 1, Quarterly: 3, Semiannual: 6, Annual: 12}
	first := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := 0; i < 8*366; i++ {
		st := first.AddDate(0, 0, i)
		start := DateOf(st)
		for _, f := range Frequencies() {
			s := Schedule{Frequency: f, Start: start}
			for n := 0; n < 60; n++ {
				var want time.Time
				if k, ok := months[f]; ok {
					firstOfMonth := time.Date(st.Year(), st.Month()+time.Month(n*k), 1, 0, 0, 0, 0, time.UTC)
					last := time.Date(firstOfMonth.Year(), firstOfMonth.Month()+1, 0, 0, 0, 0, 0, time.UTC).Day()
					want = time.Date(firstOfMonth.Year(), firstOfMonth.Month(), min(st.Day(), last), 0, 0, 0, 0, time.UTC)
				} else {
					want = st.AddDate(0, 0, 7*n)
				}
				got, ok := s.Due(n)
				if !ok || got != DateOf(want) {
					require.Failf(t, "wrong due date", "%s from %s, cycle %d: got %s, want %s", f, start, n, got, DateOf(want))
				}
			}
		}
	}
}

// TestScheduleNext: the first cycle due on or after a day, checked against
// walking the calendar from the start.
func TestScheduleNext(t *testing.T) {
	t.Parallel()
	for _, s := range []Schedule{
		{Frequency: Monthly, Start: date(t, "2027-01-31")},
		{Frequency: Weekly, Start: date(t, "2026-12-17"), End: date(t, "2027-06-01")},
		{Frequency: Quarterly, Start: date(t, "2026-11-30"), End: date(t, "2029-11-29")},
		{Frequency: Annual, Start: date(t, "2028-02-29")},
		{Frequency: Semiannual, Start: date(t, "2027-08-31"), End: date(t, "2031-01-01")},
	} {
		for day := s.Start.AddDays(-40); day.Before(s.Start.AddDays(5 * 366)); day = day.AddDays(1) {
			wantN, want, wantOK := -1, Date{}, false
			for n := 0; ; n++ {
				d, ok := s.Due(n)
				if !ok {
					break
				}
				if !d.Before(day) {
					wantN, want, wantOK = n, d, true
					break
				}
			}
			n, got, ok := s.Next(day)
			require.Equal(t, wantOK, ok, "%+v on %s", s, day)
			if ok {
				require.Equal(t, wantN, n, "%+v on %s", s, day)
				require.Equal(t, want, got, "%+v on %s", s, day)
			}
		}
	}
	n, d, ok := Schedule{Frequency: Monthly, Start: date(t, "2027-01-31")}.Next(date(t, "2027-02-28"))
	require.True(t, ok)
	require.Equal(t, 1, n)
	require.Equal(t, date(t, "2027-02-28"), d)
	n, d, ok = Schedule{Frequency: Monthly, Start: date(t, "2027-01-31")}.Next(date(t, "2027-03-01"))
	require.True(t, ok)
	require.Equal(t, 2, n)
	require.Equal(t, date(t, "2027-03-31"), d, "from start_date, not from February's 28th")
}

func TestChargeWindowRetriesAndExpiry(t *testing.T) {
	t.Parallel()
	due := date(t, "2027-03-01")
	opens, closes := ChargeWindow(due)
	require.Equal(t, date(t, "2027-02-19"), opens)
	require.Equal(t, date(t, "2027-02-27"), closes)
	require.False(t, InChargeWindow(due, date(t, "2027-02-18")))
	require.True(t, InChargeWindow(due, date(t, "2027-02-19")))
	require.True(t, InChargeWindow(due, date(t, "2027-02-27")))
	require.False(t, InChargeWindow(due, date(t, "2027-02-28")))

	require.Nil(t, RetryDays(RetryNone, due))
	require.Equal(t, dates(t, "2027-03-02", "2027-03-04", "2027-03-06"), RetryDays(RetryThreeInSevenDays, due))
	require.Equal(t, dates(t, "2029-01-01", "2029-01-03", "2029-01-05"), RetryDays(RetryThreeInSevenDays, date(t, "2028-12-31")))
	require.Equal(t, 1, MaxAttempts(RetryNone))
	require.Equal(t, 4, MaxAttempts(RetryThreeInSevenDays))
	require.Equal(t, due, LastAttemptDay(RetryNone, due))
	require.Equal(t, date(t, "2027-03-06"), LastAttemptDay(RetryThreeInSevenDays, due))

	sp, err := time.LoadLocation("America/Sao_Paulo")
	require.NoError(t, err)
	// The end of the day in São Paulo (UTC−3): 03:00 UTC of the day after.
	require.Equal(t, time.Date(2027, 3, 2, 3, 0, 0, 0, time.UTC), CycleExpiresAt(RetryNone, due, sp).UTC())
	require.Equal(t, time.Date(2027, 3, 7, 3, 0, 0, 0, time.UTC), CycleExpiresAt(RetryThreeInSevenDays, due, sp).UTC())
}

// TestScheduleEndsAtTheLastCycleDay: a calendar without an end date has no
// cycle after LastCycleDue, so that no stored date ever needs a fifth
// year digit (9999-12-25 weekly would otherwise be followed by
// 10000-01-01).
func TestScheduleEndsAtTheLastCycleDay(t *testing.T) {
	t.Parallel()
	s := Schedule{Frequency: Weekly, Start: date(t, "9999-12-11")}
	d, ok := s.Due(2)
	require.True(t, ok)
	require.Equal(t, "9999-12-25", d.String())
	_, ok = s.Due(3)
	require.False(t, ok)
	_, ok = Schedule{Frequency: Monthly, Start: date(t, "9999-11-30")}.Due(1)
	require.False(t, ok, "9999-12-30 is past the last cycle day")
}

func TestRecurrenceStatusTransitions(t *testing.T) {
	t.Parallel()
	allowed := map[RecurrenceStatus][]RecurrenceStatus{
		RecurrenceCreated:  {RecurrenceApproved, RecurrenceRejected, RecurrenceExpired, RecurrenceCancelled},
		RecurrenceApproved: {RecurrenceCancelled, RecurrenceFinished},
	}
	for _, from := range RecurrenceStatuses() {
		require.True(t, from.Valid())
		require.Equal(t, from != RecurrenceCreated && from != RecurrenceApproved, from.Final(), from)
		for _, to := range RecurrenceStatuses() {
			want := false
			for _, a := range allowed[from] {
				want = want || a == to
			}
			require.Equal(t, want, from.CanBecome(to), "%s → %s", from, to)
		}
		require.Equal(t, !from.Final(), from.Cancellable(), from)
	}
	require.False(t, RecurrenceStatus("ACTIVE").Valid())
	for _, f := range Frequencies() {
		require.True(t, f.Valid())
	}
	require.False(t, Frequency("DAILY").Valid())
	require.False(t, Frequency("monthly").Valid())
	require.True(t, RetryNone.Valid())
	require.True(t, RetryThreeInSevenDays.Valid())
	require.False(t, RetryPolicy("THREE").Valid())
}

func recRequest(t *testing.T, body string) RecurrenceRequest {
	t.Helper()
	var r RecurrenceRequest
	require.NoError(t, json.Unmarshal([]byte(body), &r))
	return r
}

const goodRecurrence = `{"external_id":"sub-1001","payer":{"name":"Maria Souza","document":"52998224725"},
 "contract":"CTR-1001","description":"Plano mensal","frequency":"MONTHLY","start_date":"2026-12-10",
 "end_date":"2027-12-10","amount":49.90,"retry":"NONE","first_payment":49.90,"postbackUrl":"https://example.com/hook"}`

func TestRecurrenceRequestParse(t *testing.T) {
	t.Parallel()
	today := date(t, "2026-12-08") // start_date is exactly 2 days ahead
	r := recRequest(t, goodRecurrence)
	terms, is := r.Parse(today)
	require.Empty(t, is)
	require.Equal(t, RecurrenceTerms{
		ExternalID: "sub-1001", Payer: RecurrencePayer{Name: "Maria Souza", Document: "52998224725"},
		Contract: "CTR-1001", Description: "Plano mensal",
		Schedule: Schedule{Frequency: Monthly, Start: date(t, "2026-12-10"), End: date(t, "2027-12-10")},
		Amount:   4990, Retry: RetryNone, FirstPayment: 4990,
	}, terms)

	// Optional parts left out: no end, no first payment (journey 2).
	r = recRequest(t, `{"external_id":"x","payer":{"name":"ACME","document":"11222333000181"},"contract":"C",
		"description":"D","frequency":"WEEKLY","start_date":"2026-12-31","amount":0.01,"retry":"THREE_IN_SEVEN_DAYS","end_date":"","first_payment":null}`)
	terms, is = r.Parse(today)
	require.Empty(t, is)
	require.True(t, terms.Schedule.End.IsZero())
	require.Zero(t, terms.FirstPayment)
	require.Equal(t, RetryThreeInSevenDays, terms.Retry)
}

func TestRecurrenceRequestParseRefusals(t *testing.T) {
	t.Parallel()
	today := date(t, "2026-12-08")
	long := strings.Repeat("x", 36)
	for _, c := range []struct {
		name   string
		change map[string]any
		want   []FieldIssue
	}{
		{"unknown frequency", map[string]any{"frequency": "DAILY"}, []FieldIssue{{"frequency", issueFrequency}}},
		{"lower-case frequency", map[string]any{"frequency": "monthly"}, []FieldIssue{{"frequency", issueFrequency}}},
		{"no frequency", map[string]any{"frequency": nil}, []FieldIssue{{"frequency", issueRequired}}},
		{"unknown retry", map[string]any{"retry": "ALWAYS"}, []FieldIssue{{"retry", issueRetry}}},
		{"no retry", map[string]any{"retry": nil}, []FieldIssue{{"retry", issueRequired}}},
		{"start tomorrow", map[string]any{"start_date": "2026-12-09"}, []FieldIssue{{"start_date", issueStartAhead}}},
		{"start today", map[string]any{"start_date": "2026-12-08"}, []FieldIssue{{"start_date", issueStartAhead}}},
		{"start in the past", map[string]any{"start_date": "2025-01-01"}, []FieldIssue{{"start_date", issueStartAhead}}},
		{"start not a date", map[string]any{"start_date": "10/12/2026"}, []FieldIssue{{"start_date", ErrDate.Error()}}},
		{"no start", map[string]any{"start_date": nil}, []FieldIssue{{"start_date", issueRequired}}},
		{"end before start", map[string]any{"end_date": "2026-12-09"}, []FieldIssue{{"end_date", issueEndBefore}}},
		{"end not a date", map[string]any{"end_date": "2027-02-29"}, []FieldIssue{{"end_date", ErrDate.Error()}}},
		// The last cycle's retries and expiry must fit before 9999-12-31.
		{"start at the end of the calendar", map[string]any{"start_date": "9999-12-31", "end_date": nil}, []FieldIssue{{"start_date", issueFarFuture}}},
		{"start past the last cycle day", map[string]any{"start_date": "9999-12-26", "end_date": nil}, []FieldIssue{{"start_date", issueFarFuture}}},
		{"end past the last cycle day", map[string]any{"end_date": "9999-12-26"}, []FieldIssue{{"end_date", issueFarFuture}}},
		{"contract too long", map[string]any{"contract": long}, []FieldIssue{{"contract", issueRecText}}},
		{"contract blank", map[string]any{"contract": "   "}, []FieldIssue{{"contract", issueRecText}}},
		{"no contract", map[string]any{"contract": nil}, []FieldIssue{{"contract", issueRequired}}},
		{"description too long", map[string]any{"description": long}, []FieldIssue{{"description", issueRecText}}},
		{"description with NUL", map[string]any{"description": "a\x00b"}, []FieldIssue{{"description", issueRecValidText}}},
		{"no payer", map[string]any{"payer": nil}, []FieldIssue{{"payer", issueRequired}}},
		{"bad document", map[string]any{"payer": map[string]any{"name": "Maria", "document": "52998224724"}}, []FieldIssue{{"payer.document", issueRecDocument}}},
		{"formatted document", map[string]any{"payer": map[string]any{"name": "Maria", "document": "529.982.247-25"}}, []FieldIssue{{"payer.document", issueRecDocument}}},
		{"no name", map[string]any{"payer": map[string]any{"document": "52998224725"}}, []FieldIssue{{"payer.name", issueRequired}}},
		{"name too long", map[string]any{"payer": map[string]any{"name": strings.Repeat("é", 141), "document": "52998224725"}}, []FieldIssue{{"payer.name", issueRecName}}},
		{"zero amount", map[string]any{"amount": 0}, []FieldIssue{{"amount", issueRecAmount}}},
		{"three decimals", map[string]any{"amount": 49.901}, []FieldIssue{{"amount", issueRecAmount}}},
		{"amount as text", map[string]any{"amount": "49.90"}, []FieldIssue{{"amount", issueRecAmount}}},
		{"amount too large", map[string]any{"amount": 1000000.01}, []FieldIssue{{"amount", issueRecAmount}}},
		{"no amount", map[string]any{"amount": nil}, []FieldIssue{{"amount", issueRequired}}},
		{"negative first payment", map[string]any{"first_payment": -1}, []FieldIssue{{"first_payment", issueRecAmount}}},
		{"bad external id", map[string]any{"external_id": "a b"}, []FieldIssue{{"external_id", issueRecExternal}}},
		{"no external id", map[string]any{"external_id": nil}, []FieldIssue{{"external_id", issueRequired}}},
		{"several at once", map[string]any{"frequency": "X", "retry": "Y", "start_date": "2026-12-01", "amount": 0},
			[]FieldIssue{{"frequency", issueFrequency}, {"retry", issueRetry}, {"start_date", issueStartAhead}, {"amount", issueRecAmount}}},
	} {
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(goodRecurrence), &m))
		for k, v := range c.change {
			if v == nil {
				delete(m, k)
			} else {
				m[k] = v
			}
		}
		b, err := json.Marshal(m)
		require.NoError(t, err)
		r := recRequest(t, string(b))
		terms, is := r.Parse(today)
		require.Equal(t, c.want, is, c.name)
		require.Equal(t, RecurrenceTerms{}, terms, c.name)
	}
}
