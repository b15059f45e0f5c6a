package brcode

// crcTable is the byte-wise lookup table of CRC-16/CCITT-FALSE (polynomial
// 0x1021, MSB first).
var crcTable = func() (t [256]uint16) {
	for i := range t {
		c := uint16(i) << 8
		for range 8 {
			if c&0x8000 != 0 {
				c = c<<1 ^ 0x1021
			} else {
				c <<= 1
			}
		}
		t[i] = c
	}
	return t
}()

// CRC16 returns the CRC-16/CCITT-FALSE (poly 0x1021, init 0xFFFF, no
// reflection, no final XOR) of data: the checksum a BR Code carries in field
// 63. CRC16([]byte("123456789")) is 0x29B1.
func CRC16(data []byte) uint16 {
	crc := uint16(0xFFFF)
	for _, b := range data {
		crc = crc<<8 ^ crcTable[byte(crc>>8)^b]
	}
	return crc
}

// crc16String is CRC16 over a string, without converting it to []byte.
func crc16String(s string) uint16 {
	crc := uint16(0xFFFF)
	for i := 0; i < len(s); i++ {
		crc = crc<<8 ^ crcTable[byte(crc>>8)^s[i]]
	}
	return crc
}

const upperHex = "0123456789ABCDEF"

// appendCRC appends crc as four upper-case hexadecimal digits.
func appendCRC(b []byte, crc uint16) []byte {
	return append(b, upperHex[crc>>12], upperHex[crc>>8&0xF], upperHex[crc>>4&0xF], upperHex[crc&0xF])
}

// parseHex4 reads four hexadecimal digits of either case.
func parseHex4(s string) (uint16, bool) {
	if len(s) != 4 {
		return 0, false
	}
	var v uint16
	for i := 0; i < 4; i++ {
		c := s[i]
		var d byte
		switch {
		case '0' <= c && c <= '9':
			d = c - '0'
		case 'A' <= c && c <= 'F':
			d = c - 'A' + 10
		case 'a' <= c && c <= 'f':
			d = c - 'a' + 10
		default:
			return 0, false
		}
		v = v<<4 | uint16(d)
	}
	return v, true
}
