package pix

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// RequestHash returns a digest of a JSON request body that ignores key
// order, white space and the spelling of numbers (10.5 and 10.50 are the
// same value), scoped by kind so equal bodies sent to different endpoints
// never match. Idempotency compares these digests.
//
// The digest is SHA-256 over kind, a NUL byte and the canonical text of the
// body: what json.Marshal writes for the decoded value with every number
// replaced by the string "n:" + its exact rational (big.Rat.RatString).
// Stored digests depend on those bytes, so appendCanonical must keep
// writing exactly them (TestCanonicalMatchesMarshal and FuzzCanonical
// compare it with json.Marshal).
func RequestHash(kind string, body []byte) (string, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return "", fmt.Errorf("request hash: %w", err)
	}
	h := sha256.New()
	h.Write([]byte(kind))
	h.Write([]byte{0})
	h.Write(appendCanonical(make([]byte, 0, len(body)+64), v))
	return hex.EncodeToString(h.Sum(nil)), nil
}

// appendCanonical appends the canonical text of v, a value decoded by
// encoding/json with UseNumber: object keys sorted bytewise, no white
// space, strings escaped as json.Marshal escapes them, numbers as
// canonicalNumber strings.
func appendCanonical(b []byte, v any) []byte {
	switch x := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		b = append(b, '{')
		for i, k := range keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, k)
			b = append(b, ':')
			b = appendCanonical(b, x[k])
		}
		return append(b, '}')
	case []any:
		b = append(b, '[')
		for i, e := range x {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendCanonical(b, e)
		}
		return append(b, ']')
	case string:
		return appendString(b, x)
	case json.Number:
		return appendString(b, canonicalNumber(x))
	case bool:
		if x {
			return append(b, "true"...)
		}
		return append(b, "false"...)
	case nil:
		return append(b, "null"...)
	}
	// Decoding with UseNumber yields only the kinds above; anything else
	// would be written by encoding/json itself.
	return appendMarshaled(b, v)
}

// canonicalNumber spells a JSON number as "n:" and its exact rational, so
// that 10.5, 10.50 and 1.05e1 are the same value. Plain integers are their
// own rational; numbers longer than 64 characters are kept as written
// (their exponent could make big.Rat huge).
func canonicalNumber(n json.Number) string {
	s := string(n)
	if len(s) > 64 || plainInteger(s) {
		return "n:" + s
	}
	if r, ok := smallDecimal(s); ok {
		return "n:" + r
	}
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		return "n:" + s
	}
	return "n:" + r.RatString()
}

// plainInteger reports whether s is an integer written without sign
// oddities, fraction or exponent (what RatString would write back
// unchanged): 0, 7, -42, but not -0 or 1.0.
func plainInteger(s string) bool {
	d := strings.TrimPrefix(s, "-")
	if d == "" || (d[0] == '0' && (len(d) > 1 || len(s) > 1)) {
		return false
	}
	for i := 0; i < len(d); i++ {
		if d[i] < '0' || d[i] > '9' {
			return false
		}
	}
	return true
}

// smallDecimal writes what big.Rat.RatString writes for a decimal without
// exponent whose digits fit in an int64 (12.50 → 25/2, 3.00 → 3), without
// big.Rat; ok is false for any other spelling.
func smallDecimal(s string) (string, bool) {
	neg := strings.HasPrefix(s, "-")
	intPart, frac, found := strings.Cut(strings.TrimPrefix(s, "-"), ".")
	if !found || intPart == "" || frac == "" || len(intPart)+len(frac) > 18 {
		return "", false
	}
	var num, den int64 = 0, 1
	for _, part := range [2]string{intPart, frac} {
		for i := 0; i < len(part); i++ {
			c := part[i]
			if c < '0' || c > '9' {
				return "", false
			}
			num = num*10 + int64(c-'0')
		}
	}
	for range len(frac) {
		den *= 10
	}
	a, b := num, den
	for b != 0 {
		a, b = b, a%b
	}
	num, den = num/a, den/a
	if neg && num != 0 {
		num = -num
	}
	out := strconv.FormatInt(num, 10)
	if den != 1 {
		out += "/" + strconv.FormatInt(den, 10)
	}
	return out, true
}

// appendString appends s as a JSON string the way json.Marshal writes it.
// Strings that json.Marshal copies verbatim (valid UTF-8 without control
// characters, quotes, backslashes, <, >, & or U+2028/U+2029) are copied
// here; the rest are handed to json.Marshal.
func appendString(b []byte, s string) []byte {
	ascii := true
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= utf8.RuneSelf {
			ascii = false
			continue
		}
		if c < 0x20 || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			return appendMarshaled(b, s)
		}
	}
	if !ascii && (!utf8.ValidString(s) || strings.Contains(s, "\u2028") || strings.Contains(s, "\u2029")) {
		return appendMarshaled(b, s)
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// appendMarshaled appends what json.Marshal writes for v. Only strings and
// decoded JSON values reach it, which always marshal.
func appendMarshaled(b []byte, v any) []byte {
	out, _ := json.Marshal(v)
	return append(b, out...)
}
