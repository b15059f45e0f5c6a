package qr

import (
	"bytes"
	"encoding/base64"
	"image"
	"image/color"
	"image/png"
	"strings"
	"sync"
	"testing"

	"github.com/makiuchi-d/gozxing"
	zxingqr "github.com/makiuchi-d/gozxing/qrcode"
	qrcode "github.com/skip2/go-qrcode"
	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/internal/brcode"
)

// brCodes are real BR Codes of several sizes, built by brcode.Encode.
func brCodes(t testing.TB) []string {
	t.Helper()
	payloads := []brcode.Payload{
		{Key: "thalesog@me.com", Description: "Pedido 123", MerchantName: "THALES OGLIARI", MerchantCity: "SAO MIGUEL DO O", Amount: 1000, TxID: "***"},
		{Key: "123e4567-e89b-42d3-a456-426614174000", MerchantName: "PIXGATE PAGAMENTOS LTDA", MerchantCity: "São Paulo", Amount: 123456, TxID: "abcDEF0123456789xyzXYZ012"},
		{Key: "+5511987654321", MerchantName: "Zé", MerchantCity: "Ilhéus", TxID: "T1"},
		{Key: "12345678000195", Description: strings.Repeat("Descrição longa ", 3) + "do pedido", MerchantName: "Comércio de Alimentos Ltda ME", MerchantCity: "São José dos Campos", Amount: brcode.MaxAmount, TxID: "ZZZZZZZZZZZZZZZZZZZZZZZZZ"},
	}
	codes := make([]string, len(payloads))
	for i, p := range payloads {
		s, err := brcode.Encode(p)
		require.NoError(t, err)
		codes[i] = s
	}
	return codes
}

// decodeQR reads the text of the QR code in a PNG the way a payer's app
// would: PNG decoder, then a QR reader that knows nothing of our encoder.
func decodeQR(t *testing.T, pngData []byte) (string, image.Image) {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(pngData))
	require.NoError(t, err)
	bmp, err := gozxing.NewBinaryBitmapFromImage(img)
	require.NoError(t, err)
	res, err := zxingqr.NewQRCodeReader().Decode(bmp, nil)
	require.NoError(t, err)
	return res.GetText(), img
}

func TestPNGDecodesToPayload(t *testing.T) {
	t.Parallel()
	for _, code := range brCodes(t) {
		data, err := PNG(code)
		require.NoError(t, err)
		require.True(t, bytes.HasPrefix(data, []byte("\x89PNG\r\n\x1a\n")))
		text, img := decodeQR(t, data)
		require.Equal(t, code, text)

		// Square, whole modules, 1-bit grayscale, and pixel for pixel the
		// symbol with a 4-module quiet zone at DefaultScale.
		cfg, err := png.DecodeConfig(bytes.NewReader(data))
		require.NoError(t, err)
		require.Equal(t, color.GrayModel, cfg.ColorModel)
		mat, n := matrix(t, code, -1)
		side := (n + 8) * DefaultScale
		require.Equal(t, image.Rect(0, 0, side, side), img.Bounds())
		gray, ok := img.(*image.Gray)
		require.True(t, ok)
		for y := 0; y < side; y++ {
			for x := 0; x < side; x++ {
				mx, my := x/DefaultScale-4, y/DefaultScale-4
				want := uint8(0xFF)
				if mx >= 0 && mx < n && my >= 0 && my < n && mat[my*n+mx] == 1 {
					want = 0
				}
				if gray.GrayAt(x, y).Y != want {
					require.Failf(t, "pixel differs", "(%d,%d) of %q", x, y, code)
				}
			}
		}
	}
}

// matrix encodes content with a fresh scratch and returns a copy of the
// symbol and its size.
func matrix(t testing.TB, content string, mask int) ([]byte, int) {
	t.Helper()
	var s scratch
	m, n, err := s.encodeMatrix(content, mask)
	require.NoError(t, err)
	return bytes.Clone(m), n
}

