package pix

import (
	"encoding/json"
	"fmt"
	"strconv"
	"time"
)

// Limits of a charge's due terms (docs/due-dates.md).
const (
	// DefaultDaysAfter is days_after when the request leaves it out.
	DefaultDaysAfter = 30
	// MaxDaysAfter is the longest validity after the due date, in days.
	MaxDaysAfter = 365
	// MaxDiscounts is how many discount steps a charge may have.
	MaxDiscounts = 3
	// maxPercentBP is 100%, the largest percentage of any term.
	maxPercentBP = 10_000
)

// Due is the terms of a charge with a due date: it is paid for its amount
// minus a discount until Date, and for its amount plus a fine and interest
// on each of the DaysAfter days that follow, after which it can no longer
// be paid. Percentages are in basis points (hundredths of a percent: 2% =
// 200). Build one with DueRequest.Parse, which enforces every rule.
type Due struct {
	// Date is the due date (São Paulo calendar).
	Date Date
	// DaysAfter is how many calendar days after Date the charge can still
	// be paid, 0 to MaxDaysAfter.
	DaysAfter int
	// Fine is charged once on any day after Date; zero: none.
	Fine DueFine
	// InterestBP is the interest per month in basis points, charged per
	// calendar day after Date as a thirtieth of it; 0: none.
	InterestBP int64
	// Discounts apply on or before Date: at most MaxDiscounts, dates
	// strictly ascending and not after Date, all of one kind.
	Discounts []DueDiscount
}

// DueFine is a fine: a percentage of the amount or a fixed amount (at most
// one of the two is non-zero).
type DueFine struct {
	PercentBP int64
	Amount    Amount
}

// IsZero reports whether there is no fine.
func (f DueFine) IsZero() bool { return f.PercentBP == 0 && f.Amount == 0 }

// DueDiscount is a discount granted when paying on or before Until: a
// percentage of the amount or a fixed amount (exactly one is non-zero).
type DueDiscount struct {
	Until     Date
	PercentBP int64
	Amount    Amount
}

// DueAmount is what a charge with due terms costs on one day, part by part:
// Total = Original − Discount + Fine + Interest. Each part is rounded half up
// to the centavo on its own, then they are summed.
type DueAmount struct {
	Original Amount
	Discount Amount
	Fine     Amount
	Interest Amount
	Total    Amount
}

// LastDay is the last day the charge can be paid: Date + DaysAfter.
func (d Due) LastDay() Date { return d.Date.AddDays(d.DaysAfter) }

// Deadline is the first instant, in loc, at which the charge can no longer
// be paid: the start of the day after LastDay. It is the charge's expiry.
func (d Due) Deadline(loc *time.Location) time.Time { return d.LastDay().AddDays(1).Start(loc) }

// On returns what is due for a charge of amount when it is paid on day, and
// false when day is after LastDay (the charge can no longer be paid). A day
// before the charge existed is the caller's to refuse.
//
// On or before Date: amount minus the discount of the first entry whose
// Until is on or after day (none once every Until has passed). After Date:
// amount plus the fine (a percentage of amount, or the fixed amount) plus
// interest = amount × InterestBP/10000 / 30 × (day − Date in calendar days).
func (d Due) On(amount Amount, day Date) (DueAmount, bool) {
	if day.After(d.LastDay()) {
		return DueAmount{}, false
	}
	out := DueAmount{Original: amount}
	if !day.After(d.Date) {
		for _, disc := range d.Discounts {
			if !disc.Until.Before(day) {
				out.Discount = disc.value(amount)
				break
			}
		}
	} else {
		out.Fine = d.Fine.Amount
		if d.Fine.PercentBP > 0 {
			out.Fine = Amount(roundHalfUp(int64(amount)*d.Fine.PercentBP, 10_000))
		}
		// amount × (bp/100)% / 30 × days = amount × bp × days / 300000.
		late := int64(day.DaysSince(d.Date))
		out.Interest = Amount(roundHalfUp(int64(amount)*d.InterestBP*late, 300_000))
	}
	out.Total = out.Original - out.Discount + out.Fine + out.Interest
	return out, true
}

