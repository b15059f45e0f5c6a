// Package qr owns the rendering of a payload (a Pix BR Code) as a QR code
// PNG image: the qrcode_image of a charge, built on every charge.
//
// Both steps are done here, for cost and for readability. The symbol comes
// from this package's QR encoder (matrix.go, level M, byte/alphanumeric/
// numeric segments, Reed-Solomon, masks): github.com/skip2/go-qrcode, the
// QR library of this module, needs ~1.2 ms and ~9,400 allocations for the
// matrix of a BR Code and sometimes picks a mask that ZXing-based readers
// cannot find (about 1 code in 125 in our tests); the library is now the
// test-only reference our symbols are compared with bit for bit. The PNG is
// written directly (1-bit grayscale, zlib from pooled writers) instead of
// through image/png. This package is the only importer of that library.
package qr

import (
	"bytes"
	"compress/zlib"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"sync"
)

// DefaultScale is the number of pixels per module side when Encoder.Scale is
// zero: a typical BR Code (version 5–10, 45–65 modules with the quiet zone)
// becomes a 180–260 px square of about 1 KB (crisp when scaled up, since
// the page renders it with image-rendering: pixelated).
const DefaultScale = 4

// quietZone is the light margin around the symbol, in modules (the
// standard's minimum).
const quietZone = 4

// MaxScale bounds Encoder.Scale.
const MaxScale = 32

// Encoder renders payloads as QR code PNGs with error correction level M
// (15% of the symbol may be lost) and a 4-module quiet zone, black on white,
// 1-bit grayscale. The zero value is ready to use and an Encoder is safe for
// concurrent use.
type Encoder struct {
	// Scale is the side of one module in pixels, 1..MaxScale; 0 means
	// DefaultScale.
	Scale int
}

// std is the Encoder of the package functions.
var std Encoder

// PNG returns a PNG image of the QR code of payload (level M, DefaultScale
// px per module, 4-module quiet zone), black on white, 1-bit grayscale.
func PNG(payload string) ([]byte, error) { return std.PNG(payload) }

// Base64PNG returns PNG(payload) in standard Base64 with padding and no
// "data:" prefix: the qrcode_image of a charge.
func Base64PNG(payload string) (string, error) { return std.Base64PNG(payload) }

// PNG returns a PNG image of the QR code of payload.
func (e *Encoder) PNG(payload string) ([]byte, error) {
	buf, err := e.render(payload)
	if err != nil {
		return nil, err
	}
	out := bytes.Clone(buf.Bytes())
	putBuf(buf)
	return out, nil
}

// Base64PNG returns the PNG of payload in standard Base64 (RFC 4648 §4,
// padded), with no "data:" prefix.
func (e *Encoder) Base64PNG(payload string) (string, error) {
	buf, err := e.render(payload)
	if err != nil {
		return "", err
	}
	s := base64.StdEncoding.EncodeToString(buf.Bytes())
	putBuf(buf)
	return s, nil
}

// Pools of the per-image scratch space. A zlib (deflate) writer holds about
// 800 KB of state, which is most of what a fresh one costs; reused, writing
// an image allocates almost nothing here.
var (
	bufPool  = sync.Pool{New: func() any { return new(bytes.Buffer) }}
	rawPool  = sync.Pool{New: func() any { return new([]byte) }}
	zlibPool = sync.Pool{New: func() any {
		w, _ := zlib.NewWriterLevel(nil, compressionLevel)
		return w
	}}
)

// compressionLevel trades CPU for size. The image is 1 bit per pixel and
// every module row repeats Scale times, so even the fastest level finds the
// repeats; a higher level mostly costs time.
const compressionLevel = zlib.BestSpeed

var pngSignature = []byte("\x89PNG\r\n\x1a\n")

// maxPooled is the largest buffer kept for reuse, so that one huge image
// does not pin its memory in the pool.
const maxPooled = 1 << 20

func putBuf(b *bytes.Buffer) {
	if b.Cap() <= maxPooled {
		bufPool.Put(b)
	}
}

