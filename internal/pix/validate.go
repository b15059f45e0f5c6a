package pix

import (
	"strings"
	"unicode/utf8"
)

// allDigits reports whether s is non-empty and made only of ASCII digits.
func allDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false
		}
	}
	return true
}

// allSame reports whether every byte of s equals the first.
func allSame(s string) bool {
	for i := 1; i < len(s); i++ {
		if s[i] != s[0] {
			return false
		}
	}
	return true
}

// mod11Check returns the modulo-11 check digit of digits weighted by weights
// (as CPF and CNPJ use it): remainder < 2 gives 0, otherwise 11 - remainder.
func mod11Check(digits string, weights []int) byte {
	sum := 0
	for i, w := range weights {
		sum += int(digits[i]-'0') * w
	}
	r := sum % 11
	if r < 2 {
		return '0'
	}
	return byte('0' + 11 - r)
}

var (
	cpfWeights1  = []int{10, 9, 8, 7, 6, 5, 4, 3, 2}
	cpfWeights2  = []int{11, 10, 9, 8, 7, 6, 5, 4, 3, 2}
	cnpjWeights1 = []int{5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2}
	cnpjWeights2 = []int{6, 5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2}
)

// ValidCPF reports whether s is a CPF: exactly 11 ASCII digits (no
// punctuation) with correct check digits, not all digits equal.
func ValidCPF(s string) bool {
	if len(s) != 11 || !allDigits(s) || allSame(s) {
		return false
	}
	return mod11Check(s, cpfWeights1) == s[9] && mod11Check(s, cpfWeights2) == s[10]
}

// ValidCNPJ reports whether s is a CNPJ: exactly 14 ASCII digits (no
// punctuation) with correct check digits, not all digits equal.
func ValidCNPJ(s string) bool {
	if len(s) != 14 || !allDigits(s) || allSame(s) {
		return false
	}
	return mod11Check(s, cnpjWeights1) == s[12] && mod11Check(s, cnpjWeights2) == s[13]
}

// ValidDocument reports whether s is a valid CPF (11 digits) or CNPJ (14
// digits), chosen by length.
func ValidDocument(s string) bool {
	switch len(s) {
	case 11:
		return ValidCPF(s)
	case 14:
		return ValidCNPJ(s)
	}
	return false
}

// isAtext reports whether c is an RFC 5322 atext character.
func isAtext(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', isDigit(c):
		return true
	}
	return strings.IndexByte("!#$%&'*+/=?^_`{|}~-", c) >= 0
}

func isLetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }

// ValidEmail reports whether s is a practical e-mail address: at most 254
// characters, exactly one '@', a local part of 1–64 RFC 5322 atext
// characters and dots (no leading, trailing or consecutive dot), and a domain
// of at least two dot-separated labels of 1–63 characters [A-Za-z0-9-] not
// starting or ending with '-', the last (TLD) being at least two letters.
// Quoted local parts, IP literals, spaces and non-ASCII are rejected.
func ValidEmail(s string) bool {
	if len(s) > 254 {
		return false
	}
	at := strings.IndexByte(s, '@')
	if at < 0 || strings.IndexByte(s[at+1:], '@') >= 0 {
		return false
	}
	return validLocalPart(s[:at]) && validDomain(s[at+1:])
}

func validLocalPart(local string) bool {
	if local == "" || len(local) > 64 || local[0] == '.' || local[len(local)-1] == '.' {
		return false
	}
	for i := 0; i < len(local); i++ {
		c := local[i]
		if c == '.' {
			if local[i-1] == '.' {
				return false
			}
			continue
		}
		if !isAtext(c) {
			return false
		}
	}
	return true
}

func validDomain(domain string) bool {
	labels := strings.Split(domain, ".")
	if len(labels) < 2 {
		return false
	}
	for _, l := range labels {
		if l == "" || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' {
			return false
		}
		for i := 0; i < len(l); i++ {
			c := l[i]
			if !isLetter(c) && !isDigit(c) && c != '-' {
				return false
			}
		}
	}
	tld := labels[len(labels)-1]
	if len(tld) < 2 {
		return false
	}
	for i := 0; i < len(tld); i++ {
		if !isLetter(tld[i]) {
			return false
		}
	}
	return true
}

// validBRNumber reports whether s is a Brazilian phone number without country
// code: 10 or 11 ASCII digits, the two area-code digits both 1–9.
func validBRNumber(s string) bool {
	return (len(s) == 10 || len(s) == 11) && allDigits(s) && s[0] != '0' && s[1] != '0'
}

// ValidPhone reports whether s is a payer phone: an optional "+55" prefix
// followed by 10 or 11 digits (two-digit area code, both digits 1–9, then
// the number). No spaces or punctuation.
func ValidPhone(s string) bool {
	return validBRNumber(strings.TrimPrefix(s, "+55"))
}

