package qr

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"errors"
	"hash/adler32"
	"hash/crc32"
	"image"
	"image/png"
	"io"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// These tests check the PNG writer (png.go) against the standard library's
// decoders: image/png for the pixels, and compress/zlib (which verifies the
// Adler-32) for the exact scanlines.

// wantScanlines returns the filtered scanlines render is meant to produce
// for the n*n symbol mat at scale, built pixel by pixel: per module row,
// one filter-0 row with the pixels (bit 1 white, last byte padded with
// white) and scale-1 filter-2 (Up) rows of zeros.
func wantScanlines(mat []byte, n, scale int) []byte {
	side := (n + 2*quietZone) * scale
	stride := 1 + (side+7)/8
	raw := make([]byte, stride*side)
	for y := 0; y < side; y++ {
		line := raw[y*stride : (y+1)*stride]
		if y%scale != 0 {
			line[0] = 2
			continue
		}
		for i := range line[1:] {
			line[1+i] = 0xFF
		}
		my := y/scale - quietZone
		for x := 0; x < side; x++ {
			mx := x/scale - quietZone
			if my >= 0 && my < n && mx >= 0 && mx < n && mat[my*n+mx] != 0 {
				line[1+x/8] &^= 0x80 >> (x % 8)
			}
		}
	}
	return raw
}

// inflate decompresses a zlib stream, checking its Adler-32 and that
// nothing follows it.
func inflate(t testing.TB, z []byte) []byte {
	t.Helper()
	r := bytes.NewReader(z)
	zr, err := zlib.NewReader(r)
	require.NoError(t, err)
	raw, err := io.ReadAll(zr)
	require.NoError(t, err)
	require.NoError(t, zr.Close())
	require.Zero(t, r.Len(), "bytes after the zlib stream")
	return raw
}

// pngChunks splits a PNG into its chunks, checking the signature and every
// CRC.
func pngChunks(t testing.TB, data []byte) (types []string, bodies [][]byte) {
	t.Helper()
	require.True(t, bytes.HasPrefix(data, pngSignature))
	data = data[len(pngSignature):]
	for len(data) > 0 {
		require.GreaterOrEqual(t, len(data), 12)
		n := int(binary.BigEndian.Uint32(data))
		require.LessOrEqual(t, 12+n, len(data))
		typ, body := string(data[4:8]), data[8:8+n]
		require.Equal(t, crc32.ChecksumIEEE(data[4:8+n]), binary.BigEndian.Uint32(data[8+n:]), "CRC of %s", typ)
		types = append(types, typ)
		bodies = append(bodies, body)
		data = data[12+n:]
	}
	return types, bodies
}

// checkPNG renders payload at scale and checks the image pixel for pixel
// against the symbol, and the IDAT's scanlines byte for byte.
func checkPNG(t testing.TB, payload string, scale int) {
	t.Helper()
	data, err := (&Encoder{Scale: scale}).PNG(payload)
	require.NoError(t, err)
	mat, n := matrix(t, payload, -1)
	side := (n + 2*quietZone) * scale

	types, bodies := pngChunks(t, data)
	require.Equal(t, []string{"IHDR", "IDAT", "IEND"}, types)
	raw := inflate(t, bodies[1])
	want := wantScanlines(mat, n, scale)
	if !bytes.Equal(want, raw) {
		require.Failf(t, "scanlines differ", "scale %d, version %d, payload %q", scale, (n-17)/4, payload)
	}

	img, err := png.Decode(bytes.NewReader(data))
	require.NoError(t, err)
	gray, ok := img.(*image.Gray)
	require.True(t, ok, "%T", img)
	require.Equal(t, image.Rect(0, 0, side, side), gray.Bounds())
	for y := 0; y < side; y++ {
		row := gray.Pix[y*gray.Stride : y*gray.Stride+side]
		my := y/scale - quietZone
		for x, v := range row {
			mx := x/scale - quietZone
			want := uint8(0xFF)
			if my >= 0 && my < n && mx >= 0 && mx < n && mat[my*n+mx] == 1 {
				want = 0
			}
			if v != want {
				require.Failf(t, "pixel differs", "(%d,%d) scale %d, version %d, payload %q", x, y, scale, (n-17)/4, payload)
			}
		}
	}
}

