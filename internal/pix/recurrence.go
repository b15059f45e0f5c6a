package pix

import (
	"encoding/json"
	"strings"
	"time"
	"unicode/utf8"
)

// Pix Automático (docs/recurrences.md): a payer authorizes a recurrence
// once at their bank; each cycle's charge is then debited on its due date.
// This file holds its vocabulary, its calendar and the validation of a
// create request; it does no I/O.

// Frequency is how often a recurrence's cycles fall due.
type Frequency string

// Frequencies of a recurrence.
const (
	Weekly     Frequency = "WEEKLY"
	Monthly    Frequency = "MONTHLY"
	Quarterly  Frequency = "QUARTERLY"
	Semiannual Frequency = "SEMIANNUAL"
	Annual     Frequency = "ANNUAL"
)

// Frequencies lists every Frequency, shortest first.
func Frequencies() []Frequency { return []Frequency{Weekly, Monthly, Quarterly, Semiannual, Annual} }

// Valid reports whether f is one of Frequencies.
func (f Frequency) Valid() bool { return f.months() > 0 || f == Weekly }

// months is the number of months between two cycles; 0 for Weekly and for
// an unknown frequency.
func (f Frequency) months() int {
	switch f {
	case Monthly:
		return 1
	case Quarterly:
		return 3
	case Semiannual:
		return 6
	case Annual:
		return 12
	}
	return 0
}

// RetryPolicy says whether a failed debit is attempted again.
type RetryPolicy string

// Retry policies of a recurrence.
const (
	// RetryNone: a failed debit fails the cycle.
	RetryNone RetryPolicy = "NONE"
	// RetryThreeInSevenDays: after a failed debit on the due date, new
	// attempts on the 1st, 3rd and 5th day after it.
	RetryThreeInSevenDays RetryPolicy = "THREE_IN_SEVEN_DAYS"
)

// Valid reports whether p is RetryNone or RetryThreeInSevenDays.
func (p RetryPolicy) Valid() bool { return p == RetryNone || p == RetryThreeInSevenDays }

// retryOffsets are the days after the due date of the new attempts of
// RetryThreeInSevenDays.
var retryOffsets = [...]int{1, 3, 5}

// RecurrenceStatus is where a recurrence stands.
type RecurrenceStatus string

// Statuses of a recurrence. CREATED is the only one the payer has not
// answered; REJECTED, EXPIRED, CANCELLED and FINISHED are final.
const (
	RecurrenceCreated   RecurrenceStatus = "CREATED"
	RecurrenceApproved  RecurrenceStatus = "APPROVED"
	RecurrenceRejected  RecurrenceStatus = "REJECTED"
	RecurrenceExpired   RecurrenceStatus = "EXPIRED"
	RecurrenceCancelled RecurrenceStatus = "CANCELLED"
	RecurrenceFinished  RecurrenceStatus = "FINISHED"
)

// RecurrenceStatuses lists every RecurrenceStatus.
func RecurrenceStatuses() []RecurrenceStatus {
	return []RecurrenceStatus{RecurrenceCreated, RecurrenceApproved, RecurrenceRejected, RecurrenceExpired, RecurrenceCancelled, RecurrenceFinished}
}

// Valid reports whether s is one of RecurrenceStatuses.
func (s RecurrenceStatus) Valid() bool {
	switch s {
	case RecurrenceCreated, RecurrenceApproved, RecurrenceRejected, RecurrenceExpired, RecurrenceCancelled, RecurrenceFinished:
		return true
	}
	return false
}

// Final reports whether s can no longer change.
func (s RecurrenceStatus) Final() bool {
	return s == RecurrenceRejected || s == RecurrenceExpired || s == RecurrenceCancelled || s == RecurrenceFinished
}

