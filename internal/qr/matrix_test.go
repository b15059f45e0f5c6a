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
		tpl := getTemplate((n - 17) / 4)
		require.Equal(t, s.chooseMaskBytes(tpl), s.chooseMaskBits(tpl))
	}
}
