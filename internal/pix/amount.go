package pix

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Amount is a sum of money in integer centavos (1/100 of a real).
type Amount int64

// MaxAmount is the largest amount a client may request: R$ 1,000,000.00.
const MaxAmount Amount = 100_000_000

// Errors reported by the amount parsers. They are always returned wrapped
// with context; test for them with errors.Is. Their text is phrased so that
// it can serve as the issue of a request field.
var (
	// ErrAmountNotNumber means the value is not a (JSON) decimal number.
	ErrAmountNotNumber = errors.New("must be a number")
	// ErrAmountPrecision means the value has more than two decimal places.
	ErrAmountPrecision = errors.New("must have at most two decimal places")
	// ErrAmountNotPositive means a request amount is zero or negative.
	ErrAmountNotPositive = errors.New("must be greater than zero")
	// ErrAmountNegative means the value is negative where zero is allowed.
	ErrAmountNegative = errors.New("must not be negative")
	// ErrAmountTooLarge means the value exceeds MaxAmount (or, when reading
	// our own JSON, the range of an int64 number of centavos).
	ErrAmountTooLarge = errors.New("must not exceed 1000000.00")
)

// The errors ParseAmount returns, wrapped once so that rejecting hostile
// input does not allocate.
var (
	errParseNotNumber   = fmt.Errorf("invalid amount: %w", ErrAmountNotNumber)
	errParsePrecision   = fmt.Errorf("invalid amount: %w", ErrAmountPrecision)
	errParseNotPositive = fmt.Errorf("invalid amount: %w", ErrAmountNotPositive)
	errParseTooLarge    = fmt.Errorf("invalid amount: %w", ErrAmountTooLarge)
)

// maxExponent caps the magnitude of a parsed decimal exponent. Any exponent
// beyond it makes a non-zero value either too large or too precise, so the
// exact value does not matter; capping keeps the arithmetic bounded.
const maxExponent = 1 << 20

// decimal is a parsed decimal literal: (-1)^neg × digits(intPart‖fracPart) ×
// 10^-scale. The byte slices alias the input.
type decimal struct {
	neg      bool
	intPart  []byte
	fracPart []byte
	scale    int64 // number of decimal places after applying the exponent
}

// ParseAmount parses raw, the JSON token text of a request field (surrounding
// JSON whitespace allowed), into a positive Amount of at most MaxAmount.
//
// raw must be a JSON number literal per RFC 8259 (optional '-', integer part
// without leading zeros, optional fraction, optional exponent); strings,
// null, booleans, arrays and objects are rejected. The text is parsed exactly,
// never through float64.
//
// Precision rule: the number of decimal places is the count of written
// fraction digits minus the exponent, and it must be at most two. Trailing
// zeros count as written digits, so "10.50" and "1.000e1" are accepted but
// "10.500" and "100e-3" are rejected, even though their values have two or
// fewer significant decimals: a client that sends three decimals is treated
// as mistaken rather than silently rounded. Exponents are capped, so huge
// ones cost no more than their text.
func ParseAmount(raw []byte) (Amount, error) {
	d, ok := parseJSONNumber(trimJSONSpace(raw))
	if !ok {
		return 0, errParseNotNumber
	}
	if d.scale > 2 {
		return 0, errParsePrecision
	}
	v, ok := d.centavos(uint64(MaxAmount))
	if !ok {
		if d.neg {
			return 0, errParseNotPositive
		}
		return 0, errParseTooLarge
	}
	if d.neg || v == 0 {
		return 0, errParseNotPositive
	}
	return Amount(v), nil //nolint:gosec // G115: v ≤ MaxAmount, checked by centavos
}

// ParseAmountString parses a plain decimal text in reais such as "2", "0.50"
// or "1500.5" (as given in CLI flags or configuration) into an Amount. It
// accepts ASCII digits with an optional '.' followed by one or two digits;
// leading zeros are allowed, signs, exponents and surrounding spaces are not.
// Zero is allowed; negative values and values above MaxAmount are rejected.
func ParseAmountString(s string) (Amount, error) {
	if len(s) > 0 && s[0] == '-' {
		if _, ok := parsePlainDecimal(s[1:]); ok {
			return 0, fmt.Errorf("invalid amount %s: %w", quoteShort(s), ErrAmountNegative)
		}
		return 0, fmt.Errorf("invalid amount %s: %w", quoteShort(s), ErrAmountNotNumber)
	}
	d, ok := parsePlainDecimal(s)
	if !ok {
		return 0, fmt.Errorf("invalid amount %s: %w", quoteShort(s), ErrAmountNotNumber)
	}
	if d.scale > 2 {
		return 0, fmt.Errorf("invalid amount %s: %w", quoteShort(s), ErrAmountPrecision)
	}
	v, ok := d.centavos(uint64(MaxAmount))
	if !ok {
		return 0, fmt.Errorf("invalid amount %s: %w", quoteShort(s), ErrAmountTooLarge)
	}
	return Amount(v), nil //nolint:gosec // G115: v ≤ MaxAmount, checked by centavos
}

