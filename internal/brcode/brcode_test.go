package brcode

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/require"
)

// golden is the BR Code of the issue: it must parse, re-encode identically
// and be what Encode builds from its payload.
const golden = "00020126510014br.gov.bcb.pix0115thalesog@me.com0210Pedido 123520400005303986540510.005802BR5914THALES OGLIARI6015SAO MIGUEL DO O62070503***63040DC6"

var goldenPayload = Payload{
	Key:          "thalesog@me.com",
	Description:  "Pedido 123",
	MerchantName: "THALES OGLIARI",
	MerchantCity: "SAO MIGUEL DO O",
	Amount:       1000,
	TxID:         "***",
}

// withCRC completes body (which must not end in "6304") with field 63.
func withCRC(body string) string {
	body += "6304"
	return string(appendCRC([]byte(body), crc16String(body)))
}

func TestCRC16(t *testing.T) {
	t.Parallel()
	require.Equal(t, uint16(0x29B1), CRC16([]byte("123456789")))
	require.Equal(t, uint16(0xFFFF), CRC16(nil))
	require.Equal(t, uint16(0x0DC6), CRC16([]byte(golden[:len(golden)-4])))
	require.Equal(t, CRC16([]byte(golden)), crc16String(golden))
}

func TestGolden(t *testing.T) {
	t.Parallel()
	c, err := Parse(golden)
	require.NoError(t, err)
	require.Equal(t, golden, c.String())

	p, err := c.Payload()
	require.NoError(t, err)
	require.Equal(t, goldenPayload, p)

	s, err := Encode(goldenPayload)
	require.NoError(t, err)
	require.Equal(t, golden, s)

	mai, ok := c.Lookup("26")
	require.True(t, ok)
	require.Equal(t, []Field{
		{ID: "00", Value: "br.gov.bcb.pix"},
		{ID: "01", Value: "thalesog@me.com"},
		{ID: "02", Value: "Pedido 123"},
	}, mai.Sub)
	require.Equal(t, "63", c.Fields[len(c.Fields)-1].ID)
}

func TestEncodeShape(t *testing.T) {
	t.Parallel()
	s, err := Encode(Payload{
		Key:          "123e4567-e89b-42d3-a456-426614174000",
		MerchantName: "Loja São João",
		MerchantCity: "São Paulo",
		TxID:         "abcDEF0123456789xyzXYZ012",
	})
	require.NoError(t, err)
	// No description, no amount: fields 26/02 and 54 are absent.
	require.Equal(t, withCRC("000201"+
		"26580014br.gov.bcb.pix0136123e4567-e89b-42d3-a456-426614174000"+
		"52040000"+"5303986"+"5802BR"+"5913Loja Sao Joao"+"6009Sao Paulo"+
		"62290525abcDEF0123456789xyzXYZ012"), s)

	// Amount formatting: always two decimals.
	for amount, want := range map[int64]string{1: "0.01", 10: "0.10", 100: "1.00", 123456: "1234.56", MaxAmount: "9999999999.99"} {
		s, err := Encode(Payload{Key: "k", MerchantName: "N", MerchantCity: "C", TxID: "***", Amount: amount})
		require.NoError(t, err)
		require.Contains(t, s, fmt.Sprintf("530398654%02d%s5802BR", len(want), want))
	}
}

func TestEncodeRejects(t *testing.T) {
	t.Parallel()
	ok := Payload{Key: "a@b.co", MerchantName: "N", MerchantCity: "C", TxID: "***", Amount: 1}
	_, err := Encode(ok)
	require.NoError(t, err)
	for name, mutate := range map[string]func(*Payload){
		"empty key":           func(p *Payload) { p.Key = "" },
		"key with space":      func(p *Payload) { p.Key = "a b" },
		"key non-ascii":       func(p *Payload) { p.Key = "joão@x.com" },
		"empty txid":          func(p *Payload) { p.TxID = "" },
		"long txid":           func(p *Payload) { p.TxID = strings.Repeat("a", 26) },
		"txid symbol":         func(p *Payload) { p.TxID = "abc-1" },
		"txid stars":          func(p *Payload) { p.TxID = "**" },
		"negative amount":     func(p *Payload) { p.Amount = -1 },
		"huge amount":         func(p *Payload) { p.Amount = MaxAmount + 1 },
		"empty name":          func(p *Payload) { p.MerchantName = "" },
		"name only accents":   func(p *Payload) { p.MerchantName = " 日本 " },
		"empty city":          func(p *Payload) { p.MerchantCity = "  " },
		"field 26 too long":   func(p *Payload) { p.Key = strings.Repeat("k", 78) },
		"description too big": func(p *Payload) { p.Key = strings.Repeat("k", 60); p.Description = strings.Repeat("d", 14) },
	} {
		p := ok
		mutate(&p)
		_, err := Encode(p)
		require.ErrorIs(t, err, ErrInvalidPayload, name)
	}
	// The limits themselves pass: 26 of exactly 99 characters.
	p := ok
	p.Key = strings.Repeat("k", 77)
	s, err := Encode(p)
	require.NoError(t, err)
	require.Contains(t, s, "2699")
	p.TxID = strings.Repeat("Z", 25)
	_, err = Encode(p)
	require.NoError(t, err)
}