// randomPayload returns length random characters from one of a few
// alphabets (so numeric, alphanumeric and byte segments all occur).
func randomPayload(r *rand.Rand, length int) string {
	alphabets := []string{
		"0123456789",
		"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ $%*+-./:",
		"abcdefghijklmnopqrstuvwxyz0123456789.@-",
		"\x00\x01\x7f\x80\xfe\xffçãé€ 09AZaz",
	}
	a := alphabets[r.IntN(len(alphabets))]
	var b strings.Builder
	for b.Len() < length {
		b.WriteByte(a[r.IntN(len(a))])
	}
	return b.String()[:length]
}

// TestPNGEveryScale renders real BR Codes at every scale.
func TestPNGEveryScale(t *testing.T) {
	t.Parallel()
	codes := brCodes(t)
	for scale := 1; scale <= MaxScale; scale++ {
		for _, code := range codes[:2] {
			checkPNG(t, code, scale)
		}
	}
}

// TestPNGRandomPayloads renders random payloads of lengths up to a QR
// code's capacity (so versions 1–40) at random scales, and some of every
// length at the default scale.
func TestPNGRandomPayloads(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(11, 12))
	for _, length := range []int{1, 2, 5, 9, 14, 20, 26, 34, 42, 53, 64, 80, 97, 110, 130, 160, 190, 230, 280, 330, 400, 470, 550, 640, 750, 860, 1000, 1150, 1300, 1500, 1700, 1900, 2100, 2300} {
		for range 3 {
			p := randomPayload(r, length)
			if _, err := PNG(p); err != nil {
				require.ErrorIs(t, err, errTooLong)
				continue
			}
			checkPNG(t, p, DefaultScale)
			scale := 1 + r.IntN(MaxScale)
			if length > 600 {
				scale = 1 + r.IntN(12) // keep large versions' images small
			}
			checkPNG(t, p, scale)
		}
	}
	// Version 40 at the extremes: the longest rows and distances.
	p := strings.Repeat("9", 3000)
	for _, scale := range []int{1, 3, MaxScale} {
		checkPNG(t, p, scale)
	}
}

// TestZlibArbitraryMatrices feeds the scanline writer matrices that are no
// QR symbol: any size, random rows, repeated rows, all dark, all light. It
// must still write exactly the scanlines, whatever the bytes.
func TestZlibArbitraryMatrices(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(13, 14))
	for i := 0; i < 400; i++ {
		n := 1 + r.IntN(100)
		scale := 1 + r.IntN(MaxScale)
		if i < 2*MaxScale {
			scale = 1 + i%MaxScale
		}
		mat := randomMatrix(r, n, i%5)
		checkZlib(t, mat, n, scale)
	}
}

// randomMatrix returns an n*n matrix of 0/1 of a kind: 0 random, 1 rows
// drawn from a pool of three (so repeated rows), 2 all dark, 3 all light,
// 4 long runs.
func randomMatrix(r *rand.Rand, n, kind int) []byte {
	mat := make([]byte, n*n)
	pool := make([]byte, 3*n)
	for i := range pool {
		pool[i] = byte(r.IntN(2))
	}
	for y := 0; y < n; y++ {
		row := mat[y*n : y*n+n]
		switch kind {
		case 0:
			for x := range row {
				row[x] = byte(r.IntN(2))
			}
		case 1:
			k := r.IntN(3)
			copy(row, pool[k*n:k*n+n])
		case 2:
			for x := range row {
				row[x] = 1
			}
		case 4:
			v := byte(r.IntN(2))
			for x := range row {
				if r.IntN(10) == 0 {
					v ^= 1
				}
				row[x] = v
			}
		}
	}
	return mat
}

