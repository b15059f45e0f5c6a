package qr

import "math/bits"

// Penalty weights of ISO/IEC 18004 §7.8.3, and ours for false finders.
const (
	penaltyRun         = 3    // N1: a run of 5+ same-colour modules, +1 per extra
	penaltyBlock       = 3    // N2: each 2×2 block of one colour
	penaltyFinderLike  = 40   // N3: 1:1:3:1:1 with 4 light modules on a side
	penaltyBalance     = 10   // N4: per 5% of dark/light imbalance
	penaltyFalseFinder = 1000 // see matrix.go: a centre readers take for a finder
)

// penalty scores a masked symbol (n×n, 1 = dark); the lowest wins.
func penalty(m []byte, n int) int {
	score := 0
	dark := 0
	for y := 0; y < n; y++ {
		row := m[y*n : y*n+n]
		score += linePenalty(m, y*n, 1, n)
		score += linePenalty(m, y, n, n)
		for _, v := range row {
			dark += int(v)
		}
		if y+1 < n {
			next := m[(y+1)*n : (y+1)*n+n]
			for x := 0; x+1 < n; x++ {
				c := row[x]
				if row[x+1] == c && next[x] == c && next[x+1] == c {
					score += penaltyBlock
				}
			}
		}
	}
	total := n * n
	k := (abs(dark*20-total*10)+total-1)/total - 1
	score += k * penaltyBalance
	score += falseFinders(m, n) * penaltyFalseFinder
	return score
}

// linePenalty scores one row or column (start, stride, n modules) for runs
// (N1) and finder-like patterns (N3), the outside counting as light.
func linePenalty(m []byte, start, stride, n int) int {
	score := 0
	run := 0
	var last byte = 2
	w := 0 // the last 11 modules, newest in bit 0
	for i, p := 0, start; i < n; i, p = i+1, p+stride {
		v := m[p]
		if v == last {
			run++
			if run == 5 {
				score += penaltyRun
			} else if run > 5 {
				score++
			}
		} else {
			last, run = v, 1
		}
		w = (w<<1 | int(v)) & 0x7FF
		if w == 0x05D || w == 0x5D0 {
			score += penaltyFinderLike
		}
	}
	for i := 0; i < 4; i++ {
		w = w << 1 & 0x7FF
		if w == 0x5D0 {
			score += penaltyFinderLike
		}
	}
	return score
}

// falseFinders counts the centres outside the three finder patterns that a
// ZXing-style detector would accept as finder patterns: exact 1:1:3:1:1 runs
// (dark, light, dark ×3, light, dark) across, and runs passing ZXing's
// ratio test along the other axis through the same centre. Both axes are
// tried as the scanning one, since a photo may be rotated.
func falseFinders(m []byte, n int) int {
	count := 0
	for axis := 0; axis < 2; axis++ {
		// along: step between modules of a scan line; across: between lines.
		along, across := 1, n
		if axis == 1 {
			along, across = n, 1
		}
		for l := 0; l < n; l++ {
			base := l * across
			for i := 2; i+4 < n; i++ {
				p := base + i*along
				if m[p] != 1 || m[p+along] != 1 || m[p+2*along] != 1 ||
					m[p-along] != 0 || m[p-2*along] != 1 ||
					m[p+3*along] != 0 || m[p+4*along] != 1 ||
					i >= 3 && m[p-3*along] != 0 || i+5 < n && m[p+5*along] != 0 {
					continue
				}
				c := i + 1 // centre along the line
				if inFinder(c, l, n) {
					continue
				}
				if crossOK(m, n, c*along+base, across, l) {
					count++
				}
			}
		}
	}
	return count
}

// inFinder reports whether (a, b) (in either order) lies in one of the three
// finder patterns.
func inFinder(a, b, n int) bool {
	return a < 7 && b < 7 || a >= n-7 && b < 7 || a < 7 && b >= n-7
}

// crossOK applies ZXing's finder ratio test to the runs through module p
// along stride (pos is p's coordinate on that axis): dark run containing p,
// then light and dark runs on both sides, the outside being light. The total
// must also be within 40% of the 7 modules seen across.
func crossOK(m []byte, n, p, stride, pos int) bool {
	at := func(i int) byte { // module i on the line, light outside
		if i < 0 || i >= n {
			return 0
		}
		return m[p+(i-pos)*stride]
	}
	if at(pos) != 1 {
		return false
	}
	var r [5]int
	lo := pos
	for at(lo-1) == 1 {
		lo--
	}
	hi := pos
	for at(hi+1) == 1 {
		hi++
	}
	r[2] = hi - lo + 1
	i := lo - 1
	for ; i >= 0 && at(i) == 0; i-- {
		r[1]++
	}
	if i < 0 {
		return false // light up to the edge: no outer dark run
	}
	for ; at(i) == 1; i-- {
		r[0]++
	}
	i = hi + 1
	for ; i < n && at(i) == 0; i++ {
		r[3]++
	}
	if i >= n {
		return false
	}
	for ; at(i) == 1; i++ {
		r[4]++
	}
	return ratioOK(r)
}