func TestSanitize(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		max  int
		want string
	}{
		{"THALES OGLIARI", 25, "THALES OGLIARI"},
		{"São Miguel do Ó", 15, "Sao Miguel do O"},
		{"AÇAÍ É BOM ÀS VEZES", 0, "ACAI E BOM AS VEZES"},
		{"ãâáàäçéêèëíîìïñõôóòöúûùüýÿ", 0, "aaaaaceeeeiiiinooooouuuuyy"},
		{"ÃÂÁÀÄÇÉÊÈËÍÎÌÏÑÕÔÓÒÖÚÛÙÜÝ", 0, "AAAAACEEEEIIIINOOOOOUUUUY"},
		{"Straße Ærø 日本 €", 0, "Strae r"},
		{"tab\there\nnl\x7f", 0, "tabherenl"},
		{"  padded  ", 0, "padded"},
		{"Comércio de Alimentos Ltda ME", 25, "Comercio de Alimentos Ltd"},
		{"Rio de Janeiro X", 15, "Rio de Janeiro"}, // cut falls after a space: trimmed
		{"São José dos Campos", 15, "Sao Jose dos Ca"},
		{"   Ó   ", 15, "O"},
		{"日本", 15, ""},
		{"\xff\xfeinvalid", 0, "invalid"},
		{"", 25, ""},
	} {
		require.Equal(t, tc.want, Sanitize(tc.in, tc.max), "%q", tc.in)
	}
}

func TestParseRejects(t *testing.T) {
	t.Parallel()
	body := golden[:len(golden)-8] // without "6304" + CRC
	for name, tc := range map[string]struct {
		in   string
		want error
	}{
		"empty":                 {"", ErrMalformed},
		"bad length":            {strings.Replace(golden, "5914THALES", "5915THALES", 1), ErrMalformed},
		"length short by one":   {strings.Replace(golden, "5914THALES", "5913THALES", 1), ErrMalformed},
		"bad length, fixed crc": {withCRC(strings.Replace(body, "5914THALES", "5915THALES", 1)), ErrMalformed},
		"bad sub length":        {withCRC(strings.Replace(body, "0115thalesog", "0116thalesog", 1)), ErrMalformed},
		"bad CRC":               {body + "63040DC7", ErrChecksum},
		"changed content":       {strings.Replace(golden, "Pedido 123", "Pedido 124", 1), ErrChecksum},
		"CRC not hex":           {body + "63040DCG", ErrMalformed},
		"missing 6304":          {body, ErrMalformed},
		"CRC without 6304":      {body + "0DC6", ErrMalformed},
		"63 not length 4":       {body + "63050DC6F", ErrMalformed},
		"trailing garbage":      {golden + "X", ErrMalformed},
		"trailing TLV":          {golden + "0001X", ErrMalformed},
		"trailing newline":      {golden + "\n", ErrMalformed},
		"leading space":         {" " + golden, ErrMalformed},
		"63 not last":           {withCRC("000201" + "63040000" + body[6:]), ErrMalformed},
		"00 not first":          {withCRC(body[6:] + "000201"), ErrMalformed},
		"00 not 01":             {withCRC("000202" + body[6:]), ErrMalformed},
		"zero length":           {withCRC(body + "9900"), ErrMalformed},
		"duplicate field":       {withCRC(body + "5802BR"), ErrMalformed},
		"duplicate sub-field":   {withCRC(strings.Replace(body, "2651", "2656", 1)[:61] + "0001x" + body[61:]), ErrMalformed},
		"non-digit id":          {withCRC(body + "A101x"), ErrMalformed},
		"non-digit length":      {withCRC(body + "990x"), ErrMalformed},
		"template not TLV":      {withCRC(body[:len(body)-11] + "6205*****"), ErrMalformed},
		"truncated":             {golden[:20], ErrMalformed},
	} {
		_, err := Parse(tc.in)
		require.ErrorIs(t, err, tc.want, name)
	}
}