// CanBecome reports whether a recurrence in s may move to next:
// CREATED → APPROVED, REJECTED, EXPIRED or CANCELLED (the merchant gives
// up before the payer answers); APPROVED → CANCELLED or FINISHED. Nothing
// leaves a final status, and no status moves to itself.
func (s RecurrenceStatus) CanBecome(next RecurrenceStatus) bool {
	switch s {
	case RecurrenceCreated:
		return next == RecurrenceApproved || next == RecurrenceRejected || next == RecurrenceExpired || next == RecurrenceCancelled
	case RecurrenceApproved:
		return next == RecurrenceCancelled || next == RecurrenceFinished
	}
	return false
}

// Cancellable reports whether the merchant may cancel a recurrence in s:
// one that is not final.
func (s RecurrenceStatus) Cancellable() bool { return s.CanBecome(RecurrenceCancelled) }

// CancelledBy says who cancelled a recurrence (the cancelled_by field).
type CancelledBy string

// Who cancels a recurrence.
const (
	CancelledByMerchant CancelledBy = "merchant"
	CancelledByPayer    CancelledBy = "payer"
)

// Webhook events of recurrences, beside names.go's: every one carries
// recurrence_id, external_id and status.
const (
	EventRecurrenceApproved     = "pix.recurrence.approved"
	EventRecurrenceRejected     = "pix.recurrence.rejected"
	EventRecurrenceExpired      = "pix.recurrence.expired"
	EventRecurrenceCancelled    = "pix.recurrence.cancelled"
	EventRecurrenceChargeFailed = "pix.recurrence.charge_failed"
	// EventRecurrenceFinished: the recurrence ended after its last cycle.
	EventRecurrenceFinished = "pix.recurrence.finished"
)

// Limits of a recurrence's calendar (docs/recurrences.md).
const (
	// MinStartDays is how many days after today (São Paulo) start_date
	// must be at least: the first cycle's charge is due at the PSP two
	// days before its date.
	MinStartDays = 2
	// ChargeOpensDays and ChargeClosesDays bound when a cycle's charge is
	// created: from ChargeOpensDays to ChargeClosesDays days before its
	// due date, both included.
	ChargeOpensDays  = 10
	ChargeClosesDays = 2
	// ApprovalDays is how long a CREATED recurrence waits for the payer's
	// answer before it is EXPIRED.
	ApprovalDays = 7
	// MaxRecurrenceText is the longest contract and description (BACEN's
	// vinculo.contrato and vinculo.objeto).
	MaxRecurrenceText = 35
	// MaxRecurrencePayerName is the longest payer name (BACEN's devedor of
	// a recurrence).
	MaxRecurrencePayerName = 140
)

// Schedule is a recurrence's calendar: cycle n (n ≥ 0) is due on Start
// advanced by n periods of Frequency, and no cycle is due after End (the
// zero End: none, the recurrence runs until cancelled).
type Schedule struct {
	Frequency Frequency
	Start     Date
	End       Date
}

// LastCycleDue is the latest due date a cycle can have: its last retry
// (5 days on) and the end of that day, its charge's expiry, still fall on
// or before 9999-12-31, the last date that dates and timestamps (with
// four-digit years) can hold. A calendar without an end date ends there.
var LastCycleDue = Date{Year: 9999, Month: time.December, Day: 25}

// Due returns the due date of cycle n and whether there is such a cycle
// (n ≥ 0, not after End nor after LastCycleDue). A month-based cycle falls on Start's day of
// the month, or on the month's last day when it has fewer days; each is
// computed from Start, never from the cycle before, so a recurrence that
// starts on Jan 31 is due on Feb 28 (29), Mar 31, Apr 30…
func (s Schedule) Due(n int) (Date, bool) {
	if n < 0 || !s.Frequency.Valid() || s.Start.IsZero() {
		return Date{}, false
	}
	var d Date
	if k := s.Frequency.months(); k > 0 {
		m := int(s.Start.Month) - 1 + n*k
		y := s.Start.Year + m/12
		month := time.Month(m%12 + 1)
		d = Date{Year: y, Month: month, Day: min(s.Start.Day, daysIn(y, month))}
	} else {
		d = s.Start.AddDays(7 * n)
	}
	if !s.End.IsZero() && d.After(s.End) || d.After(LastCycleDue) {
		return Date{}, false
	}
	return d, true
}

