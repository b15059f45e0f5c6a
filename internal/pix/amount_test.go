package pix

import (
	"encoding/json"
	"math"
	"math/big"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseAmount(t *testing.T) {
	t.Parallel()
	tests := []struct {
		raw  string
		want Amount
		err  error // nil: accepted
	}{
		// accepted
		{raw: `10`, want: 1000},
		{raw: `10.5`, want: 1050},
		{raw: `10.55`, want: 1055},
		{raw: `10.50`, want: 1050},
		{raw: `0.01`, want: 1},
		{raw: `0.1`, want: 10},
		{raw: `0.05`, want: 5},
		{raw: " \t\r\n10.5 \n", want: 1050},
		{raw: `1.5e1`, want: 1500},
		{raw: `1.5E+1`, want: 1500},
		{raw: `1.234e1`, want: 1234},
		{raw: `1.000e1`, want: 1000},
		{raw: `1e2`, want: 10000},
		{raw: `1e0`, want: 100},
		{raw: `1e-2`, want: 1},
		{raw: `15e-1`, want: 150},
		{raw: `1e005`, want: 10_000_000},
		{raw: `0.001e3`, want: 100},
		{raw: `1000000`, want: MaxAmount},
		{raw: `1000000.00`, want: MaxAmount},
		{raw: `1e6`, want: MaxAmount},
		{raw: `999999.99`, want: MaxAmount - 1},
		// not a JSON number
		{raw: ``, err: ErrAmountNotNumber},
		{raw: `   `, err: ErrAmountNotNumber},
		{raw: `"10"`, err: ErrAmountNotNumber},
		{raw: `null`, err: ErrAmountNotNumber},
		{raw: `true`, err: ErrAmountNotNumber},
		{raw: `false`, err: ErrAmountNotNumber},
		{raw: `{}`, err: ErrAmountNotNumber},
		{raw: `[10]`, err: ErrAmountNotNumber},
		{raw: `+10`, err: ErrAmountNotNumber},
		{raw: `010`, err: ErrAmountNotNumber},
		{raw: `00.5`, err: ErrAmountNotNumber},
		{raw: `.5`, err: ErrAmountNotNumber},
		{raw: `10.`, err: ErrAmountNotNumber},
		{raw: `10,5`, err: ErrAmountNotNumber},
		{raw: `1e`, err: ErrAmountNotNumber},
		{raw: `1e+`, err: ErrAmountNotNumber},
		{raw: `1.e2`, err: ErrAmountNotNumber},
		{raw: `-`, err: ErrAmountNotNumber},
		{raw: `--1`, err: ErrAmountNotNumber},
		{raw: `NaN`, err: ErrAmountNotNumber},
		{raw: `Infinity`, err: ErrAmountNotNumber},
		{raw: `0x10`, err: ErrAmountNotNumber},
		{raw: `1_000`, err: ErrAmountNotNumber},
		{raw: `10 5`, err: ErrAmountNotNumber},
		{raw: "\u00a010", err: ErrAmountNotNumber},
		{raw: "\v10", err: ErrAmountNotNumber},
		{raw: "１０", err: ErrAmountNotNumber},
		// precision
		{raw: `10.500`, err: ErrAmountPrecision},
		{raw: `10.555`, err: ErrAmountPrecision},
		{raw: `0.001`, err: ErrAmountPrecision},
		{raw: `1e-3`, err: ErrAmountPrecision},
		{raw: `100e-3`, err: ErrAmountPrecision},
		{raw: `1.2345e1`, err: ErrAmountPrecision},
		{raw: `1e-99999999999999999999999`, err: ErrAmountPrecision},
		{raw: `0.000`, err: ErrAmountPrecision},
		// zero and negative
		{raw: `0`, err: ErrAmountNotPositive},
		{raw: `0.00`, err: ErrAmountNotPositive},
		{raw: `-0`, err: ErrAmountNotPositive},
		{raw: `0e5`, err: ErrAmountNotPositive},
		{raw: `0e99999999999999999999`, err: ErrAmountNotPositive},
		{raw: `-1`, err: ErrAmountNotPositive},
		{raw: `-0.01`, err: ErrAmountNotPositive},
		{raw: `-99999999999999999999999`, err: ErrAmountNotPositive},
		// too large
		{raw: `1000000.01`, err: ErrAmountTooLarge},
		{raw: `1000001`, err: ErrAmountTooLarge},
		{raw: `1e7`, err: ErrAmountTooLarge},
		{raw: `1e99999999999999999999`, err: ErrAmountTooLarge},
		{raw: `9223372036854775807`, err: ErrAmountTooLarge},
		{raw: `99999999999999999999999999999`, err: ErrAmountTooLarge},
		{raw: `1` + strings.Repeat("0", 100_000), err: ErrAmountTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.raw, func(t *testing.T) {
			t.Parallel()
			got, err := ParseAmount([]byte(tt.raw))
			if tt.err != nil {
				require.ErrorIs(t, err, tt.err)
				require.Zero(t, got)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, got)
		})
	}
}

func TestParseAmountString(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want Amount
		err  error
	}{
		{in: "2", want: 200},
		{in: "0.50", want: 50},
		{in: "0.5", want: 50},
		{in: "0", want: 0},
		{in: "0.00", want: 0},
		{in: "007.10", want: 710},
		{in: "1500.25", want: 150025},
		{in: "1000000", want: MaxAmount},
		{in: "1000000.00", want: MaxAmount},
		{in: "", err: ErrAmountNotNumber},
		{in: " 2", err: ErrAmountNotNumber},
		{in: "2 ", err: ErrAmountNotNumber},
		{in: "+2", err: ErrAmountNotNumber},
		{in: ".5", err: ErrAmountNotNumber},
		{in: "5.", err: ErrAmountNotNumber},
		{in: "1e2", err: ErrAmountNotNumber},
		{in: "1,50", err: ErrAmountNotNumber},
		{in: "abc", err: ErrAmountNotNumber},
		{in: "-", err: ErrAmountNotNumber},
		{in: "-x", err: ErrAmountNotNumber},
		{in: "-1", err: ErrAmountNegative},
		{in: "-0.50", err: ErrAmountNegative},
		{in: "0.505", err: ErrAmountPrecision},
		{in: "1.000", err: ErrAmountPrecision},
		{in: "1000000.01", err: ErrAmountTooLarge},
		{in: "99999999999999999999999", err: ErrAmountTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			t.Parallel()
			got, err := ParseAmountString(tt.in)
			if tt.err != nil {
				require.ErrorIs(t, err, tt.err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, got)
		})
	}
}

