package qr

import "math/bits"

// This file keeps, for the tests only, the encoder as it was before the
// matrix step was optimised (segmentation DP, bit-by-bit data writer,
// log/exp Reed-Solomon, byte placement, mask choice on bitboards rebuilt
// module by module). TestMatchesReference compares the production encoder
// with it bit for bit. Do not optimise this file.

// refScratch is the old scratch.
type refScratch struct {
	from  []byte
	modes []byte
	data  []byte
	ecc   []byte
	all   []byte
	mod   []byte
	try   []byte

	modRows, modCols, rows, cols [64]uint64
}

// refMaskBoards returns the masks of t bit-packed by row and by column, as
// the old template held them.
func refMaskBoards(t *template) (maskRows, maskCols [8][64]uint64) {
	n := t.size
	for m := 0; m < 8; m++ {
		mm := t.masks[m]
		for y := 0; y < n; y++ {
			for x := 0; x < n; x++ {
				b := uint64(mm[y*n+x])
				maskRows[m][y] |= b << x
				maskCols[m][x] |= b << y
			}
		}
	}
	return maskRows, maskCols
}

// refEncodeMatrix is the old encodeMatrix: the symbol as size*size bytes,
// mask -1 to choose the mask, 0–7 to force one.
func (s *refScratch) refEncodeMatrix(content string, mask int) ([]byte, int, error) {
	ver, err := s.refSegment(content)
	if err != nil {
		return nil, 0, err
	}
	s.refWriteData(content, ver)
	s.refAddECC(ver)
	t := getTemplate(ver)
	n := t.size
	s.mod = resize(s.mod, n*n)
	copy(s.mod, t.base)
	all := s.all
	for i, pos := range t.order {
		if i>>3 < len(all) {
			s.mod[pos] = all[i>>3] >> (7 - i&7) & 1
		}
	}

	s.try = resize(s.try, n*n)
	switch {
	case mask >= 0: // forced
	case n <= 64:
		mask = s.refChooseMaskBits(t)
	default:
		mask = s.refChooseMaskBytes(t)
	}
	s.refApplyMask(t, mask)
	return s.try, n, nil
}

// refChooseMaskBytes scores the eight masks with penalty and returns the best,
// the lowest mask number on a tie.
func (s *refScratch) refChooseMaskBytes(t *template) int {
	best, bestScore := 0, -1
	for m := 0; m < 8; m++ {
		s.refApplyMask(t, m)
		if score := penalty(s.try, t.size); bestScore < 0 || score < bestScore {
			best, bestScore = m, score
		}
	}
	return best
}

// refApplyMask writes into s.try the placed symbol s.mod under mask m, with the
// format information for m.
func (s *refScratch) refApplyMask(t *template, m int) {
	mm := t.masks[m]
	try := s.try
	for i := range try {
		try[i] = s.mod[i] ^ mm[i]
	}
	bits := formatBits[m]
	for i := 0; i < 15; i++ {
		b := byte(bits>>i) & 1
		try[t.format[i][0]] = b
		try[t.format[i][1]] = b
	}
}

// refChooseMaskBits scores the eight masks on the bit-packed symbol (sizes up
// to 64) and returns the best, the lowest mask number on a tie, exactly as
// refChooseMaskBytes would.
func (s *refScratch) refChooseMaskBits(t *template) int {
	n := t.size
	s.modRows, s.modCols = [64]uint64{}, [64]uint64{}
	for y := 0; y < n; y++ {
		row := s.mod[y*n : y*n+n]
		for x, v := range row {
			s.modRows[y] |= uint64(v) << x
			s.modCols[x] |= uint64(v) << y
		}
	}
	maskRows, maskCols := refMaskBoards(t)
	best, bestScore := 0, -1
	for m := 0; m < 8; m++ {
		mr, mc := &maskRows[m], &maskCols[m]
		for i := 0; i < n; i++ {
			s.rows[i] = s.modRows[i] ^ mr[i]
			s.cols[i] = s.modCols[i] ^ mc[i]
		}
		fb := formatBits[m]
		for i := 0; i < 15; i++ {
			b := uint64(fb>>i) & 1
			for _, p := range t.format[i] {
				x, y := int(p)%n, int(p)/n
				s.rows[y] = s.rows[y]&^(1<<x) | b<<x
				s.cols[x] = s.cols[x]&^(1<<y) | b<<y
			}
		}
		if score := refPenaltyBits(&s.rows, &s.cols, n); bestScore < 0 || score < bestScore {
			best, bestScore = m, score
		}
	}
	return best
}

