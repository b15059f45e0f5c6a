package qr

import (
	"encoding/binary"
	"sync"
)

// GF(2^8) with the QR polynomial x^8+x^4+x^3+x^2+1 (0x11D).
var gfExp, gfLog = func() (exp [512]byte, log [256]byte) {
	x := 1
	for i := 0; i < 255; i++ {
		exp[i] = byte(x)
		log[x] = byte(i)
		x <<= 1
		if x&0x100 != 0 {
			x ^= 0x11D
		}
	}
	for i := 255; i < 512; i++ {
		exp[i] = exp[i-255]
	}
	return exp, log
}()

func gfMul(a, b byte) byte {
	if a == 0 || b == 0 {
		return 0
	}
	return gfExp[int(gfLog[a])+int(gfLog[b])]
}

// rsDivisors[d] is the generator polynomial of degree d, (x-α^0)…(x-α^(d-1)),
// coefficients from the highest power down, leading 1 omitted; only the
// degrees level M uses are filled.
var rsDivisors = func() (t [31][]byte) {
	for _, d := range eccPerBlockM[1:] {
		if t[d] != nil {
			continue
		}
		r := make([]byte, d)
		r[d-1] = 1
		root := byte(1)
		for i := 0; i < d; i++ {
			for j := 0; j < d; j++ {
				r[j] = gfMul(r[j], root)
				if j+1 < d {
					r[j] ^= r[j+1]
				}
			}
			root = gfMul(root, 2)
		}
		t[d] = r
	}
	return t
}()

// rsTable[f] holds f times the generator polynomial of one degree d: the d
// coefficients, highest power first, packed big-endian into four words
// (the bytes past d are zero).
type rsTable [256][4]uint64

var rsTables [31]struct {
	once sync.Once
	t    *rsTable
}

// getRSTable returns the rsTable of the generator of degree d, built on
// first use.
func getRSTable(d int) *rsTable {
	e := &rsTables[d]
	e.once.Do(func() {
		t := new(rsTable)
		for f := range t {
			var b [32]byte
			for i, c := range rsDivisors[d] {
				b[i] = gfMul(byte(f), c)
			}
			for w := range t[f] {
				t[f][w] = binary.BigEndian.Uint64(b[8*w:])
			}
		}
		e.t = t
	})
	return e.t
}

// rsRemainder returns in its first degree bytes the remainder of
// data·x^degree divided by the generator of table t: the block's error
// correction codewords. The remainder is a 32-byte shift register held in
// four words, out[0] in the top byte of the first; each data byte shifts it
// by one byte and adds the generator times the byte that fell out.
func rsRemainder(data []byte, t *rsTable) [32]byte {
	var w0, w1, w2, w3 uint64
	for _, b := range data {
		f := &t[b^byte(w0>>56)]
		w0 = (w0<<8 | w1>>56) ^ f[0]
		w1 = (w1<<8 | w2>>56) ^ f[1]
		w2 = (w2<<8 | w3>>56) ^ f[2]
		w3 = w3<<8 ^ f[3]
	}
	var r [32]byte
	binary.BigEndian.PutUint64(r[0:], w0)
	binary.BigEndian.PutUint64(r[8:], w1)
	binary.BigEndian.PutUint64(r[16:], w2)
	binary.BigEndian.PutUint64(r[24:], w3)
	return r
}

// formatBits[mask] is the 15-bit format information for level M (bits 00)
// and mask: BCH(15,5) code, XOR 0x5412.
var formatBits = func() (t [8]uint16) {
	for m := range t {
		data := m // level M = 00
		rem := data
		for i := 0; i < 10; i++ {
			rem = rem<<1 ^ (rem>>9)*0x537
		}
		t[m] = uint16((data<<10 | rem) ^ 0x5412)
	}
	return t
}()