func TestBase64PNG(t *testing.T) {
	t.Parallel()
	for _, code := range brCodes(t) {
		s, err := Base64PNG(code)
		require.NoError(t, err)
		require.False(t, strings.HasPrefix(s, "data:"))
		data, err := base64.StdEncoding.Strict().DecodeString(s)
		require.NoError(t, err)
		direct, err := PNG(code)
		require.NoError(t, err)
		require.Equal(t, direct, data)
		text, _ := decodeQR(t, data)
		require.Equal(t, code, text)
	}
}

func TestScales(t *testing.T) {
	t.Parallel()
	code := brCodes(t)[1]
	for _, scale := range []int{2, 3, 4, 5, 8, 11} {
		data, err := (&Encoder{Scale: scale}).PNG(code)
		require.NoError(t, err)
		text, img := decodeQR(t, data)
		require.Equal(t, code, text, "scale %d", scale)
		require.Zero(t, img.Bounds().Dx()%scale)
	}
}

func TestErrors(t *testing.T) {
	t.Parallel()
	_, err := PNG("")
	require.Error(t, err)
	for _, scale := range []int{-1, MaxScale + 1} {
		_, err = (&Encoder{Scale: scale}).PNG("x")
		require.ErrorContains(t, err, "scale")
	}
	_, err = Base64PNG(strings.Repeat("x", 3000)) // over a QR code's capacity
	require.Error(t, err)
}

// TestConcurrent shares the pools between goroutines; run with -race.
func TestConcurrent(t *testing.T) {
	t.Parallel()
	codes := brCodes(t)
	want := make([]string, len(codes))
	for i, c := range codes {
		s, err := Base64PNG(c)
		require.NoError(t, err)
		want[i] = s
	}
	var wg sync.WaitGroup
	errs := make(chan string, 64)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 20; i++ {
				k := (g + i) % len(codes)
				s, err := Base64PNG(codes[k])
				if err != nil || s != want[k] {
					errs <- codes[k]
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for c := range errs {
		require.Fail(t, "concurrent render differs", c)
	}
}

func benchCode(b *testing.B) string {
	return brCodes(b)[1]
}

// BenchmarkBase64PNG is the path of every charge: matrix, PNG, Base64.
func BenchmarkBase64PNG(b *testing.B) {
	code := benchCode(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Base64PNG(code); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLibraryPNG is what the library alone would cost: its own 256 px
// PNG through image/png, then Base64.
func BenchmarkLibraryPNG(b *testing.B) {
	code := benchCode(b)
	b.ReportAllocs()
	for b.Loop() {
		data, err := qrcode.Encode(code, qrcode.Medium, 256)
		if err != nil {
			b.Fatal(err)
		}
		_ = base64.StdEncoding.EncodeToString(data)
	}
}

// BenchmarkMatrix is the library's share of BenchmarkBase64PNG: qrcode.New
// and Bitmap (New is lazy; Bitmap does the encoding and mask selection).
func BenchmarkMatrix(b *testing.B) {
	code := benchCode(b)
	b.ReportAllocs()
	for b.Loop() {
		q, err := qrcode.New(code, qrcode.Medium)
		if err != nil {
			b.Fatal(err)
		}
		_ = q.Bitmap()
	}
}

// BenchmarkOurMatrix is this package's share of the same step: segmentation,
// Reed-Solomon, placement and the eight-mask selection.
func BenchmarkOurMatrix(b *testing.B) {
	code := benchCode(b)
	b.ReportAllocs()
	for b.Loop() {
		s := scratchPool.Get().(*scratch)
		if _, _, err := s.encodeMatrix(code, -1); err != nil {
			b.Fatal(err)
		}
		scratchPool.Put(s)
	}
}

// BenchmarkPNG is BenchmarkBase64PNG without the Base64 step.
func BenchmarkPNG(b *testing.B) {
	code := benchCode(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := PNG(code); err != nil {
			b.Fatal(err)
		}
	}
}