// AmountOn is On's Total: what a payer pays for a charge of amount on day,
// and false when day is after LastDay.
func (d Due) AmountOn(amount Amount, day Date) (Amount, bool) {
	a, ok := d.On(amount, day)
	return a.Total, ok
}

// value is the discount on amount.
func (disc DueDiscount) value(amount Amount) Amount {
	if disc.PercentBP > 0 {
		return Amount(roundHalfUp(int64(amount)*disc.PercentBP, 10_000))
	}
	return disc.Amount
}

// roundHalfUp returns num/den rounded to the nearest integer, halves up,
// for num ≥ 0 and den > 0. Callers keep num far below the int64 range:
// amount ≤ 10^8 centavos, basis points ≤ 10^4, days ≤ 366.
func roundHalfUp(num, den int64) int64 { return (2*num + den) / (2 * den) }

// DueRequest is the due object of a charge request as the client sent it:
// numbers stay raw JSON text so that they are read exactly (never through
// float64), and Parse checks every field.
type DueRequest struct {
	Date      string               `json:"date"`
	DaysAfter json.RawMessage      `json:"days_after"`
	Fine      *DueFineRequest      `json:"fine"`
	Interest  *DueInterestRequest  `json:"interest"`
	Discounts []DueDiscountRequest `json:"discounts"`
}

// DueFineRequest is {"percent": 2.00} or {"amount": 5.00}.
type DueFineRequest struct {
	Percent json.RawMessage `json:"percent"`
	Amount  json.RawMessage `json:"amount"`
}

// DueInterestRequest is {"percent_per_month": 1.00}.
type DueInterestRequest struct {
	PercentPerMonth json.RawMessage `json:"percent_per_month"`
}

// DueDiscountRequest is {"until": "2026-12-05", "amount": 10.00} or the same
// with "percent".
type DueDiscountRequest struct {
	Until   string          `json:"until"`
	Amount  json.RawMessage `json:"amount"`
	Percent json.RawMessage `json:"percent"`
}

// Issues of the due object, as FieldIssue texts.
const (
	issueRequired      = "is required"
	issueDueDatePast   = "must be today or later (São Paulo date)"
	issueDaysAfter     = "must be an integer from 0 to 365"
	issuePercent       = "must be a number greater than 0 and at most 100, with at most two decimals"
	issueDueAmount     = "must be a number in reais, greater than 0, at most 1000000.00, with at most two decimals"
	issuePercentOrAmt  = "must have either percent or amount, not both"
	issueDiscountCount = "must have 1 to 3 entries"
	issueDiscountKinds = "must be all amount or all percent"
	issueUntilOrder    = "must be after the previous discount's until"
	issueUntilAfterDue = "must not be after due.date"
	issueDiscountLeft  = "must leave at least 0.01 to pay"
)

// Parse checks r as the due object of a charge of amount created on today
// (São Paulo date) and returns the terms, or every problem found, each
// naming its field under "due." (due.fine.percent, due.discounts[1].until).
// amount ≤ 0 means the charge's amount is itself invalid: the checks that
// need it (a discount must leave at least R$ 0.01) are skipped.
func (r *DueRequest) Parse(amount Amount, today Date) (Due, []FieldIssue) {
	return r.parse(amount, today, true)
}