// template is what every symbol of one version shares: the function
// patterns, where data modules go, the eight masks and where format bits go.
// Built once per version on first use, then read-only.
type template struct {
	size   int
	base   []byte       // function patterns drawn, 1 = dark; data modules 0
	order  []int32      // data module indices in placement order
	masks  [8][]byte    // 1 where a mask flips a module (data modules only)
	format [15][2]int32 // the two places of each format bit

	// For sizes up to 64, bit-packed (rows[y] bit x, cols[x] bit y): base
	// by row, each mask with its format information by row and by column
	// (format places are light in base, so XOR-ing the board over the placed
	// symbol masks it and writes the format bits); and how to place the
	// codewords. Most codewords fill a block of 2 columns × 4 rows, two
	// bits a row, the first bit on the right, rows going up or down: for
	// those, blocks holds the codeword's index in bits 16 and up, bit 12
	// set if the rows go down, the first row in bits 6–11 and the left
	// column in 0–5. The other codewords are placed by place: one op per
	// data module, or per pair of data modules side by side in a row that
	// take consecutive bits, with the codeword's index in bits 16 and up,
	// the shift that brings the bit(s) down in 13–15, bit 12 set for a
	// pair, the row in 6–11 and the column (of a pair, the left one, which
	// takes the second bit) in 0–5.
	baseRows           [64]uint64
	maskRows, maskCols [8][64]uint64
	blocks, place      []uint32
}

var templates [41]struct {
	once sync.Once
	t    *template
}

func getTemplate(ver int) *template {
	e := &templates[ver]
	e.once.Do(func() { e.t = newTemplate(ver) })
	return e.t
}