// ufs are the 27 Brazilian federative units.
var ufs = map[string]struct{}{
	"AC": {}, "AL": {}, "AP": {}, "AM": {}, "BA": {}, "CE": {}, "DF": {},
	"ES": {}, "GO": {}, "MA": {}, "MT": {}, "MS": {}, "MG": {}, "PA": {},
	"PB": {}, "PR": {}, "PE": {}, "PI": {}, "RJ": {}, "RN": {}, "RS": {},
	"RO": {}, "RR": {}, "SC": {}, "SP": {}, "SE": {}, "TO": {},
}

// ValidUF reports whether s is one of the 27 Brazilian UFs in upper case
// (AC, AL, …, TO).
func ValidUF(s string) bool {
	_, ok := ufs[s]
	return ok
}

// ValidCEP reports whether s is a CEP: exactly 8 ASCII digits, no hyphen.
func ValidCEP(s string) bool {
	return len(s) == 8 && allDigits(s)
}

// ValidExternalID reports whether s is a client's external identifier: 1–64
// characters of [A-Za-z0-9._:-].
func ValidExternalID(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !isLetter(c) && !isDigit(c) && c != '.' && c != '_' && c != ':' && c != '-' {
			return false
		}
	}
	return true
}

// KeyType is the type of a PIX key (the keyType request field).
type KeyType string

// PIX key types: the keyType values a payout accepts.
const (
	KeyCPF   KeyType = "CPF"
	KeyCNPJ  KeyType = "CNPJ"
	KeyEmail KeyType = "EMAIL"
	KeyPhone KeyType = "PHONE"
	KeyEVP   KeyType = "EVP"
)

// MaxEmailKeyLen is BACEN's limit on the length of an e-mail PIX key.
const MaxEmailKeyLen = 77

// ValidKeyType reports whether s is one of the key types, spelled exactly
// (upper case).
func ValidKeyType(s string) bool {
	switch KeyType(s) {
	case KeyCPF, KeyCNPJ, KeyEmail, KeyPhone, KeyEVP:
		return true
	}
	return false
}

// ValidPixKey reports whether key is a well-formed PIX key of keyType:
// CPF/CNPJ digits only with check digits; EMAIL per ValidEmail and at most
// 77 characters; PHONE "+55" followed by 10 or 11 digits (area-code digits
// 1–9); EVP a canonical 8-4-4-4-12 hexadecimal UUID (either case) of version
// 4 and RFC 4122 variant. An unknown key type is never valid.
func ValidPixKey(keyType KeyType, key string) bool {
	switch keyType {
	case KeyCPF:
		return ValidCPF(key)
	case KeyCNPJ:
		return ValidCNPJ(key)
	case KeyEmail:
		return len(key) <= MaxEmailKeyLen && ValidEmail(key)
	case KeyPhone:
		rest, ok := strings.CutPrefix(key, "+55")
		return ok && validBRNumber(rest)
	case KeyEVP:
		return validUUIDv4(key)
	}
	return false
}

// KeyFormatIssue says what form a key of keyType must take, for the
// details of an "Invalid key format" error: the spec fixes that message, so
// this is where a client learns, say, that a PHONE key needs "+55".
func KeyFormatIssue(keyType KeyType) string {
	switch keyType {
	case KeyCPF:
		return "must be a CPF: 11 digits without punctuation, with valid check digits"
	case KeyCNPJ:
		return "must be a CNPJ: 14 digits without punctuation, with valid check digits"
	case KeyEmail:
		return "must be an e-mail address of at most 77 characters"
	case KeyPhone:
		return "must be +55 followed by the area code and number, 10 or 11 digits, without spaces or punctuation (+5511987654321)"
	case KeyEVP:
		return "must be a random key: a UUID v4 such as 123e4567-e89b-42d3-a456-426614174000"
	}
	return "must match keyType, one of CPF, CNPJ, EMAIL, PHONE, EVP"
}