// daysIn is the number of days of month in year.
func daysIn(year int, month time.Month) int {
	switch month {
	case time.February:
		if year%4 == 0 && (year%100 != 0 || year%400 == 0) {
			return 29
		}
		return 28
	case time.April, time.June, time.September, time.November:
		return 30
	}
	return 31
}

// Next returns the first cycle due on or after day: its number and date,
// and false when no cycle is left (End has passed).
func (s Schedule) Next(day Date) (int, Date, bool) {
	if !s.Frequency.Valid() || s.Start.IsZero() {
		return 0, Date{}, false
	}
	n := 0
	if day.After(s.Start) {
		// An estimate from below (a period is at most 7 days or 31 per
		// month), then forward: a handful of steps whatever the distance.
		if k := s.Frequency.months(); k > 0 {
			n = ((day.Year-s.Start.Year)*12+int(day.Month)-int(s.Start.Month))/k - 1
		} else {
			n = day.DaysSince(s.Start)/7 - 1
		}
		n = max(n, 0)
	}
	for {
		d, ok := s.Due(n)
		if !ok {
			return 0, Date{}, false
		}
		if !d.Before(day) {
			return n, d, true
		}
		n++
	}
}

// Cycles returns the due dates of every cycle up to until (included) and
// End: all of them when until is zero and End is set. With neither it
// returns nil, the calendar being endless.
func (s Schedule) Cycles(until Date) []Date {
	if until.IsZero() || (!s.End.IsZero() && s.End.Before(until)) {
		until = s.End
	}
	if until.IsZero() {
		return nil
	}
	var out []Date
	for n := 0; ; n++ {
		d, ok := s.Due(n)
		if !ok || d.After(until) {
			return out
		}
		out = append(out, d)
	}
}

// Last returns the due date of the last cycle and whether there is one
// (End set and on or after Start).
func (s Schedule) Last() (int, Date, bool) {
	if s.End.IsZero() {
		return 0, Date{}, false
	}
	c := s.Cycles(Date{})
	if len(c) == 0 {
		return 0, Date{}, false
	}
	return len(c) - 1, c[len(c)-1], true
}

// ChargeWindow is the span, both days included, in which the charge of a
// cycle due on due is created: from ChargeOpensDays to ChargeClosesDays
// days before it.
func ChargeWindow(due Date) (opens, closes Date) {
	return due.AddDays(-ChargeOpensDays), due.AddDays(-ChargeClosesDays)
}

// InChargeWindow reports whether today falls in due's ChargeWindow.
func InChargeWindow(due, today Date) bool {
	opens, closes := ChargeWindow(due)
	return !today.Before(opens) && !today.After(closes)
}

// RetryDays returns the days of the new attempts after a failed debit of a
// cycle due on due: the 1st, 3rd and 5th day after it with
// RetryThreeInSevenDays, none with RetryNone.
func RetryDays(p RetryPolicy, due Date) []Date {
	if p != RetryThreeInSevenDays {
		return nil
	}
	out := make([]Date, len(retryOffsets))
	for i, k := range retryOffsets {
		out[i] = due.AddDays(k)
	}
	return out
}

// MaxAttempts is how many debits a cycle may have under p: the one on the
// due date and the retries.
func MaxAttempts(p RetryPolicy) int {
	if p == RetryThreeInSevenDays {
		return 1 + len(retryOffsets)
	}
	return 1
}

// LastAttemptDay is the last day a cycle due on due may be debited: the
// due date, or its last retry day.
func LastAttemptDay(p RetryPolicy, due Date) Date {
	if r := RetryDays(p, due); len(r) > 0 {
		return r[len(r)-1]
	}
	return due
}

