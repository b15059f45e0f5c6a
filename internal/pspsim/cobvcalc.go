package pspsim

import (
	"math/big"
	"sort"
	"time"
)

// This file is the simulated PSP's own reading of BACEN's rules for the
// amount of a cobv, written apart from pixgate's (internal/pix) on purpose:
// it is the outside reference a gateway is checked against.
//
// BACEN's OpenAPI defines the terms by modalidade (multa: 1 fixed value,
// 2 percentage; juros: 1 value a day, 2 percentage a day, 3 percentage a
// month, in calendar days; desconto: 1 fixed value until fixed dates, 2
// percentage until fixed dates; abatimento: 1 fixed value, 2 percentage of
// the original value) and says that a due date on a weekend or holiday
// moves to the next business day, and with it the validity, the discount,
// the fine and the interest. The payload of a cobv shows each part to the
// centavo, so each part is computed exactly and rounded half up on its own.

// saoPaulo is the zone of the payer's calendar. São Paulo keeps UTC−3 all
// year since 2019, so a fixed zone is exact and needs no time zone data.
var saoPaulo = time.FixedZone("America/Sao_Paulo", -3*60*60)

// day is a calendar date as midnight UTC, so that adding days never meets
// a zone transition.
type day = time.Time

func civil(y int, m time.Month, d int) day { return time.Date(y, m, d, 0, 0, 0, 0, time.UTC) }

// parseDay reads YYYY-MM-DD.
func parseDay(s string) (day, bool) {
	if len(s) != 10 {
		return day{}, false
	}
	t, err := time.Parse("2006-01-02", s)
	return t, err == nil
}

// dayOf is the São Paulo calendar date of the instant t.
func dayOf(t time.Time) day {
	y, m, d := t.In(saoPaulo).Date()
	return civil(y, m, d)
}

func formatDay(d day) string { return d.Format("2006-01-02") }

// easter is Easter Sunday of year y (the Gregorian computus).
func easter(y int) day {
	a, b, c := y%19, y/100, y%100
	d, e := b/4, b%4
	f := (b + 8) / 25
	g := (b - f + 1) / 3
	h := (19*a + b - d - g + 15) % 30
	i, k := c/4, c%4
	l := (32 + 2*e + 2*i - h - k) % 7
	m := (a + 11*h + 22*l) / 451
	month := (h + l - 7*m + 114) / 31
	dd := (h+l-7*m+114)%31 + 1
	return civil(y, time.Month(month), dd)
}

// businessDay reports whether d is a banking business day in Brazil: not a
// weekend, a national holiday, Carnival (Monday and Tuesday), Good Friday
// or Corpus Christi.
func businessDay(d day) bool {
	switch d.Weekday() {
	case time.Saturday, time.Sunday:
		return false
	}
	type md struct {
		m time.Month
		d int
	}
	fixed := []md{{1, 1}, {4, 21}, {5, 1}, {9, 7}, {10, 12}, {11, 2}, {11, 15}, {12, 25}}
	if d.Year() >= 2024 {
		fixed = append(fixed, md{11, 20}) // Consciência Negra, national since 2024
	}
	for _, f := range fixed {
		if d.Month() == f.m && d.Day() == f.d {
			return false
		}
	}
	e := easter(d.Year())
	for _, off := range []int{-48, -47, -2, 60} {
		if d.Equal(e.AddDate(0, 0, off)) {
			return false
		}
	}
	return true
}

// BusinessDay reports whether the simulator treats the calendar date of d
// (its year, month and day, whatever its zone) as a banking business day in
// Brazil, the days to which it moves a cobv's due date and last day.
func BusinessDay(d time.Time) bool {
	y, m, dd := d.Date()
	return businessDay(civil(y, m, dd))
}

// nextBusinessDay is d when it is a business day, else the first after it.
func nextBusinessDay(d day) day {
	for !businessDay(d) {
		d = d.AddDate(0, 0, 1)
	}
	return d
}

