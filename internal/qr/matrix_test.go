package qr

import (
	"math/rand/v2"
	"strings"
	"testing"

	qrcode "github.com/skip2/go-qrcode"
	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/internal/brcode"
)

// libraryMatrix returns skip2/go-qrcode's symbol for content at level M
// without its quiet zone, as our n*n layout, and the mask it chose (read back
// from the format information).
func libraryMatrix(t testing.TB, content string) ([]byte, int, int) {
	t.Helper()
	q, err := qrcode.New(content, qrcode.Medium)
	require.NoError(t, err)
	q.DisableBorder = true
	bm := q.Bitmap()
	n := len(bm)
	m := make([]byte, n*n)
	for y, row := range bm {
		for x, v := range row {
			if v {
				m[y*n+x] = 1
			}
		}
	}
	tpl := getTemplate((n - 17) / 4)
	var bits uint16
	for i := 0; i < 15; i++ {
		bits |= uint16(m[tpl.format[i][0]]) << i
	}
	for mask, f := range formatBits {
		if f == bits {
			return m, n, mask
		}
	}
	require.FailNow(t, "library format bits not level M", "%015b", bits)
	return nil, 0, 0
}

// TestMatrixMatchesLibrary checks every version bit for bit against the
// library: content of lower-case letters is one byte-mode segment for both
// encoders, so with the library's mask forced the symbols must be equal —
// data layout, Reed-Solomon blocks, interleaving, function patterns, format
// and version information.
func TestMatrixMatchesLibrary(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(5, 6))
	for ver := 1; ver <= 40; ver++ {
		cc := 8
		if ver >= 10 {
			cc = 16
		}
		maxLen := (numDataCodewords(ver)*8 - 4 - cc) / 8
		for _, length := range []int{maxLen, maxLen - 1} {
			b := make([]byte, length)
			for i := range b {
				b[i] = byte('a' + r.IntN(26))
			}
			content := string(b)
			lib, n, mask := libraryMatrix(t, content)
			ours, on := matrix(t, content, mask)
			require.Equal(t, 17+4*ver, on, "version %d", ver)
			require.Equal(t, n, on, "version %d", ver)
			require.True(t, string(lib) == string(ours), "version %d length %d mask %d differs", ver, length, mask)
		}
	}
}

// TestSegmentation: our segmentation is optimal, so it never needs a larger
// version than the library's, and the text still decodes exactly (checked
// through PNG and gozxing for digits, upper case, mixes and all bytes).
func TestSegmentation(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(7, 8))
	alphabets := []string{
		"0123456789",
		"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ $%*+-./:",
		"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz@.-",
		"00000000001111AB",
	}
	for i := 0; i < 120; i++ {
		a := alphabets[i%len(alphabets)]
		b := make([]byte, 1+r.IntN(400))
		for j := range b {
			b[j] = a[r.IntN(len(a))]
		}
		if i%5 == 0 {
			b = append(b, byte(r.IntN(256)))
		}
		content := string(b)
		_, libN, _ := libraryMatrix(t, content)
		_, n := matrix(t, content, -1)
		require.LessOrEqual(t, n, libN, content)
		if i%4 == 0 && i%5 != 0 {
			data, err := PNG(content)
			require.NoError(t, err)
			text, _ := decodeQR(t, data)
			require.Equal(t, content, text)
		}
	}
}

