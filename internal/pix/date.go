package pix

import (
	"errors"
	"fmt"
	"time"
)

// Date is a calendar date without a time of day or a zone: a due date, or
// the day a payment is made as the São Paulo calendar shows it. The zero
// Date is "no date". Dates compare with == and with Before and After.
type Date struct {
	Year  int
	Month time.Month
	Day   int
}

// DateLayout is the text form of a Date: ISO 8601's YYYY-MM-DD.
const DateLayout = "2006-01-02"

// ErrDate is the error of ParseDate; its text serves as a field's issue.
var ErrDate = errors.New("must be a date YYYY-MM-DD")

// ParseDate parses exactly "YYYY-MM-DD" (four-digit year, a real day of a
// real month: 2026-02-29 is refused, 2028-02-29 is not). Nothing else is
// accepted: no time, zone, spaces or shorter forms.
func ParseDate(s string) (Date, error) {
	if len(s) != len(DateLayout) || s[4] != '-' || s[7] != '-' ||
		!allDigits(s[0:4]) || !allDigits(s[5:7]) || !allDigits(s[8:10]) {
		return Date{}, fmt.Errorf("invalid date %s: %w", quoteShort(s), ErrDate)
	}
	t, err := time.Parse(DateLayout, s)
	if err != nil || t.Year() < 1 {
		return Date{}, fmt.Errorf("invalid date %s: %w", quoteShort(s), ErrDate)
	}
	return DateOf(t), nil
}

// DateOf is the calendar date of t in t's own location: pass
// t.In(saoPaulo) for the São Paulo date of an instant.
func DateOf(t time.Time) Date {
	y, m, d := t.Date()
	return Date{Year: y, Month: m, Day: d}
}

// IsZero reports whether d is the zero Date.
func (d Date) IsZero() bool { return d == Date{} }

// String formats d as YYYY-MM-DD.
func (d Date) String() string {
	return fmt.Sprintf("%04d-%02d-%02d", d.Year, int(d.Month), d.Day)
}

// MarshalText writes d as YYYY-MM-DD (so that JSON shows it as a string).
func (d Date) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// UnmarshalText reads YYYY-MM-DD with ParseDate.
func (d *Date) UnmarshalText(b []byte) error {
	v, err := ParseDate(string(b))
	if err != nil {
		return err
	}
	*d = v
	return nil
}

// days is the number of days from 1970-01-01 to d (negative before it),
// by the proleptic Gregorian calendar; exact for any year, unlike a
// time.Duration, which overflows after 292 years.
func (d Date) days() int64 {
	y, m := int64(d.Year), int64(d.Month)
	if m <= 2 {
		y--
	}
	era := y / 400
	if y < 0 && y%400 != 0 {
		era--
	}
	yoe := y - era*400 // [0, 399]
	mp := (m + 9) % 12 // March = 0
	doy := (153*mp+2)/5 + int64(d.Day) - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return era*146097 + doe - 719468
}

// dateFromDays is the inverse of Date.days.
func dateFromDays(z int64) Date {
	z += 719468
	era := z / 146097
	if z < 0 && z%146097 != 0 {
		era--
	}
	doe := z - era*146097
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365
	y := yoe + era*400
	doy := doe - (365*yoe + yoe/4 - yoe/100)
	mp := (5*doy + 2) / 153
	day := doy - (153*mp+2)/5 + 1
	m := mp + 3
	if m > 12 {
		m -= 12
	}
	if m <= 2 {
		y++
	}
	return Date{Year: int(y), Month: time.Month(m), Day: int(day)}
}

// AddDays returns the date n calendar days after d (before it when n < 0).
func (d Date) AddDays(n int) Date { return dateFromDays(d.days() + int64(n)) }

// DaysSince returns d − e in calendar days: 1 for the day after e.
func (d Date) DaysSince(e Date) int { return int(d.days() - e.days()) }

// Before reports whether d is earlier than e.
func (d Date) Before(e Date) bool { return d.days() < e.days() }

// After reports whether d is later than e.
func (d Date) After(e Date) bool { return d.days() > e.days() }

// Start is the first instant of d in loc (midnight, or the first instant
// after a transition that skips midnight).
func (d Date) Start(loc *time.Location) time.Time {
	return time.Date(d.Year, d.Month, d.Day, 0, 0, 0, 0, loc)
}
