package qr

import (
	"bytes"
	"encoding/binary"
	"math/bits"
	"math/rand/v2"
	"slices"
	"sync"
)

// This file is the zlib (RFC 1950) / deflate (RFC 1951) encoder of the IDAT
// chunk. It replaces compress/zlib, whose generic match search and per-image
// Huffman code cost about as much CPU as building the QR matrix, with one
// that knows how the scanlines are laid out and searches for nothing:
//
//   - A module row becomes scale pixel rows: a None (filter 0) row with the
//     packed pixels, then scale-1 Up (filter 2) rows, each a 2 and stride-1
//     zeros. The raw scanlines are never built: packRow makes one None row
//     at a time, and the Up rows exist only as back-references.
//   - The first module row (quiet zone) is spelled out: its None row as
//     literals and a distance-1 run, one Up row (2, 0, a distance-1 run of
//     zeros), then a distance-stride copy of that Up row for the others.
//   - Every later module row equals the one above it, scale·stride bytes
//     back, except for the middle of its None row, from the first to the
//     last byte that differs from the None row above. The middle is written
//     as literals; the rest (the equal end of one None row, its Up rows, the
//     equal start of the next None row, and whole repeated module rows such
//     as the quiet zone) is one match at that distance per module row, so
//     a symbol row typically costs its literals and a single length/distance
//     pair. When the Up rows alone take several 258-byte matches (large
//     scales), they are copied from the nearest Up row instead (distance
//     2·stride, then stride), whose distance codes have fewer extra bits.
//     From scale 8 on, a module is whole bytes, and runs of equal bytes in
//     the middle become distance-1 matches too.
//   - It is all one final block with a dynamic Huffman code (BTYPE 10), but
//     the code is computed once per scale (tableFor), not per image: trained
//     on the encoder's own symbol counts for real symbols at that scale, it
//     gives the few byte values of a scale short codes (at scale 4, two
//     modules a byte: 0x00, 0x0F, 0xF0, 0xFF take 2–3 bits) while every
//     other literal, length and distance keeps a longer code, so that any
//     image, of any version and scale, can be written. The block header is
//     precomputed as a bit string too.
//   - The Adler-32 is computed by module row (see adler): one pass over each
//     distinct None row, closed forms for the Up rows and repeated rows.
//
// Every scale 1..MaxScale takes this path; there is no fallback. Writing an
// image allocates nothing once the output buffer is warm. For a typical BR
// Code at the default scale, the whole PNG step takes a few µs, several
// times less than compress/zlib (BestSpeed) alone took on the scanlines, and
// the PNG is about a quarter smaller (552 bytes instead of 769).

// Deflate alphabets (RFC 1951 §3.2.5).
const (
	numLit      = 286 // 0–255 bytes, 256 end of block, 257–285 lengths
	numDist     = 30
	endOfBlock  = 256
	maxCodeBits = 15 // longest literal/length or distance code
	maxCLBits   = 7  // longest code of the code length alphabet
	maxMatch    = 258
	minMatch    = 3
	adlerMod    = 65521
)

var (
	lengthBase  = [29]uint16{3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258}
	lengthExtra = [29]uint8{0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0}
	// clOrder is the order of the code length code lengths in the header.
	clOrder = [19]uint8{16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15}
	// lengthCode[l] is the index in lengthBase of match length l (3..258).
	lengthCode = func() (t [maxMatch + 1]uint8) {
		c := 0
		for l := minMatch; l <= maxMatch; l++ {
			for c+1 < len(lengthBase) && int(lengthBase[c+1]) <= l {
				c++
			}
			t[l] = uint8(c)
		}
		return t
	}()
)

// distCode returns the distance code of d (1..32768), its number of extra
// bits and their value.
func distCode(d int) (code int, nextra uint, extra uint32) {
	if d <= 4 {
		return d - 1, 0, 0
	}
	x := uint32(d - 1)
	nb := uint(bits.Len32(x)) - 1 // ≥ 2
	return int(2*nb + uint(x>>(nb-1)&1)), nb - 1, x & (1<<(nb-1) - 1)
}

// hcode is one Huffman code, bit-reversed so that it is written least
// significant bit first like everything else in deflate, and its length.
type hcode struct {
	bits uint16
	n    uint8
}

// huffTable is the immutable code of one scale.
type huffTable struct {
	lit  [numLit]hcode
	dist [numDist]hcode
	// header is the block header as a bit string (BFINAL, BTYPE, then the
	// dynamic code description), headerBits long.
	header     []byte
	headerBits int
}

