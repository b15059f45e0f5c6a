package pix

import (
	"math"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestParsePercent(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in      string
		want    int64
		wantErr bool
	}{
		{in: "1.5", want: 150},
		{in: "0", want: 0},
		{in: "0.0", want: 0},
		{in: "2.25", want: 225},
		{in: "0.01", want: 1},
		{in: "100", want: 10_000},
		{in: "100.00", want: 10_000},
		{in: "007", want: 700},
		{in: "100.01", wantErr: true},
		{in: "101", wantErr: true},
		{in: "99999999999999999999999", wantErr: true},
		{in: "1.234", wantErr: true},
		{in: "1.500", wantErr: true},
		{in: "-1", wantErr: true},
		{in: "+1", wantErr: true},
		{in: "", wantErr: true},
		{in: "1.", wantErr: true},
		{in: ".5", wantErr: true},
		{in: "1,5", wantErr: true},
		{in: "1.5%", wantErr: true},
		{in: " 1.5", wantErr: true},
		{in: "1e1", wantErr: true},
		{in: "NaN", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			t.Parallel()
			got, err := ParsePercent(tt.in)
			if tt.wantErr {
				require.ErrorIs(t, err, ErrPercent)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, got)
		})
	}
}

func TestFormatPercent(t *testing.T) {
	t.Parallel()
	tests := []struct {
		bp   int64
		want string
	}{
		{150, "1.5"},
		{225, "2.25"},
		{0, "0"},
		{1, "0.01"},
		{10, "0.1"},
		{100, "1"},
		{10_000, "100"},
		{-150, "-1.5"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tt.want, FormatPercent(tt.bp))
			if tt.bp >= 0 && tt.bp <= 10_000 {
				back, err := ParsePercent(FormatPercent(tt.bp))
				require.NoError(t, err)
				require.Equal(t, tt.bp, back)
			}
		})
	}
}

func TestFee(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		rule   FeeRule
		amount Amount
		want   Amount
	}{
		{"zero rule", FeeRule{}, 1000, 0},
		{"fixed only", FeeRule{Fixed: 50}, 1000, 50},
		{"1.5% of 10.00", FeeRule{PercentBP: 150}, 1000, 15},
		{"1.5% of 10.00 plus 0.50", FeeRule{PercentBP: 150, Fixed: 50}, 1000, 65},
		{"1.5% of 0.33 = 0.495 centavo rounds down", FeeRule{PercentBP: 150}, 33, 0},
		{"1.5% of 0.34 = 0.51 centavo rounds up", FeeRule{PercentBP: 150}, 34, 1},
		{"1% of 0.50 = 0.5 half up", FeeRule{PercentBP: 100}, 50, 1},
		{"1% of 0.49 = 0.49 down", FeeRule{PercentBP: 100}, 49, 0},
		{"1% of 1.50 = 1.5 half up", FeeRule{PercentBP: 100}, 150, 2},
		{"2.25% of 123.45 = 277.7625", FeeRule{PercentBP: 225}, 12345, 278},
		{"0.01% of 0.01", FeeRule{PercentBP: 1}, 1, 0},
		{"0.01% of 50.00 = 0.5", FeeRule{PercentBP: 1}, 5000, 1},
		{"100%", FeeRule{PercentBP: 10_000}, 12345, 12345},
		{"100% of max plus fixed", FeeRule{PercentBP: 10_000, Fixed: 100}, MaxAmount, MaxAmount + 100},
		{"1.5% of max", FeeRule{PercentBP: 150}, MaxAmount, 1_500_000},
		{"zero amount", FeeRule{PercentBP: 150, Fixed: 30}, 0, 30},
		{"negative amount is symmetric", FeeRule{PercentBP: 100}, -150, -2},
		{"huge amount does not overflow", FeeRule{PercentBP: 10_000}, math.MaxInt64, math.MaxInt64},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tt.want, tt.rule.Fee(tt.amount))
		})
	}
}

// TestFeeMatchesRational checks Fee against exact rational arithmetic over a
// spread of amounts and rates.
func TestFeeMatchesRational(t *testing.T) {
	t.Parallel()
	half := big.NewRat(1, 2)
	for _, bp := range []int64{0, 1, 7, 99, 150, 225, 333, 5000, 9999, 10_000} {
		for a := Amount(0); a <= MaxAmount; a = a*3 + 7 {
			// floor(a*bp/10000 + 1/2)
			r := new(big.Rat).SetFrac64(int64(a)*bp, 10_000)
			r.Add(r, half)
			want := new(big.Int).Quo(r.Num(), r.Denom()).Int64()
			got := FeeRule{PercentBP: bp, Fixed: 3}.Fee(a)
			require.Equal(t, Amount(want+3), got, "bp=%d amount=%d", bp, a)
		}
	}
}

func TestParsePercentErrorIsShort(t *testing.T) {
	t.Parallel()
	_, err := ParsePercent(strings.Repeat("9", 10_000))
	require.Error(t, err)
	require.Less(t, len(err.Error()), 200)
}

func TestCashInFeeIsCappedByTheAmount(t *testing.T) {
	t.Parallel()
	r := FeeRule{PercentBP: 150, Fixed: 50}
	for _, tc := range []struct{ amount, want Amount }{
		{1, 1},       // the fixed part alone exceeds a centavo
		{50, 50},     // 0.75 ¢ rounds to 1 ¢, plus 50 ¢: capped at 50
		{10000, 200}, // 1.5 % of R$ 100 + 50 ¢
		{0, 0},
	} {
		require.Equal(t, tc.want, r.CashInFee(tc.amount), "fee on %s", tc.amount)
	}
	c := Client{ID: "c", CashinFee: r}
	at := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	ch := NewCashIn("t", c, 40, "txid", at, at.Add(time.Hour))
	require.Equal(t, Transaction{ID: "t", ClientID: "c", Type: TypeCashin, Status: StatusPending, Amount: 40, Tax: 40,
		CreatedAt: at, ExpiresAt: at.Add(time.Hour), TxID: "txid"}, ch)
}
