package store

import (
	"strconv"
	"strings"
)

// tuples appends rows parenthesized groups of cols numbered placeholders,
// numbered from first: tuples(b, 1, 2, 3) writes "($1,$2,$3), ($4,$5,$6)"
// — the VALUES list of a multi-row insert. With cols = 1 and a single row
// it is an IN list's parentheses: "($1)".
func tuples(b *strings.Builder, first, rows, cols int) {
	n := first
	for r := 0; r < rows; r++ {
		if r > 0 {
			b.WriteString(", ")
		}
		b.WriteByte('(')
		for c := 0; c < cols; c++ {
			if c > 0 {
				b.WriteByte(',')
			}
			b.WriteByte('$')
			b.WriteString(strconv.Itoa(n))
			n++
		}
		b.WriteByte(')')
	}
}