// TestRandomBRCodesScan renders many BR Codes and reads each back with
// gozxing's full detector (finder patterns, alignment, sampling), as a
// payer's app would, at two scales.
func TestRandomBRCodesScan(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(9, 10))
	small := &Encoder{Scale: 3}
	for i := 0; i < 150; i++ {
		txid := make([]byte, brcode.TxIDLen)
		for j := range txid {
			txid[j] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"[r.IntN(62)]
		}
		keys := []string{"123e4567-e89b-42d3-a456-426614174000", "+5511987654321", "pagamentos@example.com.br", "12345678000195"}
		p := brcode.Payload{
			Key:          keys[r.IntN(len(keys))],
			MerchantName: []string{"PIXGATE PAGAMENTOS LTDA", "Loja do Zé", "Comércio de Alimentos Ltda ME"}[r.IntN(3)],
			MerchantCity: []string{"SAO PAULO", "Rio de Janeiro", "Belo Horizonte"}[r.IntN(3)],
			Amount:       r.Int64N(100_000_00) + 1,
			TxID:         string(txid),
		}
		if r.IntN(3) == 0 {
			p.Description = strings.Repeat("Pedido ", 1+r.IntN(3))
		}
		code, err := brcode.Encode(p)
		require.NoError(t, err)
		for _, e := range []*Encoder{&std, small} {
			data, err := e.PNG(code)
			require.NoError(t, err)
			text, _ := decodeQR(t, data)
			require.Equal(t, code, text)
		}
	}
}

func TestAlignmentPositions(t *testing.T) {
	t.Parallel()
	require.Nil(t, alignmentPositions(1))
	require.Equal(t, []int{6, 18}, alignmentPositions(2))
	require.Equal(t, []int{6, 22, 38}, alignmentPositions(7))
	require.Equal(t, []int{6, 34, 60, 86, 112, 138}, alignmentPositions(32))
	require.Equal(t, []int{6, 30, 58, 86, 114, 142, 170}, alignmentPositions(40))
}

func TestTooLong(t *testing.T) {
	t.Parallel()
	var s scratch
	_, _, err := s.encodeMatrix(strings.Repeat("a", 2332), -1)
	require.ErrorIs(t, err, errTooLong)
	_, n, err := s.encodeMatrix(strings.Repeat("a", 2331), -1)
	require.NoError(t, err)
	require.Equal(t, 177, n)
	_, n, err = s.encodeMatrix(strings.Repeat("7", 5596), -1)
	require.NoError(t, err)
	require.Equal(t, 177, n)
}

// TestPenaltyBitsMatchesBytes: the bit-packed scoring equals the module-by-
// module reference on random symbols of every packed size and density, and
// both pick the same mask for real content.
func TestPenaltyBitsMatchesBytes(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(13, 14))
	falseSeen := 0
	for i := 0; i < 3000; i++ {
		n := 21 + 4*r.IntN(11) // versions 1–11
		if i%7 == 0 {
			n = 5 + r.IntN(60) // any size up to 64
		}
		density := 0.2 + 0.6*r.Float64()
		m := make([]byte, n*n)
		var rows, cols [64]uint64
		for y := 0; y < n; y++ {
			for x := 0; x < n; x++ {
				if r.Float64() < density {
					m[y*n+x] = 1
					rows[y] |= 1 << x
					cols[x] |= 1 << y
				}
			}
		}
		require.Equal(t, penalty(m, n), penaltyBits(&rows, &cols, n), "n=%d i=%d", n, i)
		require.Equal(t, falseFinders(m, n), falseFindersBits(&rows, &cols, n)+falseFindersBits(&cols, &rows, n))
		falseSeen += falseFinders(m, n)
	}
	require.Positive(t, falseSeen) // the rare path was exercised

	for i := 0; i < 200; i++ {
		b := make([]byte, 1+r.IntN(250))
		for j := range b {
			b[j] = byte(32 + r.IntN(95))
		}
		var s scratch
		_, n, err := s.encodeMatrix(string(b), 0)
		require.NoError(t, err)
		if n > 64 {
			continue
		}
		// The byte-wise choice, on the symbol placed by the reference.
		var ref refScratch
		_, _, err = ref.refEncodeMatrix(string(b), 0)
		require.NoError(t, err)
		tpl := getTemplate((n - 17) / 4)
		require.Equal(t, ref.refChooseMaskBytes(tpl), s.chooseMaskBits(tpl))
	}
}

// mixedPayload returns length characters in runs from several alphabets, so
// that the segmentation switches modes often and at varied places.
func mixedPayload(r *rand.Rand, length int) string {
	alphabets := []string{
		"0123456789",
		"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ $%*+-./:",
		"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.@-",
		"\x00\x01\x7f\x80\xfe\xffçãé€ 09AZaz",
	}
	b := make([]byte, 0, length)
	for len(b) < length {
		a := alphabets[r.IntN(len(alphabets))]
		for k := 1 + r.IntN(30); k > 0 && len(b) < length; k-- {
			b = append(b, a[r.IntN(len(a))])
		}
	}
	return string(b)
}