// refSegment chooses the smallest version that holds content and, for it, the
// segmentation (mode per byte, in s.modes) with the fewest bits. The optimal
// segmentation depends only on the version class (the count field widths).
func (s *refScratch) refSegment(content string) (int, error) {
	n := len(content)
	s.from = resize(s.from, 3*n)
	s.modes = resize(s.modes, n)
	for class := 0; class < 3; class++ {
		bits := s.refChooseModes(content, class)
		for ver := classVersions[class][0]; ver <= classVersions[class][1]; ver++ {
			if bits <= numDataCodewords(ver)*8 {
				return ver, nil
			}
		}
	}
	return 0, errTooLong
}

// refChooseModes runs the shortest-path segmentation (as in Project Nayuki's QR
// library) for a version class, fills s.modes and returns the bit count.
// Costs are in sixths of a bit: numeric 10/3 bits a digit, alphanumeric 11/2
// a character, byte 8.
func (s *refScratch) refChooseModes(content string, class int) int {
	const inf = 1 << 30
	var head [3]int
	for m := range head {
		head[m] = (4 + countBits[m][class]) * 6
	}
	prev := head
	for i := 0; i < len(content); i++ {
		c := content[i]
		from := s.from[i*3 : i*3+3]
		cur := [3]int{inf, inf, inf}
		from[0], from[1], from[2] = 0xFF, 0xFF, 0xFF
		cur[modeByte], from[modeByte] = prev[modeByte]+48, modeByte
		if alnumValue[c] >= 0 {
			cur[modeAlnum], from[modeAlnum] = prev[modeAlnum]+33, modeAlnum
		}
		if '0' <= c && c <= '9' {
			cur[modeNumeric], from[modeNumeric] = prev[modeNumeric]+20, modeNumeric
		}
		// A new segment may start after byte i, in any mode.
		ended := cur
		endedFrom := [3]byte{from[0], from[1], from[2]}
		for to := 0; to < 3; to++ {
			for fm := 0; fm < 3; fm++ {
				if endedFrom[fm] == 0xFF {
					continue
				}
				cost := (ended[fm]+5)/6*6 + head[to]
				if from[to] == 0xFF || cost < cur[to] {
					cur[to], from[to] = cost, endedFrom[fm]
				}
			}
		}
		prev = cur
	}
	state := 0
	for m := 1; m < 3; m++ {
		if prev[m] < prev[state] {
			state = m
		}
	}
	total := (prev[state] + 5) / 6
	for i := len(content) - 1; i >= 0; i-- {
		state = int(s.from[i*3+state])
		s.modes[i] = byte(state)
	}
	return total
}

// refBitWriter appends bits, most significant first, to a zeroed buffer.
type refBitWriter struct {
	buf []byte
	n   int
}

func (w *refBitWriter) write(v uint32, bits int) {
	for i := bits - 1; i >= 0; i-- {
		if v>>i&1 != 0 {
			w.buf[w.n>>3] |= 0x80 >> (w.n & 7)
		}
		w.n++
	}
}

// refWriteData builds the data codewords of version ver from content and
// s.modes: segments, terminator, padding to the byte, pad codewords.
func (s *refScratch) refWriteData(content string, ver int) {
	capacity := numDataCodewords(ver)
	s.data = resize(s.data, capacity)
	clear(s.data)
	w := refBitWriter{buf: s.data}
	class := 0
	if ver >= 27 {
		class = 2
	} else if ver >= 10 {
		class = 1
	}
	for i := 0; i < len(content); {
		mode := int(s.modes[i])
		j := i + 1
		for j < len(content) && int(s.modes[j]) == mode {
			j++
		}
		seg := content[i:j]
		w.write(modeIndicator[mode], 4)
		w.write(uint32(len(seg)), countBits[mode][class])
		switch mode {
		case modeNumeric:
			for k := 0; k < len(seg); k += 3 {
				v, nd := uint32(0), 0
				for ; nd < 3 && k+nd < len(seg); nd++ {
					v = v*10 + uint32(seg[k+nd]-'0')
				}
				w.write(v, nd*3+1)
			}
		case modeAlnum:
			k := 0
			for ; k+1 < len(seg); k += 2 {
				w.write(uint32(alnumValue[seg[k]])*45+uint32(alnumValue[seg[k+1]]), 11)
			}
			if k < len(seg) {
				w.write(uint32(alnumValue[seg[k]]), 6)
			}
		default:
			for k := 0; k < len(seg); k++ {
				w.write(uint32(seg[k]), 8)
			}
		}
		i = j
	}
	w.n += min(4, capacity*8-w.n) // terminator
	w.n = (w.n + 7) &^ 7
	for pad := byte(0xEC); w.n < capacity*8; pad ^= 0xEC ^ 0x11 {
		s.data[w.n>>3] = pad
		w.n += 8
	}
}

