package brcode

import (
	"fmt"
	"strconv"
	"strings"
)

// Field is one EMV TLV data object of a BR Code.
type Field struct {
	// ID is the two-digit identifier, "00" to "99".
	ID string
	// Value is the raw value. For a template (fields 26–51 and 62 at the top
	// level) it is the concatenation of the encoded sub-fields.
	Value string
	// Sub holds the parsed sub-fields of a template; nil for other fields.
	// When non-empty, String encodes the field from Sub and ignores Value.
	Sub []Field
}

// Code is a parsed BR Code: its top-level fields in order, field 63 (the CRC,
// normalised to upper case) last.
type Code struct {
	// Fields are the top-level data objects in the order they appeared.
	Fields []Field
}

// isTemplate reports whether a top-level id holds sub-fields: the merchant
// account information templates 26–51 and the additional data field
// template 62.
func isTemplate(id string) bool {
	return id == "62" || id >= "26" && id <= "51"
}

// Parse reads a BR Code strictly:
//   - every data object is a two-digit id, a two-digit length from 01 to 99
//     and exactly that many bytes of value; nothing may follow the last one;
//   - an id appears at most once at each level;
//   - field 00 comes first and is "01";
//   - field 63 comes last, has length 04, and holds the CRC-16/CCITT-FALSE
//     of everything before its value ("6304" included) in hexadecimal;
//   - templates 26–51 and 62 are themselves well-formed TLV lists, parsed
//     into Field.Sub.
//
// The CRC is accepted in lower case too (some generators emit it that way;
// the value is the same number) and is stored in upper case, as String
// writes it. Lengths count bytes. Leading or trailing spaces are not
// trimmed: they make the code malformed. Errors wrap ErrMalformed or
// ErrChecksum.
func Parse(s string) (*Code, error) {
	fields, err := parseTLVs(s, 0, true)
	if err != nil {
		return nil, err
	}
	if len(fields) == 0 || fields[0].ID != "00" || fields[0].Value != "01" {
		return nil, fmt.Errorf("%w: must start with field 00 = \"01\"", ErrMalformed)
	}
	last := &fields[len(fields)-1]
	if last.ID != "63" || len(last.Value) != 4 {
		return nil, fmt.Errorf("%w: must end with field 63 of length 04 (\"6304\" + CRC)", ErrMalformed)
	}
	got, ok := parseHex4(last.Value)
	if !ok {
		return nil, fmt.Errorf("%w: CRC %q is not hexadecimal", ErrMalformed, last.Value)
	}
	if want := crc16String(s[:len(s)-4]); got != want {
		return nil, fmt.Errorf("%w: field 63 says %s, content gives %04X", ErrChecksum, last.Value, want)
	}
	if last.Value != strings.ToUpper(last.Value) {
		last.Value = strings.ToUpper(last.Value)
	}
	return &Code{Fields: fields}, nil
}

// parseTLVs splits s into data objects; base is the offset of s in the whole
// code, for error messages. At the top level templates are parsed into Sub.
func parseTLVs(s string, base int, top bool) ([]Field, error) {
	fields := make([]Field, 0, 12)
	var seen [100]bool
	for pos := 0; pos < len(s); {
		if len(s)-pos < 4 {
			return nil, fmt.Errorf("%w: truncated data object at offset %d", ErrMalformed, base+pos)
		}
		id, ok1 := twoDigits(s[pos:])
		n, ok2 := twoDigits(s[pos+2:])
		if !ok1 || !ok2 {
			return nil, fmt.Errorf("%w: id and length must be two digits each at offset %d", ErrMalformed, base+pos)
		}
		if n == 0 {
			return nil, fmt.Errorf("%w: field %s has length 00 at offset %d", ErrMalformed, s[pos:pos+2], base+pos)
		}
		if seen[id] {
			return nil, fmt.Errorf("%w: field %s repeated at offset %d", ErrMalformed, s[pos:pos+2], base+pos)
		}
		seen[id] = true
		start, end := pos+4, pos+4+n
		if end > len(s) {
			return nil, fmt.Errorf("%w: field %s declares %d bytes at offset %d, only %d remain", ErrMalformed, s[pos:pos+2], n, base+pos, len(s)-start)
		}
		f := Field{ID: s[pos : pos+2], Value: s[start:end]}
		if top && isTemplate(f.ID) {
			sub, err := parseTLVs(f.Value, base+start, false)
			if err != nil {
				return nil, err
			}
			f.Sub = sub
		}
		fields = append(fields, f)
		pos = end
	}
	return fields, nil
}