// randomBRCode returns a BR Code with random fields, like a charge's.
func randomBRCode(t testing.TB, r *rand.Rand) string {
	txid := make([]byte, 1+r.IntN(brcode.TxIDLen))
	for j := range txid {
		txid[j] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"[r.IntN(62)]
	}
	keys := []string{"123e4567-e89b-42d3-a456-426614174000", "+5511987654321", "pagamentos@example.com.br", "12345678000195"}
	p := brcode.Payload{
		Key:          keys[r.IntN(len(keys))],
		MerchantName: []string{"PIXGATE PAGAMENTOS LTDA", "Loja do Zé", "Comércio de Alimentos Ltda ME"}[r.IntN(3)],
		MerchantCity: []string{"SAO PAULO", "Rio de Janeiro", "Belo Horizonte"}[r.IntN(3)],
		Amount:       r.Int64N(100_000_00),
		TxID:         string(txid),
	}
	if r.IntN(3) == 0 {
		p.Description = strings.Repeat("Pedido ", 1+r.IntN(5))
	}
	code, err := brcode.Encode(p)
	require.NoError(t, err)
	return code
}

// TestMatchesReference compares the encoder with the one it replaced
// (ref_test.go) on thousands of payloads — BR Codes, single-alphabet and
// mixed text of every length up to version 11, and longer ones up to
// version 40: same version, segmentation, data and error correction
// codewords, same mask choice and the same symbol, chosen and under each
// forced mask (all eight for every 16th payload). For every 8th payload it
// also checks each mask's packed score against the module-by-module
// penalty and the old packed scoring, and scoreBits' early stop.
func TestMatchesReference(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(21, 22))
	var s scratch // reused, as from the pool
	var ref refScratch
	count := 4000
	if testing.Short() {
		count = 1000
	}
	for i := 0; i < count; i++ {
		var content string
		switch k := i % 10; {
		case k < 3:
			content = randomBRCode(t, r)
		case k < 6:
			content = randomPayload(r, 1+r.IntN(330))
		case k < 9:
			content = mixedPayload(r, 1+r.IntN(330))
		default:
			if i%30 == 9 {
				content = mixedPayload(r, 1+r.IntN(3000))
			} else {
				content = randomPayload(r, 1+r.IntN(400))
			}
		}
		masks := []int{-1, i % 8}
		if i%16 == 0 {
			masks = []int{-1, 0, 1, 2, 3, 4, 5, 6, 7}
		}
		for _, mask := range masks {
			want, wn, werr := ref.refEncodeMatrix(content, mask)
			got, n, err := s.encodeMatrix(content, mask)
			require.Equal(t, werr, err, "%q", content)
			if err != nil {
				break
			}
			require.Equal(t, wn, n, "%q", content)
			require.Equal(t, ref.modes, s.modes, "modes of %q", content)
			require.Equal(t, ref.data, s.data, "data of %q", content)
			require.Equal(t, ref.all, s.all, "codewords of %q", content)
			if string(want) != string(got) {
				require.Failf(t, "symbol differs", "mask %d, %q", mask, content)
			}
		}
		if i%8 != 0 {
			continue
		}
		// Each mask's score on the packed symbol equals the module-by-
		// module score of the reference's masked symbol, and scoreBits
		// stops only at or past its bound.
		_, n, err := s.encodeMatrix(content, 0) // s.modRows, s.modCols
		if err != nil || n > 64 {
			continue
		}
		tpl := getTemplate((n - 17) / 4)
		_, _, err = ref.refEncodeMatrix(content, 0) // ref.mod
		require.NoError(t, err)
		for m := 0; m < 8; m++ {
			ref.refApplyMask(tpl, m)
			var rows, cols [64]uint64
			for k := 0; k < n; k++ {
				rows[k] = s.modRows[k] ^ tpl.maskRows[m][k]
				cols[k] = s.modCols[k] ^ tpl.maskCols[m][k]
			}
			want := penalty(ref.try, n)
			require.Equal(t, want, penaltyBits(&rows, &cols, n), "mask %d of %q", m, content)
			require.Equal(t, want, refPenaltyBits(&rows, &cols, n))
			bound := want - 50 + r.IntN(100)
			if got := scoreBits(&rows, &cols, n, bound); want < bound {
				require.Equal(t, want, got)
			} else {
				require.GreaterOrEqual(t, got, bound)
				require.LessOrEqual(t, got, want)
			}
		}
	}
}