var tables [MaxScale + 1]struct {
	once sync.Once
	t    *huffTable
}

// tableFor returns the code of scale, built on first use.
func tableFor(scale int) *huffTable {
	e := &tables[scale]
	e.once.Do(func() { e.t = trainTable(scale) })
	return e.t
}

// trainTable counts the symbols the encoder emits for real symbols at scale,
// of versions 1–10 (a BR Code is usually version 5–10), and builds a code
// from those counts. Each symbol counts at least once, so every byte value,
// length and distance has a code: unusual images stay encodable, only less
// compactly. The payloads come from a fixed seed, so the table (and so the
// output) is deterministic.
func trainTable(scale int) *huffTable {
	var litFreq [numLit]uint32
	var distFreq [numDist]uint32
	d := deflater{litFreq: &litFreq, distFreq: &distFreq}
	var s scratch
	var rows [2][]byte
	r := rand.New(rand.NewPCG(0x5049, 0x58))
	for length := 10; length <= 210; length += 20 {
		b := make([]byte, length)
		for i := range b {
			b[i] = byte('a' + r.IntN(26))
		}
		mat, n, err := s.encodeMatrix(string(b), -1)
		if err != nil {
			panic("qr: training symbol: " + err.Error())
		}
		d.image(mat, n, scale, &rows)
	}
	litFreq[endOfBlock]++
	for i := range litFreq {
		litFreq[i]++
	}
	for i := range distFreq {
		distFreq[i]++
	}
	return newHuffTable(huffLengths(litFreq[:], maxCodeBits), huffLengths(distFreq[:], maxCodeBits))
}

// newHuffTable builds the codes and the block header from code lengths.
func newHuffTable(litLen, distLen []uint8) *huffTable {
	t := new(huffTable)
	for i, c := range canonical(litLen) {
		t.lit[i] = c
	}
	for i, c := range canonical(distLen) {
		t.dist[i] = c
	}

	// Code lengths, run-length coded (RFC 1951 §3.2.7): 16 repeats the
	// previous length 3–6 times, 17 and 18 write 3–10 and 11–138 zeros.
	// Lit and dist lengths are one sequence; runs may cross between them.
	type clToken struct{ sym, extra uint8 }
	all := append(append([]uint8(nil), litLen...), distLen...)
	var toks []clToken
	for i := 0; i < len(all); {
		l := all[i]
		run := 1
		for i+run < len(all) && all[i+run] == l {
			run++
		}
		i += run
		if l == 0 {
			for run >= 11 {
				k := min(run, 138)
				toks = append(toks, clToken{18, uint8(k - 11)})
				run -= k
			}
			if run >= 3 {
				toks = append(toks, clToken{17, uint8(run - 3)})
				run = 0
			}
		} else {
			toks = append(toks, clToken{l, 0})
			run--
			for run >= 3 {
				k := min(run, 6)
				toks = append(toks, clToken{16, uint8(k - 3)})
				run -= k
			}
		}
		for ; run > 0; run-- {
			toks = append(toks, clToken{l, 0})
		}
	}
	var clFreq [19]uint32
	for _, tk := range toks {
		clFreq[tk.sym]++
	}
	// A code with a single symbol is incomplete, which decoders reject for
	// the code length code: give it a second (unused) symbol.
	used := 0
	for _, f := range clFreq {
		if f > 0 {
			used++
		}
	}
	for i := 0; used < 2; i++ {
		if clFreq[i] == 0 {
			clFreq[i] = 1
			used++
		}
	}
	clLen := huffLengths(clFreq[:], maxCLBits)
	clCode := canonical(clLen)
	hclen := len(clOrder)
	for hclen > 4 && clLen[clOrder[hclen-1]] == 0 {
		hclen--
	}

	var w bitWriter64
	w.put(1, 1) // BFINAL: the only block
	w.put(2, 2) // BTYPE 10: dynamic Huffman codes
	w.put(uint64(len(litLen)-257), 5)
	w.put(uint64(len(distLen)-1), 5)
	w.put(uint64(hclen-4), 4)
	for _, s := range clOrder[:hclen] {
		w.put(uint64(clLen[s]), 3)
	}
	for _, tk := range toks {
		c := clCode[tk.sym]
		w.put(uint64(c.bits), uint(c.n))
		switch tk.sym {
		case 16:
			w.put(uint64(tk.extra), 2)
		case 17:
			w.put(uint64(tk.extra), 3)
		case 18:
			w.put(uint64(tk.extra), 7)
		}
	}
	t.headerBits = len(w.out)*8 + int(w.n)
	w.flush()
	t.header = w.out
	return t
}

