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
// written directly (1-bit grayscale, png.go) instead of through image/png,
// its zlib stream by compress/zlib on a pooled writer. This package is the
// only importer of that library.
package qr

import (
	"bytes"
	"encoding/base64"
	"fmt"
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
	ps := pngPool.Get().(*pngScratch)
	defer ps.put()
	b, err := e.render(payload, ps)
	if err != nil {
		return nil, err
	}
	return bytes.Clone(b), nil
}

// Base64PNG returns the PNG of payload in standard Base64 (RFC 4648 §4,
// padded), with no "data:" prefix.
func (e *Encoder) Base64PNG(payload string) (string, error) {
	ps := pngPool.Get().(*pngScratch)
	defer ps.put()
	b, err := e.render(payload, ps)
	if err != nil {
		return "", err
	}
	ps.b64 = base64.StdEncoding.AppendEncode(ps.b64[:0], b)
	return string(ps.b64), nil
}

// pngScratch is the reusable memory of one image: once it is warm,
// rendering allocates nothing but the copy handed to the caller.
type pngScratch struct {
	out []byte    // the PNG
	b64 []byte    // its Base64
	pw  pngWriter // the zlib writer and scanline buffer
}

var pngPool = sync.Pool{New: func() any { return new(pngScratch) }}

// maxPooled is the largest buffer kept for reuse, so that one huge image
// does not pin its memory in the pool.
const maxPooled = 1 << 20

// put returns ps to the pool unless one of its buffers is over maxPooled.
func (ps *pngScratch) put() {
	if cap(ps.out) <= maxPooled && cap(ps.b64) <= maxPooled && cap(ps.pw.block) <= maxPooled {
		pngPool.Put(ps)
	}
}

// render writes the PNG of payload into ps.out and returns it.
func (e *Encoder) render(payload string, ps *pngScratch) ([]byte, error) {
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
	ps.out, err = ps.pw.appendPNG(ps.out[:0], mat, n, scale)
	return ps.out, err
}
