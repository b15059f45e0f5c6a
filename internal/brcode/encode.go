package brcode

import (
	"fmt"
	"strconv"
	"strings"
)

// Encode validates p and returns its static Pix BR Code:
//
//	00 02 "01"                       payload format indicator
//	26 ..  00 GUI, 01 key[, 02 description]
//	52 04 "0000"                     merchant category code
//	53 03 "986"                      currency: BRL
//	54 ..  amount, "10.00"           only when p.Amount > 0
//	58 02 "BR"
//	59 ..  merchant name             accents stripped, at most 25
//	60 ..  merchant city             accents stripped, at most 15
//	62 ..  05 txid
//	63 04  CRC-16/CCITT-FALSE        upper-case hex, over all before it
//
// Name, city and description go through Sanitize. It returns an error
// wrapping ErrInvalidPayload when the key is empty or not printable ASCII
// without spaces, the txid is not "***" or 1–25 of [A-Za-z0-9], the amount is
// negative or above MaxAmount, name or city is empty after sanitizing, or
// field 26 would exceed 99 characters. Encode makes one allocation when name,
// city and description are already printable ASCII.
func Encode(p Payload) (string, error) {
	if !validKey(p.Key) {
		return "", fmt.Errorf("%w: key must be non-empty printable ASCII without spaces", ErrInvalidPayload)
	}
	if !validTxID(p.TxID) {
		return "", fmt.Errorf("%w: txid must be \"***\" or 1-25 characters of [A-Za-z0-9]", ErrInvalidPayload)
	}
	if p.Amount < 0 || p.Amount > MaxAmount {
		return "", fmt.Errorf("%w: amount %d centavos out of range", ErrInvalidPayload, p.Amount)
	}
	name := Sanitize(p.MerchantName, MaxMerchantName)
	if name == "" {
		return "", fmt.Errorf("%w: merchant name is empty", ErrInvalidPayload)
	}
	city := Sanitize(p.MerchantCity, MaxMerchantCity)
	if city == "" {
		return "", fmt.Errorf("%w: merchant city is empty", ErrInvalidPayload)
	}
	desc := Sanitize(p.Description, 0)

	mai := 4 + len(GUI) + 4 + len(p.Key)
	if desc != "" {
		mai += 4 + len(desc)
	}
	if mai > 99 {
		return "", fmt.Errorf("%w: field 26 (key and description) is %d characters, at most 99", ErrInvalidPayload, mai)
	}
	var amountBuf [24]byte
	var amount []byte
	if p.Amount > 0 {
		amount = appendAmount(amountBuf[:0], p.Amount)
	}

	n := 6 + 4 + mai + 8 + 7 + 6 + 4 + len(name) + 4 + len(city) + 8 + len(p.TxID) + 8
	if amount != nil {
		n += 4 + len(amount)
	}
	var b strings.Builder
	b.Grow(n)
	b.WriteString("000201")
	writeHeader(&b, "26", mai)
	writeHeader(&b, "00", len(GUI))
	b.WriteString(GUI)
	writeHeader(&b, "01", len(p.Key))
	b.WriteString(p.Key)
	if desc != "" {
		writeHeader(&b, "02", len(desc))
		b.WriteString(desc)
	}
	b.WriteString("52040000" + "5303986")
	if amount != nil {
		writeHeader(&b, "54", len(amount))
		b.Write(amount)
	}
	b.WriteString("5802BR")
	writeHeader(&b, "59", len(name))
	b.WriteString(name)
	writeHeader(&b, "60", len(city))
	b.WriteString(city)
	writeHeader(&b, "62", 4+len(p.TxID))
	writeHeader(&b, "05", len(p.TxID))
	b.WriteString(p.TxID)
	b.WriteString("6304")
	writeCRC(&b)
	return b.String(), nil
}

// writeHeader writes a TLV id and its two-digit length (0 ≤ n ≤ 99).
func writeHeader(b *strings.Builder, id string, n int) {
	b.WriteString(id)
	b.WriteByte(byte('0' + n/10)) //nolint:gosec // G115: n ≤ 99, so this is a digit
	b.WriteByte(byte('0' + n%10))
}

// writeCRC appends the CRC of everything in b so far, "6304" included. The
// string b.String() returns shares b's buffer, so this copies nothing.
func writeCRC(b *strings.Builder) {
	crc := crc16String(b.String())
	b.WriteByte(upperHex[crc>>12])
	b.WriteByte(upperHex[crc>>8&0xF])
	b.WriteByte(upperHex[crc>>4&0xF])
	b.WriteByte(upperHex[crc&0xF])
}

// appendAmount appends centavos as reais with two decimals: 1000 → "10.00".
func appendAmount(b []byte, centavos int64) []byte {
	b = strconv.AppendInt(b, centavos/100, 10)
	c := centavos % 100
	return append(b, '.', byte('0'+c/10), byte('0'+c%10))
}

// parseAmount reads field 54 exactly, without floating point: digits,
// optionally a dot and one or two decimals ("10", "10.5", "10.50"), at most 13
// characters. It returns centavos.
func parseAmount(s string) (int64, bool) {
	if len(s) == 0 || len(s) > 13 {
		return 0, false
	}
	var reais int64
	i := 0
	for ; i < len(s) && s[i] != '.'; i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		reais = reais*10 + int64(c-'0')
	}
	if i == 0 {
		return 0, false
	}
	var cents int64
	if i < len(s) {
		dec := s[i+1:]
		if len(dec) == 0 || len(dec) > 2 {
			return 0, false
		}
		for j := 0; j < 2; j++ {
			cents *= 10
			if j < len(dec) {
				c := dec[j]
				if c < '0' || c > '9' {
					return 0, false
				}
				cents += int64(c - '0')
			}
		}
	}
	return reais*100 + cents, true
}