// huffLengths returns the lengths of a Huffman code for freq, none longer
// than maxBits; symbols of frequency 0 get no code. Too long codes are
// handled by halving the frequencies (rounding up, so that no used symbol
// drops out) and starting again: with all frequencies 1 the code is
// balanced, so this ends. The result is always a complete code when at
// least two symbols are used.
func huffLengths(freq []uint32, maxBits int) []uint8 {
	w := make([]uint64, len(freq))
	for i, f := range freq {
		w[i] = uint64(f)
	}
	for {
		lens := huffmanOnce(w)
		if int(slices.Max(lens)) <= maxBits {
			return lens
		}
		for i := range w {
			w[i] = (w[i] + 1) / 2
		}
	}
}

// huffmanOnce computes unrestricted Huffman code lengths with the two-queue
// method: leaves sorted by weight, internal nodes created in order of
// non-decreasing weight.
func huffmanOnce(w []uint64) []uint8 {
	n := len(w)
	lens := make([]uint8, n)
	var leaves []int
	for i, x := range w {
		if x > 0 {
			leaves = append(leaves, i)
		}
	}
	switch len(leaves) {
	case 0:
		return lens
	case 1:
		lens[leaves[0]] = 1
		return lens
	}
	// Insertion sort is plenty for ≤ 286 symbols built once; ties keep
	// symbol order, so the result is deterministic.
	for i := 1; i < len(leaves); i++ {
		for j := i; j > 0 && w[leaves[j]] < w[leaves[j-1]]; j-- {
			leaves[j], leaves[j-1] = leaves[j-1], leaves[j]
		}
	}
	// Nodes: 0..n-1 leaves (by symbol), n.. internal.
	weight := append([]uint64(nil), w...)
	parent := make([]int, n, 2*n)
	li, qi := 0, n
	pick := func() int {
		if li < len(leaves) && (qi >= len(weight) || weight[leaves[li]] <= weight[qi]) {
			li++
			return leaves[li-1]
		}
		qi++
		return qi - 1
	}
	for k := 1; k < len(leaves); k++ {
		a, b := pick(), pick()
		id := len(weight)
		weight = append(weight, weight[a]+weight[b])
		parent = append(parent, -1)
		parent[a], parent[b] = id, id
	}
	depth := make([]uint8, len(weight))
	for id := len(weight) - 2; id >= n; id-- { // the root, last, has depth 0
		depth[id] = depth[parent[id]] + 1
	}
	for _, s := range leaves {
		lens[s] = depth[parent[s]] + 1
	}
	return lens
}

// canonical returns the canonical codes of lengths (RFC 1951 §3.2.2),
// bit-reversed for writing.
func canonical(lens []uint8) []hcode {
	var count, next [maxCodeBits + 2]uint16
	for _, l := range lens {
		if l > 0 {
			count[l]++
		}
	}
	code := uint16(0)
	for b := 1; b <= maxCodeBits+1; b++ {
		code = (code + count[b-1]) << 1
		next[b] = code
	}
	codes := make([]hcode, len(lens))
	for i, l := range lens {
		if l > 0 {
			c := next[l]
			next[l]++
			codes[i] = hcode{bits.Reverse16(c) >> (16 - l), l}
		}
	}
	return codes
}

// bitWriter64 appends bits least significant first, as deflate wants them.
type bitWriter64 struct {
	out []byte
	acc uint64
	n   uint // bits in acc, < 32 between calls
}

// put writes the nb (≤ 32) low bits of v, which must have no higher bit set.
func (w *bitWriter64) put(v uint64, nb uint) {
	w.acc |= v << w.n
	w.n += nb
	if w.n >= 32 {
		w.out = binary.LittleEndian.AppendUint32(w.out, uint32(w.acc))
		w.acc >>= 32
		w.n -= 32
	}
}

// flush writes the pending bits, padding the last byte with zeros.
func (w *bitWriter64) flush() {
	for w.n > 0 {
		w.out = append(w.out, byte(w.acc))
		w.acc >>= 8
		w.n -= min(w.n, 8)
	}
}

// deflater turns the image into deflate symbols: written with t, or, when
// litFreq is set (training), only counted.
type deflater struct {
	t        *huffTable
	w        bitWriter64
	litFreq  *[numLit]uint32
	distFreq *[numDist]uint32
}