// TestCrossOKBits compares the bit-scan crossOKBits with the module-by-
// module one it replaced on random lines, every size up to 64 and centre.
func TestCrossOKBits(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(23, 24))
	ok := 0
	for i := 0; i < 20000; i++ {
		n := 1 + r.IntN(64)
		var line uint64
		switch i % 3 {
		case 0: // random
			line = r.Uint64()
		case 1: // a 1:1:3:1:1 somewhere, with random scale and noise
			k := 1 + r.IntN(3)
			at := r.IntN(64)
			for j, c := range "10111010" {
				for q := 0; q < k; q++ {
					if b := at + j*k + q; c == '1' && b < 64 {
						line |= 1 << b
					}
				}
			}
			line ^= 1 << r.IntN(64)
		default: // long runs
			for b := 0; b < 64; {
				w := 1 + r.IntN(8)
				if r.IntN(2) == 0 {
					line |= (1<<w - 1) << b
				}
				b += w
			}
		}
		line &= ^uint64(0) >> (64 - n)
		for pos := 0; pos < n; pos++ {
			want := refCrossOKBits(line, n, pos)
			require.Equal(t, want, crossOKBits(line, n, pos), "%064b n=%d pos=%d", line, n, pos)
			if want {
				ok++
			}
		}
	}
	require.Positive(t, ok)
}

// BenchmarkMatrixSteps times the steps of BenchmarkOurMatrix one by one.
func BenchmarkMatrixSteps(b *testing.B) {
	code := benchCode(b)
	var s scratch
	_, n, err := s.encodeMatrix(code, -1)
	require.NoError(b, err)
	ver := (n - 17) / 4
	t := getTemplate(ver)
	b.Run("segment", func(b *testing.B) {
		for b.Loop() {
			_, _ = s.segment(code)
		}
	})
	b.Run("writeData", func(b *testing.B) {
		for b.Loop() {
			s.writeData(code, ver)
		}
	})
	b.Run("addECC", func(b *testing.B) {
		for b.Loop() {
			s.addECC(ver)
		}
	})
	b.Run("place", func(b *testing.B) { // placement, transpose, unpacking
		for b.Loop() {
			s.encodeBits(t, 0)
		}
	})
	b.Run("chooseMask", func(b *testing.B) {
		for b.Loop() {
			s.chooseMaskBits(t)
		}
	})
}

// FuzzMatrixMatchesReference: for any payload and mask (8 and up: chosen),
// the symbol equals the one of the encoder this one replaced.
func FuzzMatrixMatchesReference(f *testing.F) {
	f.Add("00020126510014br.gov.bcb.pix0115thalesog@me.com0210Pedido 123520400005303986540510.005802BR5914THALES OGLIARI6015SAO MIGUEL DO O62070503***63040DC6", uint8(8))
	f.Add("HELLO WORLD 0123456789 hello", uint8(3))
	f.Add("\x00\xff9", uint8(255))
	f.Fuzz(func(t *testing.T, payload string, m uint8) {
		mask := int(m)
		if mask > 7 {
			mask = -1
		}
		var s scratch
		var ref refScratch
		want, wn, werr := ref.refEncodeMatrix(payload, mask)
		got, n, err := s.encodeMatrix(payload, mask)
		require.Equal(t, werr, err)
		require.Equal(t, wn, n)
		require.True(t, string(want) == string(got), "symbol differs")
	})
}