// MarshalJSON encodes a as a JSON number in reais with the fewest digits:
// 1050 → 10.5, 1000 → 10, 1055 → 10.55, 5 → 0.05, 0 → 0, -250 → -2.5.
func (a Amount) MarshalJSON() ([]byte, error) {
	return a.appendJSON(make([]byte, 0, 24)), nil
}

func (a Amount) appendJSON(b []byte) []byte {
	neg, mag := a.magnitude()
	if neg {
		b = append(b, '-')
	}
	b = strconv.AppendUint(b, mag/100, 10)
	cents := mag % 100
	switch {
	case cents == 0:
	case cents%10 == 0:
		b = append(b, '.', byte('0'+cents/10))
	default:
		b = append(b, '.', byte('0'+cents/10), byte('0'+cents%10))
	}
	return b
}

// UnmarshalJSON decodes a JSON number in reais with at most two decimal
// places (same precision rule as ParseAmount) exactly into a. Unlike
// ParseAmount it accepts zero, negative values and values above MaxAmount
// (up to the int64 range), as it is meant for reading our own responses.
// Following the encoding/json convention, the literal null leaves a
// unchanged; strings, booleans and other values are rejected.
func (a *Amount) UnmarshalJSON(b []byte) error {
	b = trimJSONSpace(b)
	if string(b) == "null" {
		return nil
	}
	d, ok := parseJSONNumber(b)
	if !ok {
		return fmt.Errorf("pix: decode amount: %w", ErrAmountNotNumber)
	}
	if d.scale > 2 {
		return fmt.Errorf("pix: decode amount: %w", ErrAmountPrecision)
	}
	limit := uint64(math.MaxInt64)
	if d.neg {
		limit++ // |math.MinInt64|
	}
	v, ok := d.centavos(limit)
	if !ok {
		return fmt.Errorf("pix: decode amount: %w", ErrAmountTooLarge)
	}
	if d.neg {
		*a = Amount(-int64(v-1)) - 1 //nolint:gosec // G115: v-1 ≤ MaxInt64 (v ≤ limit); no overflow for v = 2^63
	} else {
		*a = Amount(v) //nolint:gosec // G115: v ≤ MaxInt64, checked by centavos
	}
	return nil
}

// String formats a in reais with exactly two decimals and no thousands
// separator ("10.50", "0.05", "-3.00"), as BR Codes and logs want it.
func (a Amount) String() string {
	neg, mag := a.magnitude()
	b := make([]byte, 0, 24)
	if neg {
		b = append(b, '-')
	}
	b = strconv.AppendUint(b, mag/100, 10)
	cents := mag % 100
	b = append(b, '.', byte('0'+cents/10), byte('0'+cents%10))
	return string(b)
}

// magnitude returns the sign and absolute value of a, valid for math.MinInt64.
func (a Amount) magnitude() (neg bool, mag uint64) {
	if a < 0 {
		return true, uint64(-(a + 1)) + 1 //nolint:gosec // G115: -(a+1) ≥ 0 for every negative a, MinInt64 included
	}
	return false, uint64(a)
}