// literals writes p as literal bytes.
func (d *deflater) literals(p []byte) {
	if d.litFreq != nil {
		for _, c := range p {
			d.litFreq[c]++
		}
		return
	}
	lit := &d.t.lit
	w := &d.w
	acc, n, out := w.acc, w.n, w.out
	for _, c := range p {
		h := lit[c]
		acc |= uint64(h.bits) << n
		n += uint(h.n)
		if n >= 32 {
			out = binary.LittleEndian.AppendUint32(out, uint32(acc))
			acc >>= 32
			n -= 32
		}
	}
	w.acc, w.n, w.out = acc, n, out
}

// match writes a copy of length bytes from dist bytes back, as as many
// matches of at most 258 bytes as it takes (none shorter than 3).
func (d *deflater) match(length, dist int) {
	dc, dn, dx := distCode(dist)
	for length > 0 {
		k := min(length, maxMatch)
		if r := length - k; r > 0 && r < minMatch {
			k = length - minMatch
		}
		if k < minMatch {
			panic("qr: deflate match shorter than 3")
		}
		length -= k
		lc := lengthCode[k]
		if d.litFreq != nil {
			d.litFreq[257+int(lc)]++
			d.distFreq[dc]++
			continue
		}
		h := d.t.lit[257+int(lc)]
		d.w.put(uint64(h.bits)|uint64(k-int(lengthBase[lc]))<<h.n, uint(h.n+lengthExtra[lc]))
		h = d.t.dist[dc]
		d.w.put(uint64(h.bits)|uint64(dx)<<h.n, uint(h.n)+dn)
	}
}

// image emits the filtered scanlines of the n*n symbol mat (1 = dark) with
// its quiet zone at scale, and returns their Adler-32. rows holds two
// scratch rows, grown as needed.
func (d *deflater) image(mat []byte, n, scale int, rows *[2][]byte) uint32 {
	modules := n + 2*quietZone
	side := modules * scale
	stride := 1 + (side+7)/8 // filter byte + packed pixels
	block := scale * stride  // bytes of one module row
	upRun := block - stride  // bytes of its Up rows
	cur, prev := resize(rows[0], stride), resize(rows[1], stride)
	rows[0], rows[1] = cur, prev

	// The first module row (quiet zone) is spelled out: its None row, one
	// Up row, then a copy of that for the others.
	packRow(cur, mat, n, -quietZone, scale)
	d.literalRuns(cur)
	if scale > 1 {
		d.literal(2)
		d.literal(0)
		d.zeros(stride - 2)
		if scale > 2 {
			d.match(upRun-stride, stride)
		}
	}
	ad := newAdler(stride, scale)
	ad.moduleRow(cur)

	// Every later module row is the one above it (block bytes back) but
	// for the middle of its None row, from the first to the last byte that
	// differs from the None row above, which is written as literals. The
	// rest is copied: the equal end of one None row, its Up rows and the
	// equal start of the next None row are one match, pending until the
	// next difference. When the Up rows need several 258-byte matches
	// (split), they are copied from the nearest Up row instead (distance
	// 2·stride for the first, stride for the others), whose distance codes
	// need fewer extra bits.
	split := upRun > maxMatch
	pending := 0 // bytes to copy from block bytes back
	suffix := 0  // of them, the end of the last None row written
	for my := 1; my < modules; my++ {
		cur, prev = prev, cur
		packRow(cur, mat, n, my-quietZone, scale)
		if bytes.Equal(cur, prev) {
			pending += stride
			ad.repeat()
		} else {
			p := 0 // common start with the None row above
			for cur[p] == prev[p] {
				p++
			}
			s := 0 // common end
			for cur[stride-1-s] == prev[stride-1-s] {
				s++
			}
			pending += p
			if pending < minMatch {
				// Only at scale 1 (no Up rows in between) or when
				// split: spell these few bytes out.
				if scale == 1 {
					d.literals(prev[stride-suffix:])
				}
				d.literals(cur[:p])
			} else {
				d.match(pending, block)
			}
			if scale >= runScale {
				d.literalRuns(cur[p : stride-s])
			} else {
				d.literals(cur[p : stride-s])
			}
			pending, suffix = s, s
			ad.moduleRow(cur)
		}
		switch {
		case scale == 1:
		case split:
			d.match(pending+stride, block)
			if scale > 2 {
				d.match(upRun-stride, stride)
			}
			pending = 0
		default:
			pending += upRun
		}
	}
	if pending >= minMatch {
		d.match(pending, block)
	} else { // scale 1: the end of the last None row
		d.literals(cur[stride-pending:])
	}
	return ad.sum()
}