func newTemplate(ver int) *template {
	n := ver*4 + 17
	t := &template{size: n, base: make([]byte, n*n)}
	fn := make([]bool, n*n)
	set := func(x, y int, dark bool) {
		fn[y*n+x] = true
		if dark {
			t.base[y*n+x] = 1
		} else {
			t.base[y*n+x] = 0
		}
	}
	// Timing patterns.
	for i := 0; i < n; i++ {
		set(6, i, i%2 == 0)
		set(i, 6, i%2 == 0)
	}
	// Finder patterns with their separators.
	for _, c := range [3][2]int{{3, 3}, {n - 4, 3}, {3, n - 4}} {
		for dy := -4; dy <= 4; dy++ {
			for dx := -4; dx <= 4; dx++ {
				x, y := c[0]+dx, c[1]+dy
				if x < 0 || x >= n || y < 0 || y >= n {
					continue
				}
				d := max(abs(dx), abs(dy))
				set(x, y, d != 2 && d != 4)
			}
		}
	}
	// Alignment patterns.
	pos := alignmentPositions(ver)
	for i, ay := range pos {
		for j, ax := range pos {
			if i == 0 && j == 0 || i == 0 && j == len(pos)-1 || i == len(pos)-1 && j == 0 {
				continue // corners of the finder patterns
			}
			for dy := -2; dy <= 2; dy++ {
				for dx := -2; dx <= 2; dx++ {
					set(ax+dx, ay+dy, max(abs(dx), abs(dy)) != 1)
				}
			}
		}
	}
	// Format information places (drawn per mask) and the dark module.
	for i := 0; i <= 5; i++ {
		t.format[i][0] = int32(i*n + 8)
	}
	t.format[6][0] = int32(7*n + 8)
	t.format[7][0] = int32(8*n + 8)
	t.format[8][0] = int32(8*n + 7)
	for i := 9; i < 15; i++ {
		t.format[i][0] = int32(8*n + 14 - i)
	}
	for i := 0; i < 8; i++ {
		t.format[i][1] = int32(8*n + n - 1 - i)
	}
	for i := 8; i < 15; i++ {
		t.format[i][1] = int32((n-15+i)*n + 8)
	}
	for _, f := range t.format {
		fn[f[0]], fn[f[1]] = true, true
	}
	set(8, n-8, true)
	// Version information (versions 7 and up): BCH(18,6).
	if ver >= 7 {
		rem := ver
		for i := 0; i < 12; i++ {
			rem = rem<<1 ^ (rem>>11)*0x1F25
		}
		bits := ver<<12 | rem
		for i := 0; i < 18; i++ {
			dark := bits>>i&1 != 0
			a, b := n-11+i%3, i/3
			set(a, b, dark)
			set(b, a, dark)
		}
	}
	// Data placement order: two-module columns from the right, zigzagging
	// up and down, skipping the vertical timing pattern.
	t.order = make([]int32, 0, numRawDataModules(ver))
	for right := n - 1; right >= 1; right -= 2 {
		if right == 6 {
			right = 5
		}
		for v := 0; v < n; v++ {
			for j := 0; j < 2; j++ {
				x := right - j
				y := v
				if (right+1)&2 == 0 {
					y = n - 1 - v
				}
				if !fn[y*n+x] {
					t.order = append(t.order, int32(y*n+x))
				}
			}
		}
	}
	for m := range t.masks {
		mm := make([]byte, n*n)
		for y := 0; y < n; y++ {
			for x := 0; x < n; x++ {
				if !fn[y*n+x] && maskBit(m, x, y) {
					mm[y*n+x] = 1
				}
			}
		}
		t.masks[m] = mm
		if n > 64 {
			continue
		}
		withFormat := make([]byte, n*n)
		copy(withFormat, mm)
		for i, f := range t.format {
			withFormat[f[0]] = byte(formatBits[m]>>i) & 1
			withFormat[f[1]] = byte(formatBits[m]>>i) & 1
		}
		for y := 0; y < n; y++ {
			for x := 0; x < n; x++ {
				b := uint64(withFormat[y*n+x])
				t.maskRows[m][y] |= b << x
				t.maskCols[m][x] |= b << y
			}
		}
	}
	if n <= 64 {
		for y := 0; y < n; y++ {
			for x := 0; x < n; x++ {
				t.baseRows[y] |= uint64(t.base[y*n+x]) << x
			}
		}
		bits := numRawDataModules(ver) / 8 * 8 // the remainder bits stay light
		xy := func(i int) (uint32, uint32) {
			return uint32(t.order[i] % int32(n)), uint32(t.order[i] / int32(n))
		}
		// isBlock reports whether codeword k fills 2 columns × 4 rows
		// going up (d = -1) or down (d = 1), two bits a row, right first.
		isBlock := func(k int, d int32) bool {
			o := t.order[8*k : 8*k+8]
			for j := int32(0); j < 4; j++ {
				p := o[0] + j*d*int32(n)
				if o[2*j] != p || o[2*j+1] != p-1 || p%int32(n) == 0 {
					return false
				}
			}
			return true
		}
		for k := 0; k < bits/8; k++ {
			x, y := xy(8 * k)
			if isBlock(k, -1) {
				t.blocks = append(t.blocks, uint32(k)<<16|y<<6|(x-1))
				continue
			}
			if isBlock(k, 1) {
				t.blocks = append(t.blocks, uint32(k)<<16|1<<12|y<<6|(x-1))
				continue
			}
			for i := 8 * k; i < 8*k+8; i++ {
				x, y := xy(i)
				op := uint32(k)<<16 | uint32(7-i%8)<<13 | y<<6 | x
				if i%2 == 0 && t.order[i+1] == t.order[i]-1 { // (x-1, y) next
					op = uint32(k)<<16 | uint32(6-i%8)<<13 | 1<<12 | y<<6 | (x - 1)
					i++
				}
				t.place = append(t.place, op)
			}
		}
	}
	return t
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// alignmentPositions lists the row/column centres of a version's alignment
// patterns.
func alignmentPositions(ver int) []int {
	if ver == 1 {
		return nil
	}
	na := ver/7 + 2
	step := (ver*8 + na*3 + 5) / (na*4 - 4) * 2
	pos := make([]int, na)
	pos[0] = 6
	for i, p := na-1, ver*4+17-7; i >= 1; i, p = i-1, p-step {
		pos[i] = p
	}
	return pos
}

// maskBit reports whether mask m flips the module at column x, row y.
func maskBit(m, x, y int) bool {
	switch m {
	case 0:
		return (x+y)%2 == 0
	case 1:
		return y%2 == 0
	case 2:
		return x%3 == 0
	case 3:
		return (x+y)%3 == 0
	case 4:
		return (x/3+y/2)%2 == 0
	case 5:
		return x*y%2+x*y%3 == 0
	case 6:
		return (x*y%2+x*y%3)%2 == 0
	default:
		return ((x+y)%2+x*y%3)%2 == 0
	}
}
