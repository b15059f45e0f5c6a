package client

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// Due makes a charge one with a due date, a bill (docs/due-dates.md): it
// costs its amount less a discount until Date, and its amount plus a fine
// and interest on each of the DaysAfter days after it; it expires at the
// end of Date + DaysAfter in São Paulo. A bad field is a 400 whose Details
// name it (due.date, due.fine.percent, due.discounts[1].until, …).
// Charges and lookups echo it with every default spelled out.
type Due struct {
	// Date is the due date, "YYYY-MM-DD" on the São Paulo calendar; today
	// or later.
	Date string `json:"date"`
	// DaysAfter is how many calendar days after Date the charge can still
	// be paid, 0 to 365; nil sends none, and the server takes 30.
	DaysAfter *int `json:"days_after,omitempty"`
	// Fine is charged once on any day after Date.
	Fine *DueFine `json:"fine,omitempty"`
	// Interest is charged per calendar day after Date.
	Interest *DueInterest `json:"interest,omitempty"`
	// Discounts are granted when paying on or before their Until: 1 to 3,
	// all fixed or all percent, Until strictly ascending and not after
	// Date, each leaving at least R$ 0.01.
	Discounts []DueDiscount `json:"discounts,omitempty"`
}

// DueFine is a fine: set exactly one of Percent (of the amount) or Amount.
type DueFine struct {
	Percent *Percent `json:"percent,omitempty"`
	Amount  *Amount  `json:"amount,omitempty"`
}

// DueInterest is interest of PercentPerMonth a month, a thirtieth of it a
// calendar day.
type DueInterest struct {
	PercentPerMonth Percent `json:"percent_per_month"`
}

// DueDiscount is a discount until Until (YYYY-MM-DD): set exactly one of
// Percent (of the amount) or Amount.
type DueDiscount struct {
	Until   string   `json:"until"`
	Percent *Percent `json:"percent,omitempty"`
	Amount  *Amount  `json:"amount,omitempty"`
}

// Percent is a percentage held exactly, in hundredths of a percent: 250 is
// 2.5%. On the wire it is a JSON number in percent with at most two
// decimals (greater than 0, at most 100).
type Percent int64

// Percents returns the Percent written in percent with at most two
// decimals and a dot as decimal separator: Percents("2"), Percents("2.5").
// It panics on anything else; it is meant for constants.
func Percents(s string) Percent {
	if strings.ContainsAny(s, "eE") {
		panic(fmt.Sprintf("client: invalid percent %q", s))
	}
	a, err := parseDecimal(s)
	if err != nil {
		panic(fmt.Sprintf("client: invalid percent %q: %v", s, err))
	}
	return Percent(a)
}

// String formats the percentage with two decimals: "2.50".
func (p Percent) String() string { return Amount(p).String() }

// MarshalJSON writes the percentage as a JSON number: 2, 2.5, 2.55.
func (p Percent) MarshalJSON() ([]byte, error) { return Amount(p).MarshalJSON() }

// UnmarshalJSON reads a JSON number in percent exactly, from its text.
func (p *Percent) UnmarshalJSON(b []byte) error { return (*Amount)(p).UnmarshalJSON(b) }

// Ptr returns a pointer to v, for the optional fields of a Due:
// Due{DaysAfter: client.Ptr(10), Fine: &client.DueFine{Percent: client.Ptr(client.Percents("2"))}}.
func Ptr[T any](v T) *T { return &v }

// SandboxPayOn pays a pending charge as SandboxPay does, as if the payer
// paid on date ("YYYY-MM-DD", São Paulo calendar): a charge with a due
// date is paid for what is due that day (its PaidAmount; the fee is
// computed on it). A date before the charge was created or after its last
// day is a 400, and so is any date but today for a charge without a due
// date. Sandbox only.
func (c *Client) SandboxPayOn(ctx context.Context, paymentID, date string) (*SandboxResult, error) {
	var out struct {
		Data Transaction `json:"data"`
	}
	resp, err := c.do(ctx, call{method: http.MethodPost, path: "/api/v1/sandbox/charges/" + url.PathEscape(paymentID) + "/pay",
		body: map[string]string{"date": date}, policy: readPolicy}, &out)
	if err != nil {
		return nil, err
	}
	return &SandboxResult{Response: resp, Transaction: out.Data}, nil
}