// adler computes the Adler-32 (RFC 1950 §8.2) of the scanlines module row
// by module row. Appending bytes x_0..x_{L-1} to (a, b) gives a + Σx_i and
// b + L·a + Σ(L-i)·x_i; an Up row (2, then zeros) adds 2 to a and L·a + 2·L
// to b. So a module row of a None row of sums S = Σx_i, W = Σ(L-i)·x_i and
// k = scale-1 Up rows (U = k·L bytes) adds
//
//	to a: S + 2k
//	to b: scale·L·a + W + U·S + U·(k+1)
//
// The None row costs one pass for S and W; a repeated module row adds the
// same again, for free.
type adler struct {
	a, b       uint64 // the state, reduced mod 65521; a starts at 1
	block      uint64 // scale·L
	up, k      uint64 // U and k
	rowA, rowB uint64 // what the last module row added to a and b, less block·a
}

func newAdler(stride, scale int) adler {
	return adler{a: 1, block: uint64(scale * stride), up: uint64((scale - 1) * stride), k: uint64(scale - 1)}
}

// moduleRow appends a module row whose None row is line.
func (ad *adler) moduleRow(line []byte) {
	var s, w uint64 // after the loop, w = Σ(L-i)·x_i: x_i is added L-i times
	for _, c := range line {
		s += uint64(c)
		w += s
	}
	ad.rowA = (s + 2*ad.k) % adlerMod
	ad.rowB = (w + ad.up*s + ad.up*(ad.k+1)) % adlerMod
	ad.repeat()
}

// repeat appends a module row the same as the last one.
func (ad *adler) repeat() {
	ad.b = (ad.b + ad.block*ad.a + ad.rowB) % adlerMod
	ad.a = (ad.a + ad.rowA) % adlerMod
}

// sum returns the checksum.
func (ad *adler) sum() uint32 { return uint32(ad.a | ad.b<<16) }

// runScale is the smallest scale at which None rows are searched for runs
// of equal bytes: from scale 8 on, a module is at least a whole byte.
const runScale = 8

// minRun is the shortest run of equal bytes that literalRuns writes as a
// literal and a distance-1 match rather than as literals.
const minRun = 6

// literalRuns writes p as literals, except runs of minRun or more equal
// bytes, which become one literal and a distance-1 match.
func (d *deflater) literalRuns(p []byte) {
	start := 0 // of the pending literals
	for i := 0; i < len(p); {
		j := i + 1
		for j < len(p) && p[j] == p[i] {
			j++
		}
		if j-i >= minRun {
			d.literals(p[start : i+1])
			d.match(j-i-1, 1)
			start = j
		}
		i = j
	}
	d.literals(p[start:])
}

// literal writes the literal c.
func (d *deflater) literal(c byte) {
	if d.litFreq != nil {
		d.litFreq[c]++
		return
	}
	h := d.t.lit[c]
	d.w.put(uint64(h.bits), uint(h.n))
}

// zeros writes k zero bytes that follow a zero byte.
func (d *deflater) zeros(k int) {
	if k >= minMatch {
		d.match(k, 1)
		return
	}
	for ; k > 0; k-- {
		d.literal(0)
	}
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

// appendZlib appends the zlib stream of the image of mat at scale to dst.
func appendZlib(dst []byte, mat []byte, n, scale int, rows *[2][]byte) []byte {
	// CMF 0x78: deflate, 32 KB window (the longest distance used is
	// scale*stride ≤ 32*741). FLG 0x01: no dictionary, check bits.
	dst = append(dst, 0x78, 0x01)
	t := tableFor(scale)
	d := deflater{t: t, w: bitWriter64{out: dst}}
	i := 0
	for ; t.headerBits-8*i >= 32; i += 4 {
		d.w.put(uint64(binary.LittleEndian.Uint32(t.header[i:])), 32)
	}
	for ; i < len(t.header); i++ {
		d.w.put(uint64(t.header[i]), uint(min(8, t.headerBits-8*i)))
	}
	adler := d.image(mat, n, scale, rows)
	h := t.lit[endOfBlock]
	d.w.put(uint64(h.bits), uint(h.n))
	d.w.flush()
	return binary.BigEndian.AppendUint32(d.w.out, adler)
}