func TestParseAmountStringErrorIsShort(t *testing.T) {
	t.Parallel()
	_, err := ParseAmountString(strings.Repeat("x", 10_000))
	require.Error(t, err)
	require.Less(t, len(err.Error()), 200)
}

func TestAmountMarshalJSON(t *testing.T) {
	t.Parallel()
	tests := []struct {
		a    Amount
		want string
	}{
		{1050, `10.5`},
		{1000, `10`},
		{1055, `10.55`},
		{5, `0.05`},
		{50, `0.5`},
		{1, `0.01`},
		{0, `0`},
		{-1050, `-10.5`},
		{-5, `-0.05`},
		{MaxAmount, `1000000`},
		{math.MaxInt64, `92233720368547758.07`},
		{math.MinInt64, `-92233720368547758.08`},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			t.Parallel()
			got, err := tt.a.MarshalJSON()
			require.NoError(t, err)
			require.Equal(t, tt.want, string(got))
			require.True(t, json.Valid(got))

			var back Amount
			require.NoError(t, back.UnmarshalJSON(got))
			require.Equal(t, tt.a, back)
		})
	}
}

func TestAmountJSONInStruct(t *testing.T) {
	t.Parallel()
	type body struct {
		Amount Amount  `json:"amount"`
		Tax    *Amount `json:"tax"`
	}
	tax := Amount(150)
	b, err := json.Marshal(body{Amount: 1050, Tax: &tax})
	require.NoError(t, err)
	require.JSONEq(t, `{"amount":10.5,"tax":1.5}`, string(b))

	var got body
	require.NoError(t, json.Unmarshal([]byte(`{"amount": 10.55, "tax": null}`), &got))
	require.Equal(t, Amount(1055), got.Amount)
	require.Nil(t, got.Tax)

	require.Error(t, json.Unmarshal([]byte(`{"amount": 10.555}`), &got))
	require.Error(t, json.Unmarshal([]byte(`{"amount": "10.55"}`), &got))
}