// trimJSONSpace removes the JSON whitespace (RFC 8259: space, tab, line feed,
// carriage return) around b.
func trimJSONSpace(b []byte) []byte {
	isSpace := func(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }
	for len(b) > 0 && isSpace(b[0]) {
		b = b[1:]
	}
	for len(b) > 0 && isSpace(b[len(b)-1]) {
		b = b[:len(b)-1]
	}
	return b
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// scanDigits returns the length of the run of ASCII digits at the start of b.
func scanDigits(b []byte) int {
	n := 0
	for n < len(b) && isDigit(b[n]) {
		n++
	}
	return n
}

// parseJSONNumber parses b, which must be exactly one RFC 8259 number:
//
//	number = [ "-" ] int [ frac ] [ exp ]
//	int    = "0" / ( digit1-9 *DIGIT )
//	frac   = "." 1*DIGIT
//	exp    = ( "e" / "E" ) [ "-" / "+" ] 1*DIGIT
func parseJSONNumber(b []byte) (decimal, bool) {
	var d decimal
	if len(b) > 0 && b[0] == '-' {
		d.neg = true
		b = b[1:]
	}
	n := scanDigits(b)
	if n == 0 || (n > 1 && b[0] == '0') {
		return decimal{}, false
	}
	d.intPart, b = b[:n], b[n:]
	if len(b) > 0 && b[0] == '.' {
		n = scanDigits(b[1:])
		if n == 0 {
			return decimal{}, false
		}
		d.fracPart, b = b[1:1+n], b[1+n:]
	}
	var exp int64
	if len(b) > 0 && (b[0] == 'e' || b[0] == 'E') {
		b = b[1:]
		expNeg := false
		if len(b) > 0 && (b[0] == '+' || b[0] == '-') {
			expNeg = b[0] == '-'
			b = b[1:]
		}
		n = scanDigits(b)
		if n == 0 {
			return decimal{}, false
		}
		for _, c := range b[:n] {
			exp = exp*10 + int64(c-'0')
			if exp > maxExponent {
				exp = maxExponent // saturate; see maxExponent
			}
		}
		if expNeg {
			exp = -exp
		}
		b = b[n:]
	}
	if len(b) != 0 {
		return decimal{}, false
	}
	d.scale = int64(len(d.fracPart)) - exp
	return d, true
}

// parsePlainDecimal parses 1*DIGIT [ "." 1*DIGIT ] without sign or
// exponent; leading zeros are allowed. The fraction length is reported in
// scale and checked by the caller.
func parsePlainDecimal(s string) (decimal, bool) {
	b := []byte(s)
	var d decimal
	n := scanDigits(b)
	if n == 0 {
		return decimal{}, false
	}
	d.intPart, b = b[:n], b[n:]
	if len(b) > 0 && b[0] == '.' {
		n = scanDigits(b[1:])
		if n == 0 {
			return decimal{}, false
		}
		d.fracPart, b = b[1:1+n], b[1+n:]
	}
	if len(b) != 0 {
		return decimal{}, false
	}
	d.scale = int64(len(d.fracPart))
	return d, true
}

// centavos returns the magnitude of d in centavos, which must be at most
// limit. It requires d.scale <= 2. The work is bounded by the number of
// digits, whatever the exponent.
func (d decimal) centavos(limit uint64) (uint64, bool) {
	var v uint64
	started := false
	sig := int64(0) // significant digits (after leading zeros)
	for _, part := range [2][]byte{d.intPart, d.fracPart} {
		for _, c := range part {
			if !started && c == '0' {
				continue
			}
			started = true
			sig++
			if sig > 20 {
				return 0, false // more than 20 digits always exceeds uint64 limits
			}
			digit := uint64(c - '0')
			if v > (limit-digit)/10 {
				return 0, false
			}
			v = v*10 + digit
		}
	}
	if v == 0 {
		return 0, true
	}
	for shift := 2 - d.scale; shift > 0; shift-- {
		if v > limit/10 {
			return 0, false
		}
		v *= 10
	}
	return v, true
}

// quoteShort quotes s for an error message, truncated so that a hostile
// input cannot blow up logs.
func quoteShort(s string) string {
	const maxLen = 32
	if len(s) > maxLen {
		return strconv.Quote(s[:maxLen]) + "…"
	}
	return strconv.Quote(s)
}

// Grouped formats the absolute value of a for people: thousands grouped, two
// decimals, with the given separators — Grouped(".", ",") of 1234567 is
// "12.345,67", Grouped(",", ".") is "12,345.67". The caller writes any sign.
func (a Amount) Grouped(thousands, decimal string) string {
	if a < 0 {
		a = -a
	}
	s := a.String()
	intPart, frac := s[:len(s)-3], s[len(s)-2:]
	var b strings.Builder
	for i := range intPart {
		if i > 0 && (len(intPart)-i)%3 == 0 {
			b.WriteString(thousands)
		}
		b.WriteByte(intPart[i])
	}
	b.WriteString(decimal)
	b.WriteString(frac)
	return b.String()
}