// checkZlib compresses the scanlines of mat through appendZlib and checks
// that they inflate to the reference, and that the Adler-32 is right.
func checkZlib(t testing.TB, mat []byte, n, scale int) {
	t.Helper()
	var pw pngWriter
	prefix := []byte("prefix")
	z, err := pw.appendZlib(bytes.Clone(prefix), mat, n, scale)
	require.NoError(t, err)
	require.Equal(t, prefix, z[:len(prefix)])
	z = z[len(prefix):]
	want := wantScanlines(mat, n, scale)
	raw := inflate(t, z)
	if !bytes.Equal(want, raw) {
		require.Failf(t, "scanlines differ", "n %d scale %d", n, scale)
	}
	require.Equal(t, adler32.Checksum(want), binary.BigEndian.Uint32(z[len(z)-4:]))
}

// TestRenderAllocs: once its buffers are warm, writing a PNG allocates
// nothing, at any scale. (The pools around it are not measured: the race
// detector makes sync.Pool drop items on purpose.) Not parallel:
// testing.AllocsPerRun refuses to run in a parallel test.
func TestRenderAllocs(t *testing.T) {
	mat, n := matrix(t, brCodes(t)[1], -1)
	for _, scale := range []int{1, 3, DefaultScale, 8, MaxScale} {
		var pw pngWriter
		out, err := pw.appendPNG(nil, mat, n, scale)
		require.NoError(t, err)
		allocs := testing.AllocsPerRun(20, func() {
			out, err = pw.appendPNG(out[:0], mat, n, scale)
		})
		require.NoError(t, err)
		require.Zero(t, allocs, "scale %d", scale)
	}
}

// FuzzPNG renders any payload at any scale: whatever encodes must decode
// with image/png to the symbol, pixel for pixel, and inflate to the exact
// scanlines. Seeds live in testdata/fuzz/FuzzPNG.
func FuzzPNG(f *testing.F) {
	f.Add("00020126510014br.gov.bcb.pix0115thalesog@me.com0210Pedido 123520400005303986540510.005802BR5914THALES OGLIARI6015SAO MIGUEL DO O62070503***63040DC6", uint8(0))
	f.Add("x", uint8(1))
	f.Add("HELLO WORLD", uint8(7))
	f.Fuzz(func(t *testing.T, payload string, s uint8) {
		scale := 1 + int(s)%MaxScale
		var sc scratch
		_, n, err := sc.encodeMatrix(payload, -1)
		if payload == "" || err != nil {
			_, err = (&Encoder{Scale: scale}).PNG(payload)
			require.Error(t, err)
			require.True(t, payload == "" || errors.Is(err, errTooLong), "%v", err)
			return
		}
		if limit := 1500 / (n + 2*quietZone); scale > limit {
			scale = 1 + scale%limit // keep the images small enough to fuzz fast
		}
		checkPNG(t, payload, scale)
	})
}

// FuzzZlib runs the scanline writer on arbitrary matrices: data gives the
// modules (bit by bit), n the size, s the scale.
func FuzzZlib(f *testing.F) {
	f.Add([]byte{0xA5, 0x5A, 0xFF, 0x00}, uint8(5), uint8(3))
	f.Add([]byte{}, uint8(21), uint8(4))
	f.Add([]byte{0x12, 0x34, 0x56, 0x78, 0x9A}, uint8(177), uint8(31))
	f.Fuzz(func(t *testing.T, data []byte, nb, s uint8) {
		n := 1 + int(nb)%177
		scale := 1 + int(s)%MaxScale
		if limit := 1500 / (n + 2*quietZone); scale > limit {
			scale = 1 + scale%limit // keep the images small enough to fuzz fast
		}
		mat := make([]byte, n*n)
		if len(data) > 0 {
			for i := range mat {
				mat[i] = data[i/8%len(data)] >> (i % 8) & 1
			}
		}
		checkZlib(t, mat, n, scale)
	})
}

// BenchmarkPNGStep is the PNG writing alone (scanlines, zlib, CRCs) for the symbol of the benchmark payload at each of a few scales.
func BenchmarkPNGStep(b *testing.B) {
	mat, n := matrix(b, benchCode(b), -1)
	for _, scale := range []int{1, 3, DefaultScale, 8, MaxScale} {
		b.Run("scale="+strconv.Itoa(scale), func(b *testing.B) {
			var pw pngWriter
			out, err := pw.appendPNG(nil, mat, n, scale)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if out, err = pw.appendPNG(out[:0], mat, n, scale); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(out)), "bytes")
		})
	}
}