// cobvTerms are a cobv's money terms, as the API carries them: values in
// hundredths (centavos, or hundredths of a percent).
type cobvTerms struct {
	Original   int64
	Vencimento day
	Validade   int
	MultaMod   int
	Multa      int64
	JurosMod   int
	Juros      int64
	AbatMod    int
	Abatimento int64
	DescMod    int
	Descontos  []descontoTerm
}

type descontoTerm struct {
	Data  day
	Valor int64
}

// CobVAmount is what a cobv costs on one day, as BACEN's payload shows it
// (centavos): Final = Original − Abatimento − Desconto + Multa + Juros.
type CobVAmount struct {
	Original, Abatimento, Desconto, Multa, Juros, Final int64
}

// dueDay is the due date moved to a business day.
func (t cobvTerms) dueDay() day { return nextBusinessDay(t.Vencimento) }

// lastDay is the last day the cobv can be paid: the moved due date plus the
// validity, itself moved to a business day.
func (t cobvTerms) lastDay() day { return nextBusinessDay(t.dueDay().AddDate(0, 0, t.Validade)) }

// rat is n/100 as an exact fraction: a value in hundredths.
func rat(n int64) *big.Rat { return big.NewRat(n, 100) }

// centavos rounds a value in reais to centavos, half up (values here are
// never negative).
func centavos(r *big.Rat) int64 {
	x := new(big.Rat).Mul(r, big.NewRat(100, 1))
	x.Add(x, big.NewRat(1, 2))
	q := new(big.Int).Quo(x.Num(), x.Denom()) // floor for x ≥ 0
	return q.Int64()
}

// percentOf is pct% of reais.
func percentOf(reais, pct *big.Rat) *big.Rat {
	x := new(big.Rat).Mul(reais, pct)
	return x.Quo(x, big.NewRat(100, 1))
}

// amountOn computes what the cobv costs when paid on d, and false when d is
// after its last day.
func (t cobvTerms) amountOn(d day) (CobVAmount, bool) {
	if d.After(t.lastDay()) {
		return CobVAmount{}, false
	}
	orig := rat(t.Original)
	out := CobVAmount{Original: t.Original}
	switch t.AbatMod {
	case 1:
		out.Abatimento = t.Abatimento
	case 2:
		out.Abatimento = centavos(percentOf(orig, rat(t.Abatimento)))
	}
	due := t.dueDay()
	if !d.After(due) {
		// The first discount whose date (moved with the due date, when it
		// is the due date) has not passed.
		list := append([]descontoTerm(nil), t.Descontos...)
		sort.Slice(list, func(i, j int) bool { return list[i].Data.Before(list[j].Data) })
		var hit *descontoTerm
		for i, ds := range list {
			limit := ds.Data
			if limit.Equal(t.Vencimento) {
				limit = due
			}
			if !d.After(limit) {
				hit = &list[i]
				break
			}
		}
		if hit != nil {
			switch t.DescMod {
			case 1:
				out.Desconto = hit.Valor
			case 2:
				out.Desconto = centavos(percentOf(orig, rat(hit.Valor)))
			}
		}
	} else {
		switch t.MultaMod {
		case 1:
			out.Multa = t.Multa
		case 2:
			out.Multa = centavos(percentOf(orig, rat(t.Multa)))
		}
		late := big.NewRat(int64(d.Sub(due)/(24*time.Hour)), 1)
		switch t.JurosMod {
		case 1: // a value a day
			out.Juros = centavos(new(big.Rat).Mul(rat(t.Juros), late))
		case 2: // a percentage a day
			out.Juros = centavos(new(big.Rat).Mul(percentOf(orig, rat(t.Juros)), late))
		case 3: // a percentage a month: a thirtieth of it a day
			daily := new(big.Rat).Quo(percentOf(orig, rat(t.Juros)), big.NewRat(30, 1))
			out.Juros = centavos(daily.Mul(daily, late))
		}
	}
	out.Final = out.Original - out.Abatimento - out.Desconto + out.Multa + out.Juros
	return out, true
}
