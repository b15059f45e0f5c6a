package qr

import (
	"compress/zlib"
	"encoding/binary"
	"hash/crc32"
)

// zlibLevel is the compression level of the IDAT stream. BestSpeed was
// chosen by measurement (docs/decisions.md): its PNGs are the size of those
// of the higher levels within a few bytes, at a fraction of their CPU,
// because these images are almost all repeated rows that its match search
// finds as well as any.
const zlibLevel = zlib.BestSpeed

var pngSignature = []byte("\x89PNG\r\n\x1a\n")

// pngWriter is the reusable state of one image: a zlib.Writer that is Reset
// for each image instead of built anew (it holds over half a megabyte of
// tables), and the scanlines of one module row. The zero value is ready to
// use; once warm, writing an image allocates nothing.
type pngWriter struct {
	zw    *zlib.Writer
	dst   appendWriter
	block []byte // one module row: its None row, then scale-1 Up rows
}

// appendWriter is an io.Writer that appends to b, so that the zlib stream
// goes straight into the PNG being built.
type appendWriter struct{ b []byte }

// Write appends p to w.b; it never fails.
func (w *appendWriter) Write(p []byte) (int, error) {
	w.b = append(w.b, p...)
	return len(p), nil
}

// appendPNG appends the PNG of the n*n symbol mat (1 = dark) at scale to b.
// The image is 1-bit grayscale, bit 1 white.
func (pw *pngWriter) appendPNG(b []byte, mat []byte, n, scale int) ([]byte, error) {
	side := (n + 2*quietZone) * scale
	b = append(b, pngSignature...)
	var ihdr [13]byte
	binary.BigEndian.PutUint32(ihdr[0:], uint32(side))
	binary.BigEndian.PutUint32(ihdr[4:], uint32(side))
	ihdr[8] = 1 // bit depth
	ihdr[9] = 0 // colour type: grayscale
	// compression, filter and interlace methods: 0
	b = appendChunk(b, "IHDR", ihdr[:])

	// IDAT: length placeholder, type, zlib stream, then patch the length.
	start := len(b)
	b = append(b, 0, 0, 0, 0, 'I', 'D', 'A', 'T')
	b, err := pw.appendZlib(b, mat, n, scale)
	if err != nil {
		return nil, err
	}
	binary.BigEndian.PutUint32(b[start:], uint32(len(b)-start-8))
	b = binary.BigEndian.AppendUint32(b, crc32.ChecksumIEEE(b[start+4:]))

	return appendChunk(b, "IEND", nil), nil
}

// appendChunk appends one PNG chunk: length, type, data, CRC-32 of
// type+data.
func appendChunk(b []byte, typ string, data []byte) []byte {
	b = binary.BigEndian.AppendUint32(b, uint32(len(data)))
	start := len(b)
	b = append(b, typ...)
	b = append(b, data...)
	return binary.BigEndian.AppendUint32(b, crc32.ChecksumIEEE(b[start:]))
}

// appendZlib appends the zlib stream of the filtered scanlines of mat at
// scale to dst. Each module row becomes scale pixel rows: the first with
// filter 0 (None) and the packed pixels, the other scale-1 with filter 2
// (Up), so all zeros, which deflate turns into a few back-references.
func (pw *pngWriter) appendZlib(dst []byte, mat []byte, n, scale int) ([]byte, error) {
	side := (n + 2*quietZone) * scale
	stride := 1 + (side+7)/8 // filter byte + packed pixels
	pw.block = resize(pw.block, scale*stride)
	for i := stride; i < len(pw.block); i++ {
		pw.block[i] = 0
	}
	for i := stride; i < len(pw.block); i += stride {
		pw.block[i] = 2
	}

	pw.dst.b = dst
	if pw.zw == nil {
		zw, err := zlib.NewWriterLevel(&pw.dst, zlibLevel)
		if err != nil {
			return nil, err
		}
		pw.zw = zw
	} else {
		pw.zw.Reset(&pw.dst)
	}
	for y := -quietZone; y < n+quietZone; y++ {
		packRow(pw.block[:stride], mat, n, y, scale)
		if _, err := pw.zw.Write(pw.block); err != nil {
			return nil, err
		}
	}
	if err := pw.zw.Close(); err != nil {
		return nil, err
	}
	dst = pw.dst.b
	pw.dst.b = nil // the caller owns the buffer now
	return dst, nil
}

// packRow writes the None row of module row y (relative to the symbol, so
// negative in the quiet zone) into line: filter byte 0, then the pixels,
// 1 bit each, 1 white, the last byte padded with white. mat holds 0 and 1
// only.
func packRow(line []byte, mat []byte, n, y, scale int) {
	line[0] = 0
	px := line[1:]
	if y < 0 || y >= n {
		for i := range px {
			px[i] = 0xFF
		}
		return
	}
	// Left quiet zone: whole bytes of white, the rest in acc.
	q := quietZone * scale
	for i := range px[:q/8] {
		px[i] = 0xFF
	}
	o, nb := q/8, q%8
	acc := uint64(1)<<nb - 1
	row := mat[y*n : y*n+n]
	// Scales 4 and 8 (byte-aligned after the quiet zone): eight modules at
	// a time, in SIMD-within-a-register style. x holds eight modules, one
	// a byte; (x^1)·0xFF turns each into 0xFF for white, 0 for black.
	if nb == 0 && (scale == 4 || scale == 8) {
		for len(row) >= 8 {
			v := (binary.LittleEndian.Uint64(row) ^ 0x0101010101010101) * 0xFF
			if scale == 8 {
				binary.LittleEndian.PutUint64(px[o:], v)
				o += 8
			} else {
				// Module 2j in the high nibble of byte j, module 2j+1
				// in the low one, then the four bytes side by side.
				t := v&0x00F000F000F000F0 | v>>8&0x000F000F000F000F
				t = (t | t>>8) & 0x0000FFFF0000FFFF
				binary.LittleEndian.PutUint32(px[o:], uint32(t|t>>16))
				o += 4
			}
			row = row[8:]
		}
	}
	// The modules, without branching on their colour (which is random).
	ones := uint64(1)<<scale - 1
	for _, m := range row {
		acc = acc<<scale | ones&-uint64(^m&1)
		nb += scale
		for nb >= 8 {
			nb -= 8
			px[o] = byte(acc >> nb)
			o++
		}
	}
	// Right quiet zone and padding: white.
	if nb > 0 {
		px[o] = byte(acc<<(8-nb)) | 0xFF>>nb
		o++
	}
	for i := range px[o:] {
		px[o+i] = 0xFF
	}
}