// refAddECC splits s.data into the version's blocks, computes each block's
// Reed-Solomon codewords and interleaves everything into s.all.
func (s *refScratch) refAddECC(ver int) {
	numBlocks, eccLen := numBlocksM[ver], eccPerBlockM[ver]
	raw := numRawDataModules(ver) / 8
	numShort := numBlocks - raw%numBlocks
	shortData := raw/numBlocks - eccLen
	div := rsDivisors[eccLen]

	s.ecc = resize(s.ecc, numBlocks*eccLen)
	s.all = resize(s.all, raw)[:0]
	k := 0
	for b := 0; b < numBlocks; b++ {
		dl := shortData
		if b >= numShort {
			dl++
		}
		refRsRemainder(s.data[k:k+dl], div, s.ecc[b*eccLen:(b+1)*eccLen])
		k += dl
	}
	for i := 0; i <= shortData; i++ {
		off := 0
		for b := 0; b < numBlocks; b++ {
			dl := shortData
			if b >= numShort {
				dl++
			}
			if i < dl {
				s.all = append(s.all, s.data[off+i])
			}
			off += dl
		}
	}
	for i := 0; i < eccLen; i++ {
		for b := 0; b < numBlocks; b++ {
			s.all = append(s.all, s.ecc[b*eccLen+i])
		}
	}
}

// refRsRemainder writes into out (len = degree) the remainder of data·x^degree
// divided by the generator div: the block's error correction codewords.
func refRsRemainder(data, div, out []byte) {
	clear(out)
	for _, b := range data {
		factor := b ^ out[0]
		copy(out, out[1:])
		out[len(out)-1] = 0
		if factor == 0 {
			continue
		}
		lf := int(gfLog[factor])
		for i, d := range div {
			if d != 0 {
				out[i] ^= gfExp[int(gfLog[d])+lf]
			}
		}
	}
}

// refFillLow returns v<<k with the k vacated low bits set (light outside).
func refFillLow(v uint64, k uint) uint64 { return v<<k | (1<<k - 1) }

// refFillHigh returns v>>k with the k vacated high bits set (light outside).
func refFillHigh(v uint64, k uint) uint64 { return v>>k | ^(^uint64(0) >> k) }

// refPenaltyBits is penalty on the bit-packed symbol.
func refPenaltyBits(rows, cols *[64]uint64, n int) int {
	full := ^uint64(0) >> (64 - n)
	score, dark := 0, 0
	for y := 0; y < n; y++ {
		r := rows[y]
		score += refLineBits(r, full) + refLineBits(cols[y], full)
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
	score += (refFalseFindersBits(rows, cols, n) + refFalseFindersBits(cols, rows, n)) * penaltyFalseFinder
	return score
}

// refFinderCore has bit s set where modules s..s+6 read 1011101.
func refFinderCore(dark, light uint64) uint64 {
	return dark & (light >> 1) & (dark >> 2) & (dark >> 3) & (dark >> 4) & (light >> 5) & (dark >> 6)
}

// refLineBits is linePenalty for one packed line of n modules (full = n ones).
func refLineBits(dark, full uint64) int {
	light := ^dark // modules past n read light
	lt := light & full
	a1 := dark & (dark >> 1) & (dark >> 2) & (dark >> 3) & (dark >> 4) // starts of 5 dark
	a0 := lt & (lt >> 1) & (lt >> 2) & (lt >> 3) & (lt >> 4)           // starts of 5 light
	// A run of r ≥ 5 scores 3+(r-5) = (r-4) run starts + 2 for its first.
	score := bits.OnesCount64(a1) + 2*bits.OnesCount64(a1&^(a1<<1)) +
		bits.OnesCount64(a0) + 2*bits.OnesCount64(a0&^(a0<<1))
	p := refFinderCore(dark, light)
	before := refFillLow(light, 1) & refFillLow(light, 2) & refFillLow(light, 3) & refFillLow(light, 4)
	after := refFillHigh(light, 7) & refFillHigh(light, 8) & refFillHigh(light, 9) & refFillHigh(light, 10)
	score += penaltyFinderLike * (bits.OnesCount64(p&before) + bits.OnesCount64(p&after))
	return score
}

// refFalseFindersBits is falseFinders scanning lines (rows or columns) with
// cross, the other orientation, for the check through the centre.
func refFalseFindersBits(lines, cross *[64]uint64, n int) int {
	count := 0
	for l := 0; l < n; l++ {
		dark := lines[l]
		light := ^dark
		f := refFinderCore(dark, light) & refFillLow(light, 1) & refFillHigh(light, 7)
		for f != 0 {
			s := bits.TrailingZeros64(f)
			f &= f - 1
			c := s + 3
			if !inFinder(c, l, n) && refCrossOKBits(cross[c], n, l) {
				count++
			}
		}
	}
	return count
}

// refCrossOKBits is crossOK on a packed line.
func refCrossOKBits(line uint64, n, pos int) bool {
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