// render writes the PNG of payload into a pooled buffer, which the caller
// hands back to putBuf once done with it.
func (e *Encoder) render(payload string) (*bytes.Buffer, error) {
	scale := e.Scale
	if scale == 0 {
		scale = DefaultScale
	}
	if scale < 1 || scale > MaxScale {
		return nil, fmt.Errorf("qr: scale %d out of range 1..%d", scale, MaxScale)
	}
	if payload == "" {
		return nil, fmt.Errorf("qr: empty payload")
	}
	sc := scratchPool.Get().(*scratch)
	defer scratchPool.Put(sc)
	mat, n, err := sc.encodeMatrix(payload, -1)
	if err != nil {
		return nil, err
	}
	modules := n + 2*quietZone
	side := modules * scale
	stride := 1 + (side+7)/8 // filter byte + packed pixels

	// Raw scanlines: bit 1 is white, 0 black. One packed row per module row
	// (filter 0, None), bits streamed through an accumulator; the other
	// scale-1 pixel rows of the module row use filter 2 (Up).
	rawp := rawPool.Get().(*[]byte)
	raw := resize((*rawp)[:0], stride*side)
	ones := uint64(1)<<scale - 1
	for my := 0; my < modules; my++ {
		line := raw[my*scale*stride : (my*scale+1)*stride]
		line[0] = 0
		px := line[1:]
		y := my - quietZone
		var acc uint64
		nb, o := 0, 0
		for mx := 0; mx < modules; mx++ {
			x := mx - quietZone
			light := ones
			if y >= 0 && y < n && x >= 0 && x < n && mat[y*n+x] != 0 {
				light = 0
			}
			acc = acc<<scale | light
			nb += scale
			for nb >= 8 {
				nb -= 8
				px[o] = byte(acc >> nb)
				o++
			}
		}
		if nb > 0 { // pad the last byte with white
			px[o] = byte(acc<<(8-nb)) | 0xFF>>nb
		}
		// The other scale-1 pixel rows repeat this one: PNG filter 2
		// (Up) makes each of them all zeros, which deflate compresses
		// almost for free.
		for r := 1; r < scale; r++ {
			up := raw[(my*scale+r)*stride : (my*scale+r+1)*stride]
			clear(up)
			up[0] = 2
		}
	}

	buf := bufPool.Get().(*bytes.Buffer)
	buf.Reset()
	buf.Grow(1024 + side*side/256) // a BR Code image compresses to ~1–3 KB
	buf.Write(pngSignature)

	var ihdr [13]byte
	binary.BigEndian.PutUint32(ihdr[0:], uint32(side))
	binary.BigEndian.PutUint32(ihdr[4:], uint32(side))
	ihdr[8] = 1 // bit depth
	ihdr[9] = 0 // colour type: grayscale
	// compression, filter and interlace methods: 0
	writeChunk(buf, "IHDR", ihdr[:])

	// IDAT: length placeholder, type, zlib stream, then patch the length.
	start := buf.Len()
	buf.Write([]byte{0, 0, 0, 0, 'I', 'D', 'A', 'T'})
	zw := zlibPool.Get().(*zlib.Writer)
	zw.Reset(buf)
	_, err = zw.Write(raw)
	if err == nil {
		err = zw.Close()
	}
	zw.Reset(nil) // drop the reference to buf
	zlibPool.Put(zw)
	if cap(raw) <= maxPooled {
		*rawp = raw
		rawPool.Put(rawp)
	}
	if err != nil {
		putBuf(buf)
		return nil, fmt.Errorf("qr: compressing: %w", err)
	}
	b := buf.Bytes()
	binary.BigEndian.PutUint32(b[start:], uint32(len(b)-start-8))
	var crc [4]byte
	binary.BigEndian.PutUint32(crc[:], crc32.ChecksumIEEE(b[start+4:]))
	buf.Write(crc[:])

	writeChunk(buf, "IEND", nil)
	return buf, nil
}

// writeChunk writes one PNG chunk: length, type, data, CRC-32 of type+data.
func writeChunk(buf *bytes.Buffer, typ string, data []byte) {
	var hdr [8]byte
	binary.BigEndian.PutUint32(hdr[:4], uint32(len(data)))
	copy(hdr[4:], typ)
	buf.Write(hdr[:])
	buf.Write(data)
	crc := crc32.Update(crc32.ChecksumIEEE(hdr[4:]), crc32.IEEETable, data)
	binary.BigEndian.PutUint32(hdr[:4], crc)
	buf.Write(hdr[:4])
}
