package store

import (
	"strconv"
	"strings"
)

// tuples appends rows parenthesized groups of cols numbered placeholders,
// numbered from first: tuples(b, 1, 2, 3) writes "($1,$2,$3), ($4,$5,$6)"
// — the VALUES list of a multi-row insert. A single row of n columns is an
// IN list: tuples(b, 1, 1, 3) writes "($1,$2,$3)".
func tuples(b *strings.Builder, first, rows, cols int) {
	castTuples(b, first, rows, make([]string, cols))
}

// castTuples is tuples with each column's placeholder cast to its SQL type
// (an empty type leaves it bare): VALUES rows outside an INSERT have no
// column to take their types from, and CAST($n AS T) reads the same on
// PostgreSQL and SQLite.
func castTuples(b *strings.Builder, first, rows int, types []string) {
	n := first
	for r := 0; r < rows; r++ {
		if r > 0 {
			b.WriteString(", ")
		}
		b.WriteByte('(')
		for c, typ := range types {
			if c > 0 {
				b.WriteByte(',')
			}
			if typ != "" {
				b.WriteString("CAST(")
			}
			b.WriteByte('$')
			b.WriteString(strconv.Itoa(n))
			if typ != "" {
				b.WriteString(" AS " + typ + ")")
			}
			n++
		}
		b.WriteByte(')')
	}
}

// stringArgs appends ss to args as statement arguments (an IN list's).
func stringArgs(args []any, ss []string) []any {
	for _, s := range ss {
		args = append(args, s)
	}
	return args
}