// CycleExpiresAt is the expires_at of a cycle's charge: the end of its last
// attempt day in loc (São Paulo), that is the first instant of the day
// after it.
func CycleExpiresAt(p RetryPolicy, due Date, loc *time.Location) time.Time {
	return LastAttemptDay(p, due).AddDays(1).Start(loc)
}

// RecurrencePayer is the payer of a recurrence: whom its cycles debit.
type RecurrencePayer struct {
	Name     string `json:"name"`
	Document string `json:"document"` // CPF (11 digits) or CNPJ (14)
}

// RecurrenceTerms is a valid create request, parsed: what the recurrence
// is, for whom, and when it falls due.
type RecurrenceTerms struct {
	ExternalID  string
	Payer       RecurrencePayer
	Contract    string
	Description string
	Schedule    Schedule
	Amount      Amount
	Retry       RetryPolicy
	// FirstPayment, when positive, is paid at once in the same QR code as
	// the authorization (journey 3); zero: authorization only (journey 2).
	FirstPayment Amount
	// Splits, when the request had them, are copied to every charge of
	// the recurrence (docs/marketplace.md); receivers not yet resolved.
	Splits []Split
}

// RecurrenceRequest is the body of a recurrence's create request as the
// client sent it: amounts stay raw JSON text so that they are read
// exactly. postbackUrl and the Idempotency-Key are checked by the gateway,
// which knows which webhook destinations are allowed.
type RecurrenceRequest struct {
	ExternalID   string           `json:"external_id"`
	Payer        *RecurrencePayer `json:"payer"`
	Contract     string           `json:"contract"`
	Description  string           `json:"description"`
	Frequency    string           `json:"frequency"`
	StartDate    string           `json:"start_date"`
	EndDate      string           `json:"end_date"`
	Amount       json.RawMessage  `json:"amount"`
	Retry        string           `json:"retry"`
	FirstPayment json.RawMessage  `json:"first_payment"`
	PostbackURL  string           `json:"postbackUrl"`
	Splits       []SplitRequest   `json:"splits"`
}

// Issues of a recurrence request, as FieldIssue texts.
const (
	issueRecAmount    = "must be a number in reais, greater than 0, at most 1000000.00, with at most two decimals"
	issueFrequency    = "must be one of WEEKLY, MONTHLY, QUARTERLY, SEMIANNUAL, ANNUAL"
	issueRetry        = "must be one of NONE, THREE_IN_SEVEN_DAYS"
	issueStartAhead   = "must be at least 2 days after today (São Paulo date)"
	issueEndBefore    = "must not be before start_date"
	issueFarFuture    = "must be on or before 9999-12-25, so that a cycle's last retry and its charge's expiry fall before 9999-12-31"
	issueRecText      = "must be 1 to 35 characters"
	issueRecName      = "must be 1 to 140 characters"
	issueRecDocument  = "must be a valid CPF or CNPJ, digits only"
	issueRecExternal  = "must be 1 to 64 characters of A-Z a-z 0-9 . _ : -"
	issueRecValidText = "must be valid text"
)

// Parse checks r as a recurrence created on today (the São Paulo date) and
// returns its terms, or every problem found, each naming its field
// (payer.document, start_date): unknown frequency or retry, a start_date
// less than MinStartDays ahead, an end_date before start_date, contract and
// description of 1 to 35 characters, the payer's name (1 to 140) and
// document (a valid CPF or CNPJ), and amount and first_payment by the
// amount rules (greater than 0, at most 1000000.00, two decimals).
func (r *RecurrenceRequest) Parse(today Date) (RecurrenceTerms, []FieldIssue) {
	var is issueList
	var t RecurrenceTerms
	r.parseParties(&t, &is)
	r.parseSchedule(&t, &is, today)
	r.parseAmounts(&t, &is)
	if r.Splits != nil {
		var splitIssues []FieldIssue
		t.Splits, splitIssues = ParseSplits("splits", r.Splits, t.Amount)
		is = append(is, splitIssues...)
	}
	if len(is) > 0 {
		return RecurrenceTerms{}, is
	}
	return t, nil
}