// twoDigits reads a two-digit decimal number at the start of s.
func twoDigits(s string) (int, bool) {
	if len(s) < 2 || s[0] < '0' || s[0] > '9' || s[1] < '0' || s[1] > '9' {
		return 0, false
	}
	return int(s[0]-'0')*10 + int(s[1]-'0'), true
}

// Lookup returns the top-level field with the given id.
func (c *Code) Lookup(id string) (Field, bool) {
	return lookup(c.Fields, id)
}

// Lookup returns the sub-field of a template with the given id.
func (f Field) Lookup(id string) (Field, bool) {
	return lookup(f.Sub, id)
}

func lookup(fields []Field, id string) (Field, bool) {
	for _, f := range fields {
		if f.ID == id {
			return f, true
		}
	}
	return Field{}, false
}

// String encodes the code again: every field in order except field 63, then
// "6304" and a freshly computed upper-case CRC. Templates with Sub are
// encoded from Sub. For a Code from Parse, Parse(c.String()) yields an equal
// Code, and the text equals the parsed one but for the CRC's case. String
// does not validate: a value over 99 bytes or an id that is not two digits
// gives a text Parse rejects.
func (c *Code) String() string {
	n := 8
	for _, f := range c.Fields {
		if f.ID != "63" {
			n += 4 + valueLen(f)
		}
	}
	var b strings.Builder
	b.Grow(n)
	for _, f := range c.Fields {
		if f.ID != "63" {
			writeField(&b, f)
		}
	}
	b.WriteString("6304")
	writeCRC(&b)
	return b.String()
}

// valueLen is the encoded length of f's value.
func valueLen(f Field) int {
	if len(f.Sub) == 0 {
		return len(f.Value)
	}
	n := 0
	for _, s := range f.Sub {
		n += 4 + valueLen(s)
	}
	return n
}

func writeField(b *strings.Builder, f Field) {
	n := valueLen(f)
	if n <= 99 {
		writeHeader(b, f.ID, n)
	} else {
		b.WriteString(f.ID)
		b.WriteString(strconv.Itoa(n))
	}
	if len(f.Sub) == 0 {
		b.WriteString(f.Value)
		return
	}
	for _, s := range f.Sub {
		writeField(b, s)
	}
}

// Payload returns the typed view of a static Pix code: the key (26/01) and
// description (26/02) of the first template 26–51 whose GUI (sub-field 00)
// is br.gov.bcb.pix (compared without case), amount from field 54 read
// exactly (no floating point; absent means 0), name 59, city 60 and txid
// 62/05 (absent means ""). It returns an error wrapping ErrNotPix when there
// is no Pix template, the template has no key (dynamic codes carry a URL
// instead, not supported here), field 53 is not "986" (BRL), or field 54 is
// not a decimal amount with at most two decimals.
func (c *Code) Payload() (Payload, error) {
	var p Payload
	var mai Field
	found := false
	for _, f := range c.Fields {
		if isTemplate(f.ID) && f.ID != "62" {
			if gui, ok := f.Lookup("00"); ok && strings.EqualFold(gui.Value, GUI) {
				mai, found = f, true
				break
			}
		}
	}
	if !found {
		return Payload{}, fmt.Errorf("%w: no merchant account template with GUI %s", ErrNotPix, GUI)
	}
	key, ok := mai.Lookup("01")
	if !ok {
		return Payload{}, fmt.Errorf("%w: field %s has no key (sub-field 01)", ErrNotPix, mai.ID)
	}
	p.Key = key.Value
	if d, ok := mai.Lookup("02"); ok {
		p.Description = d.Value
	}
	if cur, ok := c.Lookup("53"); !ok || cur.Value != "986" {
		return Payload{}, fmt.Errorf("%w: currency (field 53) is not 986", ErrNotPix)
	}
	if a, ok := c.Lookup("54"); ok {
		amount, ok := parseAmount(a.Value)
		if !ok {
			return Payload{}, fmt.Errorf("%w: amount %q (field 54) is not a decimal with at most two decimals", ErrNotPix, a.Value)
		}
		p.Amount = amount
	}
	if f, ok := c.Lookup("59"); ok {
		p.MerchantName = f.Value
	}
	if f, ok := c.Lookup("60"); ok {
		p.MerchantCity = f.Value
	}
	if f, ok := c.Lookup("62"); ok {
		if t, ok := f.Lookup("05"); ok {
			p.TxID = t.Value
		}
	}
	return p, nil
}