func (r *DueRequest) parse(amount Amount, today Date, checkToday bool) (Due, []FieldIssue) {
	var is []FieldIssue
	add := func(field, issue string) { is = append(is, FieldIssue{Field: field, Issue: issue}) }
	var d Due

	switch date, err := ParseDate(r.Date); {
	case r.Date == "":
		add("due.date", issueRequired)
	case err != nil:
		add("due.date", ErrDate.Error())
	case checkToday && date.Before(today):
		add("due.date", issueDueDatePast)
	default:
		d.Date = date
	}

	d.DaysAfter = DefaultDaysAfter
	if !absent(r.DaysAfter) {
		n, ok := parseDays(r.DaysAfter)
		if !ok {
			add("due.days_after", issueDaysAfter)
		}
		d.DaysAfter = n
	}

	if f := r.Fine; f != nil {
		switch {
		case absent(f.Percent) && absent(f.Amount):
			add("due.fine", issuePercentOrAmt)
		case !absent(f.Percent) && !absent(f.Amount):
			add("due.fine", issuePercentOrAmt)
		case !absent(f.Percent):
			if bp, ok := parsePercentJSON(f.Percent); ok {
				d.Fine.PercentBP = bp
			} else {
				add("due.fine.percent", issuePercent)
			}
		default:
			if a, err := ParseAmount(f.Amount); err == nil {
				d.Fine.Amount = a
			} else {
				add("due.fine.amount", issueDueAmount)
			}
		}
	}

	if i := r.Interest; i != nil {
		switch bp, ok := parsePercentJSON(i.PercentPerMonth); {
		case absent(i.PercentPerMonth):
			add("due.interest.percent_per_month", issueRequired)
		case !ok:
			add("due.interest.percent_per_month", issuePercent)
		default:
			d.InterestBP = bp
		}
	}

	if r.Discounts != nil {
		d.Discounts, is = parseDiscounts(r.Discounts, amount, d.Date, is)
	}
	if len(is) > 0 {
		return Due{}, is
	}
	return d, nil
}

// parseDiscounts checks the discounts (due is the zero Date when due.date
// is itself invalid) and appends its issues to is.
func parseDiscounts(list []DueDiscountRequest, amount Amount, due Date, is []FieldIssue) ([]DueDiscount, []FieldIssue) {
	add := func(field, issue string) { is = append(is, FieldIssue{Field: field, Issue: issue}) }
	if len(list) == 0 || len(list) > MaxDiscounts {
		add("due.discounts", issueDiscountCount)
		return nil, is
	}
	out := make([]DueDiscount, 0, len(list))
	percents, amounts := 0, 0
	var prev Date
	for i, r := range list {
		f := "due.discounts[" + strconv.Itoa(i) + "]"
		var disc DueDiscount
		switch until, err := ParseDate(r.Until); {
		case r.Until == "":
			add(f+".until", issueRequired)
		case err != nil:
			add(f+".until", ErrDate.Error())
		case !prev.IsZero() && !until.After(prev):
			add(f+".until", issueUntilOrder)
		case !due.IsZero() && until.After(due):
			add(f+".until", issueUntilAfterDue)
		default:
			disc.Until = until
		}
		if u, err := ParseDate(r.Until); err == nil {
			prev = u
		}
		switch {
		case absent(r.Percent) == absent(r.Amount):
			add(f, issuePercentOrAmt)
		case !absent(r.Percent):
			percents++
			if bp, ok := parsePercentJSON(r.Percent); ok {
				disc.PercentBP = bp
			} else {
				add(f+".percent", issuePercent)
			}
		default:
			amounts++
			if a, err := ParseAmount(r.Amount); err == nil {
				disc.Amount = a
			} else {
				add(f+".amount", issueDueAmount)
			}
		}
		if amount > 0 && (disc.PercentBP > 0 || disc.Amount > 0) && amount-disc.value(amount) < 1 {
			field := f + ".amount"
			if disc.PercentBP > 0 {
				field = f + ".percent"
			}
			add(field, issueDiscountLeft)
		}
		out = append(out, disc)
	}
	if percents > 0 && amounts > 0 {
		add("due.discounts", issueDiscountKinds)
	}
	return out, is
}

// absent reports whether a raw JSON member was left out or null.
func absent(raw json.RawMessage) bool {
	t := trimJSONSpace(raw)
	return len(t) == 0 || string(t) == "null"
}