func TestAmountUnmarshalJSON(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want Amount
		err  error
	}{
		{in: `10.5`, want: 1050},
		{in: `0`, want: 0},
		{in: `-0`, want: 0},
		{in: `-2.5`, want: -250},
		{in: ` 1e2 `, want: 10000},
		{in: `2000000`, want: 200_000_000},
		{in: `92233720368547758.07`, want: math.MaxInt64},
		{in: `-92233720368547758.08`, want: math.MinInt64},
		{in: `92233720368547758.08`, err: ErrAmountTooLarge},
		{in: `-92233720368547758.09`, err: ErrAmountTooLarge},
		{in: `1e9999999999`, err: ErrAmountTooLarge},
		{in: `10.555`, err: ErrAmountPrecision},
		{in: `10.500`, err: ErrAmountPrecision},
		{in: `"10"`, err: ErrAmountNotNumber},
		{in: `true`, err: ErrAmountNotNumber},
		{in: `{}`, err: ErrAmountNotNumber},
		{in: ``, err: ErrAmountNotNumber},
		{in: `01`, err: ErrAmountNotNumber},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			t.Parallel()
			a := Amount(42)
			err := a.UnmarshalJSON([]byte(tt.in))
			if tt.err != nil {
				require.ErrorIs(t, err, tt.err)
				require.Equal(t, Amount(42), a, "unchanged on error")
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, a)
		})
	}

	t.Run("null is a no-op", func(t *testing.T) {
		t.Parallel()
		a := Amount(42)
		require.NoError(t, a.UnmarshalJSON([]byte(`null`)))
		require.Equal(t, Amount(42), a)
	})
}

func TestAmountString(t *testing.T) {
	t.Parallel()
	tests := []struct {
		a    Amount
		want string
	}{
		{1050, "10.50"},
		{1000, "10.00"},
		{1055, "10.55"},
		{5, "0.05"},
		{0, "0.00"},
		{-1, "-0.01"},
		{-1050, "-10.50"},
		{MaxAmount, "1000000.00"},
		{math.MinInt64, "-92233720368547758.08"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tt.want, tt.a.String())
			if tt.a > 0 && tt.a <= MaxAmount {
				back, err := ParseAmountString(tt.a.String())
				require.NoError(t, err)
				require.Equal(t, tt.a, back)
			}
		})
	}
}

// ratCentavos returns the exact value of the JSON number text in centavos as
// a big.Rat, or nil if big.Rat cannot read it.
func ratCentavos(text string) *big.Rat {
	r, ok := new(big.Rat).SetString(text)
	if !ok {
		return nil
	}
	return r.Mul(r, big.NewRat(100, 1))
}

func FuzzParseAmount(f *testing.F) {
	for _, s := range []string{
		`10`, `10.5`, `10.55`, `10.500`, `1.5e1`, `1e-3`, `0`, `-1`, `"10"`,
		`null`, `1e99999999999999`, `1000000.01`, ` 7.25 `, `0.001e3`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		a, err := ParseAmount(raw)

		// UnmarshalJSON is the lenient sibling: whatever ParseAmount accepts
		// it accepts with the same value.
		var u Amount
		uerr := u.UnmarshalJSON(raw)

		if err != nil {
			require.Zero(t, a)
			return
		}
		require.NoError(t, uerr)
		require.Equal(t, a, u)
		require.Greater(t, a, Amount(0))
		require.LessOrEqual(t, a, MaxAmount)

		// Accepted text is valid JSON, a number, and has exactly this value.
		require.True(t, json.Valid(raw), "accepted invalid JSON %q", raw)
		text := strings.Trim(string(raw), " \t\r\n")
		if len(text) < 1000 { // keep big.Rat cheap on huge exponents
			want := ratCentavos(text)
			require.NotNil(t, want, "%q", text)
			require.True(t, want.IsInt(), "%q", text)
			require.Equal(t, want.Num().Int64(), int64(a), "%q", text)
		}

		// Round trips through the wire form and the log form.
		out, err := a.MarshalJSON()
		require.NoError(t, err)
		back, err := ParseAmount(out)
		require.NoError(t, err)
		require.Equal(t, a, back)
		back, err = ParseAmountString(a.String())
		require.NoError(t, err)
		require.Equal(t, a, back)
	})
}

func BenchmarkParseAmount(b *testing.B) {
	inputs := [][]byte{[]byte(`10`), []byte(`1234.56`), []byte(`1.5e1`), []byte(`10.555`)}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		_, _ = ParseAmount(inputs[i%len(inputs)])
	}
}

func TestGrouped(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		a      Amount
		pt, en string
	}{
		{0, "0,00", "0.00"}, {5, "0,05", "0.05"}, {99999, "999,99", "999.99"}, {100000, "1.000,00", "1,000.00"},
		{123456, "1.234,56", "1,234.56"}, {100000000, "1.000.000,00", "1,000,000.00"}, {-123456, "1.234,56", "1,234.56"},
	} {
		require.Equal(t, tc.pt, tc.a.Grouped(".", ","), tc.a)
		require.Equal(t, tc.en, tc.a.Grouped(",", "."), tc.a)
	}
}