// issueList gathers the problems of a request, in the order found.
type issueList []FieldIssue

func (is *issueList) add(field, issue string) {
	*is = append(*is, FieldIssue{Field: field, Issue: issue})
}

// text checks v as a required plain text of at most maxLen characters,
// whose length problem is issue, and returns it.
func (is *issueList) text(field, v string, maxLen int, issue string) string {
	switch {
	case v == "":
		is.add(field, issueRequired)
	case !ValidText(v):
		is.add(field, issueRecValidText)
	case !PlainText(v):
		is.add(field, IssuePlainText)
	case strings.TrimSpace(v) == "" || utf8.RuneCountInString(v) > maxLen:
		is.add(field, issue)
	}
	return v
}

// parseParties reads who the recurrence is with and what for: the
// client's external_id, the payer, the contract and the description.
func (r *RecurrenceRequest) parseParties(t *RecurrenceTerms, is *issueList) {
	switch {
	case r.ExternalID == "":
		is.add("external_id", issueRequired)
	case !ValidExternalID(r.ExternalID):
		is.add("external_id", issueRecExternal)
	default:
		t.ExternalID = r.ExternalID
	}
	if r.Payer == nil {
		is.add("payer", issueRequired)
	} else {
		t.Payer.Name = is.text("payer.name", r.Payer.Name, MaxRecurrencePayerName, issueRecName)
		switch {
		case r.Payer.Document == "":
			is.add("payer.document", issueRequired)
		case !ValidDocument(r.Payer.Document):
			is.add("payer.document", issueRecDocument)
		default:
			t.Payer.Document = r.Payer.Document
		}
	}
	t.Contract = is.text("contract", r.Contract, MaxRecurrenceText, issueRecText)
	t.Description = is.text("description", r.Description, MaxRecurrenceText, issueRecText)
}

// parseSchedule reads when the recurrence falls due, and how its failed
// debits are retried.
func (r *RecurrenceRequest) parseSchedule(t *RecurrenceTerms, is *issueList, today Date) {
	switch f := Frequency(r.Frequency); {
	case r.Frequency == "":
		is.add("frequency", issueRequired)
	case !f.Valid():
		is.add("frequency", issueFrequency)
	default:
		t.Schedule.Frequency = f
	}
	switch p := RetryPolicy(r.Retry); {
	case r.Retry == "":
		is.add("retry", issueRequired)
	case !p.Valid():
		is.add("retry", issueRetry)
	default:
		t.Retry = p
	}
	switch d, err := ParseDate(r.StartDate); {
	case r.StartDate == "":
		is.add("start_date", issueRequired)
	case err != nil:
		is.add("start_date", ErrDate.Error())
	case d.DaysSince(today) < MinStartDays:
		is.add("start_date", issueStartAhead)
	case d.After(LastCycleDue):
		is.add("start_date", issueFarFuture)
	default:
		t.Schedule.Start = d
	}
	if r.EndDate == "" {
		return
	}
	switch d, err := ParseDate(r.EndDate); {
	case err != nil:
		is.add("end_date", ErrDate.Error())
	case !t.Schedule.Start.IsZero() && d.Before(t.Schedule.Start):
		is.add("end_date", issueEndBefore)
	case d.After(LastCycleDue):
		is.add("end_date", issueFarFuture)
	default:
		t.Schedule.End = d
	}
}

// parseAmounts reads each cycle's amount and the optional first payment.
func (r *RecurrenceRequest) parseAmounts(t *RecurrenceTerms, is *issueList) {
	if absent(r.Amount) {
		is.add("amount", issueRequired)
	} else if a, err := ParseAmount(r.Amount); err != nil {
		is.add("amount", issueRecAmount)
	} else {
		t.Amount = a
	}
	if absent(r.FirstPayment) {
		return
	}
	if a, err := ParseAmount(r.FirstPayment); err != nil {
		is.add("first_payment", issueRecAmount)
	} else {
		t.FirstPayment = a
	}
}
