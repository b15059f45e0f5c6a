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

// penaltyBits is penalty on the bit-packed symbol.
func penaltyBits(rows, cols *[64]uint64, n int) int {
	return scoreBits(rows, cols, n, int(^uint(0)>>1))
}

// scoreBits is penaltyBits, except that it may stop as soon as the score
// reaches bound and then return a partial score, at least bound. The
// balance (N4) is counted first and everything after it only adds, so a
// partial score never exceeds the total.
func scoreBits(rows, cols *[64]uint64, n, bound int) int {
	full := ^uint64(0) >> (64 - n)
	dark := 0
	for _, r := range rows[:n] {
		dark += bits.OnesCount64(r)
	}
	total := n * n
	k := (abs(dark*20-total*10)+total-1)/total - 1
	score := k * penaltyBalance
	for y := 0; y < n; y++ {
		r := rows[y]
		line, cand := lineBits(r, full)
		score += line
		if cand != 0 {
			score += penaltyFalseFinder * lineFalseFinders(cand, cols, n, y)
		}
		if y+1 < n {
			same := ^(r ^ rows[y+1])
			h := ^(r ^ (r >> 1))
			score += penaltyBlock * bits.OnesCount64(same&(same>>1)&h&(full>>1))
		}
		if score >= bound {
			return score
		}
	}
	for x := 0; x < n; x++ {
		line, cand := lineBits(cols[x], full)
		score += line
		if cand != 0 {
			score += penaltyFalseFinder * lineFalseFinders(cand, rows, n, x)
		}
		if score >= bound {
			return score
		}
	}
	return score
}

// lineBits is linePenalty for one packed line of n modules (full = n ones):
// runs (N1) and finder-like patterns (N3). It also returns the false finder
// candidates of the line for lineFalseFinders: bit s set where modules
// s-1..s+7 read 010111010, the outside counting as light.
func lineBits(dark, full uint64) (int, uint64) {
	light := ^dark // modules past n read light
	lt := light & full
	// Starts of 5 same-colour modules; a run of r ≥ 5 scores 3+(r-5) =
	// (r-4) starts + 2 for its first. A start of 5 dark is never next to
	// one of 5 light, so both colours are counted at once.
	d2 := dark & (dark >> 1)
	d4 := d2 & (d2 >> 2)
	l2 := lt & (lt >> 1)
	l4 := l2 & (l2 >> 2)
	a := d4&(dark>>4) | l4&(lt>>4)
	score := bits.OnesCount64(a) + 2*bits.OnesCount64(a&^(a<<1))
	// Bit s of p: modules s..s+6 read 1011101 (so s+6 < n).
	p := dark & (light >> 1) & (d2 >> 2) & (dark >> 4) & (light >> 5) & (dark >> 6)
	if p == 0 {
		return score, 0
	}
	// before: s-4..s-1 light, the outside (s-k < 0) counting as light.
	e := light<<4 | 0xF
	e2 := e & (e >> 1)
	before := e2 & (e2 >> 2)
	// after: s+7..s+10 light, bits 64 and up counting as light.
	h2 := light & (light>>1 | 1<<63)
	h4 := h2 & (h2>>2 | 3<<62)
	const top7 = ^(^uint64(0) >> 7)
	after := h4>>7 | top7
	score += penaltyFinderLike * (bits.OnesCount64(p&before) + bits.OnesCount64(p&after))
	return score, p & (light<<1 | 1) & (light>>7 | top7)
}

// falseFindersBits is falseFinders scanning lines (rows or columns) with
// cross, the other orientation, for the check through the centre.
func falseFindersBits(lines, cross *[64]uint64, n int) int {
	full := ^uint64(0) >> (64 - n)
	count := 0
	for l := 0; l < n; l++ {
		if _, cand := lineBits(lines[l], full); cand != 0 {
			count += lineFalseFinders(cand, cross, n, l)
		}
	}
	return count
}

// lineFalseFinders counts the false finders of line l among its candidates
// cand (from lineBits): the centres outside the finder patterns whose line
// across, in cross, passes crossOKBits.
func lineFalseFinders(cand uint64, cross *[64]uint64, n, l int) int {
	count := 0
	for cand != 0 {
		c := bits.TrailingZeros64(cand) + 3 // centre
		cand &= cand - 1
		if !inFinder(c, l, n) && crossOKBits(cross[c&63], n, l) {
			count++
		}
	}
	return count
}

// crossOKBits is crossOK on a packed line of n modules (bits n and up
// zero), with the runs measured by bit scans instead of module by module.
func crossOKBits(line uint64, n, pos int) bool {
	if line>>pos&1 == 0 {
		return false
	}
	out := ^(^uint64(0) >> (64 - n)) // past the line
	light := ^line &^ out
	// up(stop, i): modules i, i+1, … before the first of stop or the end.
	up := func(stop uint64, i int) int { return min(bits.TrailingZeros64((stop|out)>>i), n-i) }
	// down(stop, i): modules i, i-1, … before the first of stop or the
	// start (none if i < 0).
	down := func(stop uint64, i int) int {
		return bits.LeadingZeros64(stop<<(63-i) | (uint64(1)<<(63-i) - 1))
	}
	var r [5]int
	lo := pos - down(light, pos) + 1
	hi := pos + up(light, pos) - 1
	r[2] = hi - lo + 1
	r[1] = down(line, lo-1)
	i := lo - 1 - r[1]
	if i < 0 {
		return false // light up to the edge: no outer dark run
	}
	r[0] = down(light, i)
	r[3] = up(line, hi+1)
	i = hi + 1 + r[3]
	if i >= n {
		return false
	}
	r[4] = up(light, i)
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