// parseDays reads a JSON integer from 0 to MaxDaysAfter written as plain
// digits.
func parseDays(raw json.RawMessage) (int, bool) {
	t := trimJSONSpace(raw)
	if len(t) == 0 || len(t) > 3 || !allDigits(string(t)) || (len(t) > 1 && t[0] == '0') {
		return 0, false
	}
	n, err := strconv.Atoi(string(t))
	if err != nil || n > MaxDaysAfter {
		return 0, false
	}
	return n, true
}

// parsePercentJSON reads a JSON number greater than 0 and at most 100 with
// at most two decimal places (the precision rule of ParseAmount) into basis
// points, exactly.
func parsePercentJSON(raw json.RawMessage) (int64, bool) {
	d, ok := parseJSONNumber(trimJSONSpace(raw))
	if !ok || d.neg || d.scale > 2 {
		return 0, false
	}
	// Hundredths of a percent, as centavos are hundredths of a real.
	v, ok := d.centavos(maxPercentBP)
	if !ok || v == 0 {
		return 0, false
	}
	return int64(v), true //nolint:gosec // G115: v ≤ 10,000, checked by centavos
}

// dueJSON is the shape in which answers show the terms, the request's own.
type dueJSON struct {
	Date      Date           `json:"date"`
	DaysAfter int            `json:"days_after"`
	Fine      *termJSON      `json:"fine,omitempty"`
	Interest  *interestJSON  `json:"interest,omitempty"`
	Discounts []discountJSON `json:"discounts,omitempty"`
}

type termJSON struct {
	Percent *percentJSON `json:"percent,omitempty"`
	Amount  *Amount      `json:"amount,omitempty"`
}

type interestJSON struct {
	PercentPerMonth percentJSON `json:"percent_per_month"`
}

type discountJSON struct {
	Until   Date         `json:"until"`
	Percent *percentJSON `json:"percent,omitempty"`
	Amount  *Amount      `json:"amount,omitempty"`
}

// percentJSON writes basis points as a JSON number in percent: 250 → 2.5.
type percentJSON int64

func (p percentJSON) MarshalJSON() ([]byte, error) { return []byte(FormatPercent(int64(p))), nil }

// MarshalJSON writes the terms as a request's due object, every default
// spelled out: {"date":"2026-12-10","days_after":30,"fine":{"percent":2},
// "interest":{"percent_per_month":1},"discounts":[{"until":"2026-12-05",
// "amount":10}]}.
func (d Due) MarshalJSON() ([]byte, error) {
	j := dueJSON{Date: d.Date, DaysAfter: d.DaysAfter}
	switch {
	case d.Fine.PercentBP > 0:
		p := percentJSON(d.Fine.PercentBP)
		j.Fine = &termJSON{Percent: &p}
	case d.Fine.Amount > 0:
		a := d.Fine.Amount
		j.Fine = &termJSON{Amount: &a}
	}
	if d.InterestBP > 0 {
		j.Interest = &interestJSON{PercentPerMonth: percentJSON(d.InterestBP)}
	}
	for _, disc := range d.Discounts {
		dj := discountJSON{Until: disc.Until}
		if disc.PercentBP > 0 {
			p := percentJSON(disc.PercentBP)
			dj.Percent = &p
		} else {
			a := disc.Amount
			dj.Amount = &a
		}
		j.Discounts = append(j.Discounts, dj)
	}
	b, err := json.Marshal(j)
	if err != nil {
		return nil, fmt.Errorf("pix: encode due terms: %w", err)
	}
	return b, nil
}

// UnmarshalJSON reads terms written by MarshalJSON (stored terms): every
// rule of Parse applies except that the due date may have passed and a
// discount's share of the amount, which is not known here, is not checked.
func (d *Due) UnmarshalJSON(b []byte) error {
	var r DueRequest
	if err := json.Unmarshal(b, &r); err != nil {
		return fmt.Errorf("pix: decode due terms: %w", err)
	}
	v, is := r.parse(0, Date{}, false)
	if len(is) > 0 {
		return fmt.Errorf("pix: decode due terms: %s %s", is[0].Field, is[0].Issue)
	}
	*d = v
	return nil
}
