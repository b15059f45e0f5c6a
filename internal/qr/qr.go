// Package qr owns the rendering of a payload (a Pix BR Code) as a QR code
// PNG image, the qrcode_image of the API. It is the only importer of the QR
// library (github.com/skip2/go-qrcode), used for the module matrix only: the
// PNG is written here directly, 1 bit per pixel, because the library's own
// image/png path costs ~2 ms and ~1 MB of allocations per code.
package qr

import (
	"bytes"
	"compress/zlib"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"sync"

	qrcode "github.com/skip2/go-qrcode"
)

// DefaultScale is the number of pixels per module side when Encoder.Scale is
// zero: a typical BR Code (version 7–10 with its 4-module quiet zone, 53–65
// modules) becomes a 318–390 px square.
const DefaultScale = 6

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
	q, err := qrcode.New(payload, qrcode.Medium)
	if err != nil {
		return nil, fmt.Errorf("qr: %w", err)
	}
	modules := q.Bitmap() // with the 4-module quiet zone
	n := len(modules)
	side := n * scale
	stride := 1 + (side+7)/8 // filter byte + packed pixels

	// Raw scanlines: filter 0 (None); bit 1 is white, 0 black. One packed
	// row per module row, then copied for the other scale-1 pixel rows.
	rawp := rawPool.Get().(*[]byte)
	raw := grow((*rawp)[:0], stride*side)
	for y, row := range modules {
		line := raw[y*scale*stride : (y*scale+1)*stride]
		line[0] = 0
		px := line[1:]
		for i := range px {
			px[i] = 0xFF
		}
		for x, dark := range row {
			if !dark {
				continue
			}
			for p := x * scale; p < (x+1)*scale; p++ {
				px[p>>3] &^= 0x80 >> (p & 7)
			}
		}
		for r := 1; r < scale; r++ {
			copy(raw[(y*scale+r)*stride:], line)
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

// grow returns b resized to n bytes, reusing its array when large enough.
func grow(b []byte, n int) []byte {
	if cap(b) < n {
		return make([]byte, n)
	}
	return b[:n]
}