// The same scores on a bit-packed symbol, for sizes up to 64 (versions 1–11,
// which covers every BR Code brcode.Encode can build): rows[y] bit x and
// cols[x] bit y are the module at column x, row y. Each line is scored with a
// handful of word operations instead of a branch per module. It must agree
// with penalty exactly; a test checks that on random symbols.

// fillLow returns v<<k with the k vacated low bits set (light outside).
func fillLow(v uint64, k uint) uint64 { return v<<k | (1<<k - 1) }

// fillHigh returns v>>k with the k vacated high bits set (light outside).
func fillHigh(v uint64, k uint) uint64 { return v>>k | ^(^uint64(0) >> k) }

func penaltyBits(rows, cols *[64]uint64, n int) int {
	full := ^uint64(0) >> (64 - n)
	score, dark := 0, 0
	for y := 0; y < n; y++ {
		r := rows[y]
		score += lineBits(r, full) + lineBits(cols[y], full)
		dark += bits.OnesCount64(r)
		if y+1 < n {
			same := ^(r ^ rows[y+1])
			h := ^(r ^ (r >> 1))
			score += penaltyBlock * bits.OnesCount64(same&(same>>1)&h&(full>>1))
		}
	}
	total := n * n
	k := (abs(dark*20-total*10)+total-1)/total - 1
	score += k * penaltyBalance
	score += (falseFindersBits(rows, cols, n) + falseFindersBits(cols, rows, n)) * penaltyFalseFinder
	return score
}

// finderCore has bit s set where modules s..s+6 read 1011101.
func finderCore(dark, light uint64) uint64 {
	return dark & (light >> 1) & (dark >> 2) & (dark >> 3) & (dark >> 4) & (light >> 5) & (dark >> 6)
}

// lineBits is linePenalty for one packed line of n modules (full = n ones).
func lineBits(dark, full uint64) int {
	light := ^dark // modules past n read light
	lt := light & full
	a1 := dark & (dark >> 1) & (dark >> 2) & (dark >> 3) & (dark >> 4) // starts of 5 dark
	a0 := lt & (lt >> 1) & (lt >> 2) & (lt >> 3) & (lt >> 4)           // starts of 5 light
	// A run of r ≥ 5 scores 3+(r-5) = (r-4) run starts + 2 for its first.
	score := bits.OnesCount64(a1) + 2*bits.OnesCount64(a1&^(a1<<1)) +
		bits.OnesCount64(a0) + 2*bits.OnesCount64(a0&^(a0<<1))
	p := finderCore(dark, light)
	before := fillLow(light, 1) & fillLow(light, 2) & fillLow(light, 3) & fillLow(light, 4)
	after := fillHigh(light, 7) & fillHigh(light, 8) & fillHigh(light, 9) & fillHigh(light, 10)
	score += penaltyFinderLike * (bits.OnesCount64(p&before) + bits.OnesCount64(p&after))
	return score
}

// falseFindersBits is falseFinders scanning lines (rows or columns) with
// cross, the other orientation, for the check through the centre.
func falseFindersBits(lines, cross *[64]uint64, n int) int {
	count := 0
	for l := 0; l < n; l++ {
		dark := lines[l]
		light := ^dark
		f := finderCore(dark, light) & fillLow(light, 1) & fillHigh(light, 7)
		for f != 0 {
			s := bits.TrailingZeros64(f)
			f &= f - 1
			c := s + 3
			if !inFinder(c, l, n) && crossOKBits(cross[c], n, l) {
				count++
			}
		}
	}
	return count
}

// crossOKBits is crossOK on a packed line.
func crossOKBits(line uint64, n, pos int) bool {
	at := func(i int) bool { return i >= 0 && i < n && line>>i&1 != 0 }
	if !at(pos) {
		return false
	}
	var r [5]int
	lo, hi := pos, pos
	for at(lo - 1) {
		lo--
	}
	for at(hi + 1) {
		hi++
	}
	r[2] = hi - lo + 1
	i := lo - 1
	for ; i >= 0 && !at(i); i-- {
		r[1]++
	}
	if i < 0 {
		return false
	}
	for ; at(i); i-- {
		r[0]++
	}
	i = hi + 1
	for ; i < n && !at(i); i++ {
		r[3]++
	}
	if i >= n {
		return false
	}
	for ; at(i); i++ {
		r[4]++
	}
	return ratioOK(r)
}

// ratioOK is ZXing's finder pattern ratio test on run lengths in modules,
// plus its check that the total is within 40% of the 7 modules seen across.
func ratioOK(r [5]int) bool {
	t := r[0] + r[1] + r[2] + r[3] + r[4]
	if 5*abs(t-7) >= 2*7 {
		return false
	}
	// |t/7 - r| < t/14 for the 1-module runs, |3t/7 - r| < 3t/14 for the
	// centre, scaled by 14.
	for _, k := range [4]int{0, 1, 3, 4} {
		if abs(2*t-14*r[k]) >= t {
			return false
		}
	}
	return abs(6*t-14*r[2]) < 3*t
}