func TestParseLowerCaseCRC(t *testing.T) {
	t.Parallel()
	// Accepted (same number), stored and re-encoded in upper case.
	lower := strings.Replace(golden, "63040DC6", "63040dc6", 1)
	c, err := Parse(lower)
	require.NoError(t, err)
	require.Equal(t, "0DC6", c.Fields[len(c.Fields)-1].Value)
	require.Equal(t, golden, c.String())
}

func TestParseKeepsUnknownFields(t *testing.T) {
	t.Parallel()
	// Point of initiation method (01), another arrangement's template (27)
	// before Pix's (28), an extra 62 sub-field and an unreserved field (80):
	// all kept in order and re-encoded as they were.
	in := withCRC("000201" + "010212" + "27100006abcdef" + "28300014BR.GOV.BCB.PIX0108key@x.co" +
		"52040000" + "5303986" + "54031.5" + "5802BR" + "5901N" + "6001C" + "62150503abc0704test" + "8003xyz")
	c, err := Parse(in)
	require.NoError(t, err)
	require.Equal(t, in, c.String())
	p, err := c.Payload()
	require.NoError(t, err)
	require.Equal(t, Payload{Key: "key@x.co", MerchantName: "N", MerchantCity: "C", Amount: 150, TxID: "abc"}, p)
}

func TestPayloadRejects(t *testing.T) {
	t.Parallel()
	base := func(mai, rest string) string {
		return withCRC("000201" + mai + "52040000" + rest + "5802BR5901N6001C62070503***")
	}
	pix := "26180014br.gov.bcb.pix"
	for name, in := range map[string]string{
		"no pix template":  base("26150011com.example", "5303986"),
		"no key":           base(pix, "5303986"),
		"other currency":   base(pix[:2]+"24"+pix[4:]+"0102k1", "5303840"),
		"no currency":      base(pix[:2]+"24"+pix[4:]+"0102k1", ""),
		"amount comma":     base(pix[:2]+"24"+pix[4:]+"0102k1", "530398654041,00"),
		"amount 3 decimal": base(pix[:2]+"24"+pix[4:]+"0102k1", "530398654051.000"),
	} {
		c, err := Parse(in)
		require.NoError(t, err, name)
		_, err = c.Payload()
		require.ErrorIs(t, err, ErrNotPix, name)
	}
}

func TestParseAmount(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]int64{
		"0": 0, "0.00": 0, "10": 1000, "10.5": 1050, "10.50": 1050, "10.05": 1005, "010.00": 1000,
		"9999999999.99": MaxAmount, "9999999999999": 999_999_999_999_900,
	} {
		got, ok := parseAmount(in)
		require.True(t, ok, in)
		require.Equal(t, want, got, in)
	}
	for _, in := range []string{"", ".", ".5", "10.", "10.123", "1,00", "-1", "+1", "1e3", " 1", "1.0 ", "99999999999999", "1.-1"} {
		_, ok := parseAmount(in)
		require.False(t, ok, in)
	}
}

func TestRoundTripRandom(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(1, 2))
	words := []string{"São", "Paulo", "João", "Comércio", "LTDA", "Ação", "Pão", "de", "Açúcar", "X", "Ñandú", "日本", "Zoë"}
	phrase := func(n int) string {
		ws := make([]string, 1+r.IntN(n))
		for i := range ws {
			ws[i] = words[r.IntN(len(words))]
		}
		return strings.Join(ws, " ")
	}
	for i := 0; i < 2000; i++ {
		txid, err := NewTxID(readerFunc(func(b []byte) (int, error) {
			for i := range b {
				b[i] = byte(r.Uint32())
			}
			return len(b), nil
		}))
		require.NoError(t, err)
		if r.IntN(4) == 0 {
			txid = txid[:1+r.IntN(TxIDLen)]
		}
		in := Payload{
			Key:          fmt.Sprintf("user%d@example.com.br", r.IntN(1e6)),
			MerchantName: phrase(6),
			MerchantCity: phrase(3),
			TxID:         txid,
		}
		if r.IntN(2) == 0 {
			in.Description = phrase(5)
		}
		if r.IntN(5) != 0 {
			in.Amount = r.Int64N(MaxAmount) + 1
		}
		s, err := Encode(in)
		if Sanitize(in.MerchantName, MaxMerchantName) == "" || Sanitize(in.MerchantCity, MaxMerchantCity) == "" {
			require.ErrorIs(t, err, ErrInvalidPayload)
			continue
		}
		require.NoError(t, err)
		c, err := Parse(s)
		require.NoError(t, err, s)
		require.Equal(t, s, c.String())
		got, err := c.Payload()
		require.NoError(t, err)
		want := in
		want.MerchantName = Sanitize(in.MerchantName, MaxMerchantName)
		want.MerchantCity = Sanitize(in.MerchantCity, MaxMerchantCity)
		want.Description = Sanitize(in.Description, 0)
		require.Equal(t, want, got)
		require.LessOrEqual(t, len(got.MerchantName), MaxMerchantName)
		require.LessOrEqual(t, len(got.MerchantCity), MaxMerchantCity)
		s2, err := Encode(got)
		require.NoError(t, err)
		require.Equal(t, s, s2)
	}
}

