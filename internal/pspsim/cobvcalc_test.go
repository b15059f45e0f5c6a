package pspsim

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func mustDay(t *testing.T, s string) day {
	t.Helper()
	d, ok := parseDay(s)
	require.True(t, ok, s)
	return d
}

func TestBusinessDays(t *testing.T) {
	t.Parallel()
	for y, want := range map[int]string{2024: "2024-03-31", 2025: "2025-04-20", 2026: "2026-04-05", 2027: "2027-03-28", 2028: "2028-04-16"} {
		require.Equal(t, want, formatDay(easter(y)))
	}
	for _, off := range []string{"2026-01-01", "2026-02-16", "2026-02-17", "2026-04-03", "2026-04-21", "2026-05-01", "2026-06-04",
		"2026-09-07", "2026-10-12", "2026-11-02", "2026-11-20", "2026-12-25", "2026-12-12", "2026-12-13"} {
		require.False(t, businessDay(mustDay(t, off)), off)
	}
	for _, on := range []string{"2026-02-18", "2026-04-02", "2026-12-10", "2023-11-20", "2026-12-14"} {
		require.True(t, businessDay(mustDay(t, on)), on)
	}
}

// TestValidityExamples are the examples of BACEN's OpenAPI for
// validadeAposVencimento: the last day each may be paid.
func TestValidityExamples(t *testing.T) {
	t.Parallel()
	for _, ex := range []struct {
		vencimento string
		validade   int
		last       string
	}{
		{"2020-10-20", 4, "2020-10-26"}, // A
		{"2020-12-25", 0, "2020-12-28"}, // B
		{"2020-12-25", 1, "2020-12-29"}, // C
		{"2020-12-25", 3, "2020-12-31"}, // D
		{"2020-12-25", 4, "2021-01-04"}, // E
		{"2021-08-27", 5, "2021-09-01"}, // F
	} {
		terms := cobvTerms{Original: 100, Vencimento: mustDay(t, ex.vencimento), Validade: ex.validade}
		require.Equal(t, ex.last, formatDay(terms.lastDay()), "%+v", ex)
		_, ok := terms.amountOn(mustDay(t, ex.last))
		require.True(t, ok)
		_, ok = terms.amountOn(mustDay(t, ex.last).AddDate(0, 0, 1))
		require.False(t, ok)
	}
}

func TestCobVAmountOn(t *testing.T) {
	t.Parallel()
	// R$ 1,000.00 due Saturday 2026-12-12 (moved to Monday the 14th), five
	// days after (the 19th, a Saturday, moved to Monday the 21st).
	saturday := cobvTerms{Original: 100000, Vencimento: mustDay(t, "2026-12-12"), Validade: 5,
		MultaMod: 2, Multa: 200, JurosMod: 3, Juros: 100,
		DescMod: 1, Descontos: []descontoTerm{{mustDay(t, "2026-12-12"), 2000}, {mustDay(t, "2026-12-05"), 5000}}}
	// R$ 10.05 due Thursday 2026-12-10, 2.5% fine, 2% a day, 10% abatimento.
	daily := cobvTerms{Original: 1005, Vencimento: mustDay(t, "2026-12-10"), Validade: 3,
		MultaMod: 2, Multa: 250, JurosMod: 2, Juros: 200, AbatMod: 2, Abatimento: 1000,
		DescMod: 2, Descontos: []descontoTerm{{mustDay(t, "2026-12-09"), 250}}}
	// Fixed values: R$ 5.00 fine, R$ 0.10 a day, R$ 1.00 abatimento.
	fixed := cobvTerms{Original: 10000, Vencimento: mustDay(t, "2026-12-10"), Validade: 1,
		MultaMod: 1, Multa: 500, JurosMod: 1, Juros: 10, AbatMod: 1, Abatimento: 100}
	for _, tt := range []struct {
		terms cobvTerms
		day   string
		want  CobVAmount
		ok    bool
	}{
		{saturday, "2026-12-01", CobVAmount{Original: 100000, Desconto: 5000, Final: 95000}, true},
		{saturday, "2026-12-05", CobVAmount{Original: 100000, Desconto: 5000, Final: 95000}, true},
		{saturday, "2026-12-06", CobVAmount{Original: 100000, Desconto: 2000, Final: 98000}, true},
		{saturday, "2026-12-12", CobVAmount{Original: 100000, Desconto: 2000, Final: 98000}, true},
		// The discount of the due date moves with it to Monday.
		{saturday, "2026-12-14", CobVAmount{Original: 100000, Desconto: 2000, Final: 98000}, true},
		{saturday, "2026-12-15", CobVAmount{Original: 100000, Multa: 2000, Juros: 33, Final: 102033}, true},
		{saturday, "2026-12-21", CobVAmount{Original: 100000, Multa: 2000, Juros: 233, Final: 102233}, true},
		{saturday, "2026-12-22", CobVAmount{}, false},
		{daily, "2026-12-09", CobVAmount{Original: 1005, Abatimento: 101, Desconto: 25, Final: 879}, true},
		{daily, "2026-12-10", CobVAmount{Original: 1005, Abatimento: 101, Final: 904}, true},
		{daily, "2026-12-11", CobVAmount{Original: 1005, Abatimento: 101, Multa: 25, Juros: 20, Final: 949}, true},
		{daily, "2026-12-13", CobVAmount{Original: 1005, Abatimento: 101, Multa: 25, Juros: 60, Final: 989}, true},
		// 10 + 3 days is Sunday the 13th, moved to Monday the 14th.
		{daily, "2026-12-14", CobVAmount{Original: 1005, Abatimento: 101, Multa: 25, Juros: 80, Final: 1009}, true},
		{daily, "2026-12-15", CobVAmount{}, false},
		{fixed, "2026-12-11", CobVAmount{Original: 10000, Abatimento: 100, Multa: 500, Juros: 10, Final: 10410}, true},
		{fixed, "2026-12-12", CobVAmount{}, false},
	} {
		got, ok := tt.terms.amountOn(mustDay(t, tt.day))
		require.Equal(t, tt.ok, ok, "%s", tt.day)
		require.Equal(t, tt.want, got, "%s", tt.day)
	}
}
