package brcode

import (
	"strings"

	"golang.org/x/text/unicode/norm"
)

// Field limits of BACEN's manual for the merchant fields.
const (
	// MaxMerchantName is the longest merchant name (field 59), in characters.
	MaxMerchantName = 25
	// MaxMerchantCity is the longest merchant city (field 60), in characters.
	MaxMerchantCity = 15
)

// Sanitize returns s as printable ASCII, cut to at most max characters (no
// limit when max <= 0): accented letters lose their accents (ã→a, ç→c, É→E),
// any other non-ASCII character and every control character is dropped, and
// spaces at either end are trimmed (before and after the cut). Encode applies
// it to the merchant name and city and to the description.
func Sanitize(s string, max int) string {
	if !isPrintableASCII(s) {
		s = stripToASCII(s)
	}
	s = strings.Trim(s, " ")
	if max > 0 && len(s) > max {
		s = strings.TrimRight(s[:max], " ")
	}
	return s
}

// isPrintableASCII reports whether every byte of s is in 0x20..0x7E.
func isPrintableASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7E {
			return false
		}
	}
	return true
}

// stripToASCII decomposes s (NFD), which splits an accented letter into its
// base letter and combining marks, then keeps only printable ASCII bytes: the
// marks and every other non-ASCII character go. Invalid UTF-8 is dropped too.
func stripToASCII(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	var it norm.Iter
	it.InitString(norm.NFD, s)
	for !it.Done() {
		for _, c := range it.Next() {
			if c >= 0x20 && c <= 0x7E {
				b.WriteByte(c)
			}
		}
	}
	return b.String()
}