func isHex(c byte) bool {
	return isDigit(c) || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// validUUIDv4 reports whether s is xxxxxxxx-xxxx-4xxx-Vxxx-xxxxxxxxxxxx with
// V one of 8, 9, a, b (either case).
func validUUIDv4(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < len(s); i++ {
		switch i {
		case 8, 13, 18, 23:
			if s[i] != '-' {
				return false
			}
		default:
			if !isHex(s[i]) {
				return false
			}
		}
	}
	if s[14] != '4' {
		return false
	}
	switch s[19] {
	case '8', '9', 'a', 'b', 'A', 'B':
		return true
	}
	return false
}

// MaskKey returns a form of a PIX key that is safe to log and never reveals
// the whole value: CPF "***.982.247-**", CNPJ "**.***.333/0001-**", e-mail
// "j***@example.com" (first character of the local part, none if it is the
// only one, then the domain), phone "+55*******4321" (last four digits), EVP
// "********-****-****-****-****2f1e9a7c" (last eight characters). A key that is
// not valid for keyType is masked generically (see MaskDocument).
func MaskKey(keyType KeyType, key string) string {
	if !ValidPixKey(keyType, key) {
		return maskGeneric(key)
	}
	switch keyType {
	case KeyCPF, KeyCNPJ:
		return MaskDocument(key)
	case KeyEmail:
		at := strings.IndexByte(key, '@')
		if at == 1 { // a one-character local part would be fully revealed
			return "***" + key[at:]
		}
		return key[:1] + "***" + key[at:]
	case KeyPhone:
		return "+55" + strings.Repeat("*", len(key)-3-4) + key[len(key)-4:]
	default: // KeyEVP
		return "********-****-****-****-****" + key[28:]
	}
}

// MaskDocument returns a form of a CPF or CNPJ that is safe to log, in the
// style BACEN uses for payer data: CPF 52998224725 → "***.982.247-**", CNPJ
// 11222333000181 → "**.***.333/0001-**". Anything else is masked generically:
// "***" followed by at most the last two characters when they are ASCII
// letters or digits and the value has at least 8 bytes.
func MaskDocument(s string) string {
	switch {
	case len(s) == 11 && allDigits(s):
		return "***." + s[3:6] + "." + s[6:9] + "-**"
	case len(s) == 14 && allDigits(s):
		return "**.***." + s[5:8] + "/" + s[8:12] + "-**"
	}
	return maskGeneric(s)
}

// maskGeneric hides all of s but, for values of at least 8 bytes, the last
// two bytes when they are ASCII letters or digits.
func maskGeneric(s string) string {
	if len(s) < 8 {
		return "***"
	}
	a, b := s[len(s)-2], s[len(s)-1]
	if (isLetter(a) || isDigit(a)) && (isLetter(b) || isDigit(b)) {
		return "***" + s[len(s)-2:]
	}
	return "***"
}

// ValidText reports whether s is valid UTF-8 without NUL characters: what
// every text field and identifier must be (docs/api.md, Input rules), since PostgreSQL
// can neither store nor compare anything else.
func ValidText(s string) bool {
	return utf8.ValidString(s) && strings.IndexByte(s, 0) < 0
}

// IssuePlainText is the FieldIssue text of a text field that PlainText
// refuses.
const IssuePlainText = "must not contain control characters (U+0000 to U+001F, U+007F to U+009F) or bidirectional formatting characters (U+202A to U+202E, U+2066 to U+2069)"

// PlainText reports whether s holds no C0 or C1 control character
// (U+0000–U+001F, U+007F–U+009F) and no bidirectional embedding, override or
// isolate (U+202A–U+202E, U+2066–U+2069). Names, descriptions and questions
// reach the payer's bank app through the PSP, where a line break, an escape
// sequence or a right-to-left override could make the payer read other text
// than what was sent (docs/api.md, Input rules).
func PlainText(s string) bool {
	for _, r := range s {
		switch {
		case r < 0x20, r >= 0x7f && r <= 0x9f,
			r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
			return false
		}
	}
	return true
}

// MaskPayerDocument returns the form of a payer's CPF or CNPJ that the API
// shows, as BACEN's Pix schema once did and PSPs still do: CPF
// 12345678909 → "***.456.789-**", CNPJ 12345678000195 (or an alphanumeric
// CNPJ) → "**.345.678/0001-**". A document written with its punctuation is
// read without it, and one a PSP already masked that way is kept as it is.
// Anything else gives "": better no document than one that misleads.
func MaskPayerDocument(s string) string {
	if maskedCPF(s) || maskedCNPJ(s) {
		return s
	}
	if len(s) == 14 && s[3] == '.' && s[7] == '.' && s[11] == '-' ||
		len(s) == 18 && s[2] == '.' && s[6] == '.' && s[10] == '/' && s[15] == '-' {
		s = strings.NewReplacer(".", "", "/", "", "-", "").Replace(s)
	}
	switch {
	case len(s) == 11 && allDigits(s):
		return "***." + s[3:6] + "." + s[6:9] + "-**"
	case len(s) == 14 && cnpjChars(s[:12]) && allDigits(s[12:]):
		return "**." + s[2:5] + "." + s[5:8] + "/" + s[8:12] + "-**"
	}
	return ""
}

// maskedCPF reports whether s is a CPF masked as ***.456.789-**.
func maskedCPF(s string) bool {
	return len(s) == 14 && s[:4] == "***." && allDigits(s[4:7]) && s[7] == '.' && allDigits(s[8:11]) && s[11:] == "-**"
}

// maskedCNPJ reports whether s is a CNPJ masked as **.345.678/0001-**.
func maskedCNPJ(s string) bool {
	return len(s) == 18 && s[:3] == "**." && cnpjChars(s[3:6]) && s[6] == '.' && cnpjChars(s[7:10]) && s[10] == '/' &&
		cnpjChars(s[11:15]) && s[15:] == "-**"
}

// cnpjChars reports whether s is made of the characters of a CNPJ's root and
// order (digits and, in the alphanumeric CNPJ, upper-case letters).
func cnpjChars(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) && (s[i] < 'A' || s[i] > 'Z') {
			return false
		}
	}
	return s != ""
}
