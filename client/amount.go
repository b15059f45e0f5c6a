package client

import (
	"errors"
	"fmt"
	"math/big"
	"strconv"
	"strings"
)

// Amount is an amount of money in centavos (hundredths of a real). It is
// never a float: it marshals to the JSON number the API expects ("10",
// "10.5", "10.55") and unmarshals from the exact text of a JSON number.
//
// The zero Amount is R$ 0,00; request fields that are optional are left out
// of the JSON when they hold it.
type Amount int64

// Centavos returns the Amount of n centavos: Centavos(2590) is R$ 25,90.
func Centavos(n int64) Amount { return Amount(n) }

// Reais returns the Amount written in reais with at most two decimals and a
// dot as decimal separator: Reais("25.90"), Reais("10"), Reais("0.5"). It
// panics on anything else; it is meant for constants. Use ParseReais for
// input.
func Reais(s string) Amount {
	a, err := ParseReais(s)
	if err != nil {
		panic(err)
	}
	return a
}

// ParseReais parses an amount in reais with at most two decimals and a dot
// as decimal separator ("25.90", "-3", "0.5"). Extra decimals that are zero
// are accepted ("1.500"), any other extra decimal is an error: it never
// rounds.
func ParseReais(s string) (Amount, error) {
	if strings.ContainsAny(s, "eE") {
		return 0, fmt.Errorf("client: invalid amount %q: want reais such as 25.90", s)
	}
	return parseDecimal(s)
}

// Centavos returns the amount in centavos.
func (a Amount) Centavos() int64 { return int64(a) }

// String formats the amount in reais with two decimals: "25.90", "-0.05".
func (a Amount) String() string {
	sign, units, cents := a.parts()
	return fmt.Sprintf("%s%d.%02d", sign, units, cents)
}

// MarshalJSON writes the amount as a JSON number in reais with no trailing
// zero decimals: 10, 10.5, 10.55.
func (a Amount) MarshalJSON() ([]byte, error) {
	sign, units, cents := a.parts()
	s := sign + strconv.FormatUint(units, 10)
	switch {
	case cents == 0:
	case cents%10 == 0:
		s += "." + strconv.FormatUint(cents/10, 10)
	default:
		s += fmt.Sprintf(".%02d", cents)
	}
	return []byte(s), nil
}

// UnmarshalJSON reads a JSON number in reais exactly, from its text. A
// number with a non-zero digit past the centavos is an error. null leaves
// the Amount unchanged.
func (a *Amount) UnmarshalJSON(b []byte) error {
	s := string(b)
	if s == "null" {
		return nil
	}
	v, err := parseDecimal(s)
	if err != nil {
		return err
	}
	*a = v
	return nil
}

func (a Amount) parts() (sign string, units, cents uint64) {
	u := uint64(a) // #nosec G115 -- two's complement magnitude below
	if a < 0 {
		sign = "-"
		u = -u
	}
	return sign, u / 100, u % 100
}

var errAmountRange = errors.New("client: amount out of range")

// parseDecimal parses the JSON number grammar
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? (leading zeros are
// tolerated) into centavos, exactly.
func parseDecimal(s string) (Amount, error) {
	bad := func() (Amount, error) {
		return 0, fmt.Errorf("client: invalid amount %q", s)
	}
	rest := s
	neg := false
	if strings.HasPrefix(rest, "-") {
		neg, rest = true, rest[1:]
	}
	mant, exp, hasExp := rest, "", false
	if i := strings.IndexAny(rest, "eE"); i >= 0 {
		mant, exp, hasExp = rest[:i], rest[i+1:], true
	}
	intPart, frac, hasDot := strings.Cut(mant, ".")
	if intPart == "" || !allDigits(intPart) || (hasDot && (frac == "" || !allDigits(frac))) {
		return bad()
	}
	scale := 2 - len(frac) // power of ten that turns the digits into centavos
	if hasExp {
		e, err := strconv.Atoi(strings.TrimPrefix(exp, "+"))
		if err != nil || exp == "" || exp == "+" || strings.HasPrefix(exp, "+-") || e > 40 || e < -400 {
			return bad()
		}
		scale += e
	}
	n, ok := new(big.Int).SetString(intPart+frac, 10)
	if !ok {
		return bad()
	}
	ten := big.NewInt(10)
	if scale >= 0 {
		n.Mul(n, new(big.Int).Exp(ten, big.NewInt(int64(scale)), nil))
	} else {
		q, r := new(big.Int).QuoRem(n, new(big.Int).Exp(ten, big.NewInt(int64(-scale)), nil), new(big.Int))
		if r.Sign() != 0 {
			return 0, fmt.Errorf("client: amount %q has more than two decimals", s)
		}
		n = q
	}
	if neg {
		n.Neg(n)
	}
	if !n.IsInt64() {
		return 0, errAmountRange
	}
	return Amount(n.Int64()), nil
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
