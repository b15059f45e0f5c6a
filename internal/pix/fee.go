package pix

import (
	"errors"
	"fmt"
)

// FeeRule is the fee a client pays on an operation: a percentage of the
// amount plus a fixed part.
type FeeRule struct {
	// PercentBP is the percent part in basis points (1.5% = 150), 0..10000.
	PercentBP int64
	// Fixed is added to the percent part.
	Fixed Amount
}

// ErrPercent is wrapped by the errors of ParsePercent.
var ErrPercent = errors.New("must be a percentage between 0 and 100 with at most two decimals")

// ParsePercent parses a percentage such as "1.5", "0", "2.25" or "100" into
// basis points (150, 0, 225, 10000). It accepts ASCII digits with an optional
// '.' followed by one or two digits (leading zeros allowed, no sign, exponent
// or spaces) and values from 0 to 100 inclusive. Parsing is exact.
func ParsePercent(s string) (int64, error) {
	d, ok := parsePlainDecimal(s)
	if !ok || d.scale > 2 {
		return 0, fmt.Errorf("invalid percent %s: %w", quoteShort(s), ErrPercent)
	}
	// Reuse the centavo conversion: both are hundredths of the unit.
	v, ok := d.centavos(10_000)
	if !ok {
		return 0, fmt.Errorf("invalid percent %s: %w", quoteShort(s), ErrPercent)
	}
	return int64(v), nil //nolint:gosec // G115: v ≤ 10,000, checked by centavos
}

// Fee returns the fee on amount: amount × PercentBP / 10000 rounded half up to
// the centavo, plus Fixed. The computation uses integer arithmetic only and
// cannot overflow for 0 <= PercentBP <= 10000 and any amount. A negative
// amount yields the negated percent part of its magnitude (rounding half away
// from zero), plus Fixed.
func (r FeeRule) Fee(amount Amount) Amount {
	neg, mag := amount.magnitude()
	bp := r.PercentBP
	if bp < 0 {
		neg, bp = !neg, -bp
	}
	// mag×bp/10000 = q×bp + r×bp/10000 with mag = q×10000 + r; r×bp < 10000×bp.
	q, rem := mag/10_000, mag%10_000
	ubp := uint64(bp) //nolint:gosec // G115: bp ≥ 0 here (its sign moved to neg)
	part := q*ubp + (rem*ubp+5_000)/10_000
	p := Amount(part) //nolint:gosec // G115: part ≤ mag for bp ≤ 10,000; mag = 2^63 wraps to MinInt64, right once negated
	if neg {
		p = -p
	}
	return p + r.Fixed
}

// CashInFee is the fee on money received, amount: Fee, but never more
// than the amount itself, so that a payment never leaves its client owing.
func (r FeeRule) CashInFee(amount Amount) Amount { return min(r.Fee(amount), amount) }

// FormatPercent formats basis points as a percentage with the fewest
// decimals: 150 → "1.5", 225 → "2.25", 0 → "0", 10000 → "100".
func FormatPercent(bp int64) string {
	// Basis points are hundredths of a percent, as centavos are of a real.
	return string(Amount(bp).appendJSON(make([]byte, 0, 24)))
}