type readerFunc func([]byte) (int, error)

func (f readerFunc) Read(b []byte) (int, error) { return f(b) }

func TestNewTxID(t *testing.T) {
	t.Parallel()
	id, err := NewTxID(nil)
	require.NoError(t, err)
	require.Len(t, id, TxIDLen)
	require.True(t, validTxID(id))

	// Bytes ≥ 248 are skipped; the rest map to txidChars[b%62].
	src := append(bytes.Repeat([]byte{255, 248}, 20), make([]byte, 64)...)
	for i := 40; i < len(src); i++ {
		src[i] = byte(i - 40 + 62*3) // 186.. → chars 0..
	}
	id, err = NewTxID(bytes.NewReader(src))
	require.NoError(t, err)
	require.Equal(t, txidChars[:TxIDLen], id)

	_, err = NewTxID(iotest.ErrReader(errors.New("boom")))
	require.ErrorContains(t, err, "boom")
	_, err = NewTxID(bytes.NewReader(bytes.Repeat([]byte{250}, 100)))
	require.ErrorIs(t, err, io.ErrUnexpectedEOF)
}

func TestNewTxIDUniform(t *testing.T) {
	t.Parallel()
	// Chi-square of 250,000 characters over the 62 symbols, from a seeded
	// stream. Unbiased: about 61 ± 11. Mapping every byte with b%62 would
	// favour the first 8 symbols by 25% and score in the thousands.
	r := rand.New(rand.NewPCG(3, 4))
	src := readerFunc(func(b []byte) (int, error) {
		for i := range b {
			b[i] = byte(r.Uint32())
		}
		return len(b), nil
	})
	var counts [256]int
	const ids = 10_000
	for i := 0; i < ids; i++ {
		id, err := NewTxID(src)
		require.NoError(t, err)
		for j := range id {
			counts[id[j]]++
		}
	}
	expected := float64(ids*TxIDLen) / 62
	chi2 := 0.0
	for _, c := range []byte(txidChars) {
		d := float64(counts[c]) - expected
		chi2 += d * d / expected
	}
	require.Less(t, chi2, 120.0)
}

// TestAllocs is not parallel: testing.AllocsPerRun refuses to run in a
// parallel test.
func TestAllocs(t *testing.T) {
	clean := "Clean Name"
	require.Equal(t, 0.0, testing.AllocsPerRun(100, func() { _ = Sanitize(clean, 25) }))
	require.Equal(t, 1.0, testing.AllocsPerRun(100, func() { _, _ = Encode(goldenPayload) }))
}

func BenchmarkEncode(b *testing.B) {
	p := Payload{
		Key:          "123e4567-e89b-42d3-a456-426614174000",
		Description:  "Pedido 123",
		MerchantName: "PIXGATE PAGAMENTOS LTDA",
		MerchantCity: "SAO PAULO",
		Amount:       123456,
		TxID:         "abcDEF0123456789xyzXYZ012",
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Encode(p); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEncodeAccents(b *testing.B) {
	p := Payload{
		Key:          "123e4567-e89b-42d3-a456-426614174000",
		MerchantName: "Comércio de Pães São João",
		MerchantCity: "São Paulo",
		Amount:       123456,
		TxID:         "abcDEF0123456789xyzXYZ012",
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Encode(p); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParse(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(golden); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkCRC16(b *testing.B) {
	data := []byte(golden)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		CRC16(data)
	}
}

func BenchmarkNewTxID(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := NewTxID(nil); err != nil {
			b.Fatal(err)
		}
	}
}
