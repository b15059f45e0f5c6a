package httpapi

import (
	"bytes"
	"strconv"
	"strings"
)

// A request with both Content-Length and Transfer-Encoding is framed one
// way by net/http (by its chunks; it drops Content-Length and keeps the
// connection) and may be framed the other way by a proxy in front (by its
// length), which lets a second, smuggled request through behind the
// proxy's back. RFC 9112 §6.1 lets a server refuse such a request and asks
// it to close the connection. net/http hides the Content-Length from the
// handler, so the refusal happens here, on the bytes of the connection:
// framer follows the requests on it as net/http frames them (header block,
// then a body by Content-Length or by chunks) and holds each header block
// back until it is whole. A block with both fields is never handed to
// net/http: in its place net/http reads a request line it refuses with a
// 400 (after answering any earlier request of the connection), then the end
// of the stream, so the connection closes and nothing after is read. The
// connection's writer turns that 400 into the JSON error naming the reason.

// maxHeldHeader bounds the header block held back, above the server's
// MaxHeaderBytes (32 KiB, plus net/http's 4 KiB of slack): a longer block
// is handed over as it is and the stream ends after it, so net/http
// answers 431 and closes, and no request hides behind a long header.
const maxHeldHeader = 64<<10 + 4<<10

// maxChunkLine is the longest chunk-size line net/http reads.
const maxChunkLine = 4096

// refusedRequest is what net/http reads in place of a refused header block:
// a request line it cannot parse, answered with a plain 400.
const refusedRequest = "REFUSED\r\n\r\n"

// smuggleReason is the text of the 400 for both framings at once.
const smuggleReason = "Content-Length and Transfer-Encoding together"

type frameState int

const (
	frameHeader    frameState = iota // reading a header block
	frameBody                        // remain bytes of a body by length
	frameChunkLine                   // a chunk-size line
	frameChunkData                   // remain bytes of a chunk, then its CRLF
	frameTrailer                     // the trailer lines after the last chunk
	framePass                        // net/http will close: pass the rest as it is
	frameEnd                         // nothing more reaches net/http
)

// framer follows the requests on one connection. Not safe for concurrent
// use: net/http reads a connection from one goroutine at a time.
type framer struct {
	state   frameState
	hold    []byte // the header block (or chunk or trailer line) so far
	remain  int64  // bytes left of a body or chunk, CRLF included for a chunk
	refused bool   // a header block with both framings was refused
}

// feed takes the next bytes read from the client and appends to out what
// net/http may read of them now.
func (f *framer) feed(out, in []byte) []byte {
	for len(in) > 0 {
		switch f.state {
		case framePass:
			return append(out, in...)
		case frameEnd:
			return out
		case frameBody, frameChunkData:
			n := int64(len(in))
			if n > f.remain {
				n = f.remain
			}
			out = append(out, in[:n]...)
			in = in[n:]
			if f.remain -= n; f.remain > 0 {
				continue
			}
			if f.state == frameBody {
				f.state = frameHeader
			} else {
				f.state = frameChunkLine
			}
		default:
			// A line: a header block's is held back, a chunk's or
			// trailer's passes at once.
			i := bytes.IndexByte(in, '\n')
			line := in
			if i >= 0 {
				line = in[:i+1]
			}
			in = in[len(line):]
			if f.state != frameHeader {
				out = append(out, line...)
			}
			f.hold = append(f.hold, line...)
			if i < 0 {
				if f.state == frameHeader && len(f.hold) > maxHeldHeader {
					out = append(out, f.hold...)
					f.hold, f.state = nil, frameEnd
				} else if f.state != frameHeader && len(f.hold) > maxChunkLine {
					f.hold, f.state = nil, framePass
				}
				continue
			}
			switch f.state {
			case frameHeader:
				out = f.headerLine(out)
			case frameChunkLine:
				f.chunkLine()
			case frameTrailer:
				if len(bytes.TrimRight(f.hold, "\r\n")) == 0 {
					f.state = frameHeader
				}
				f.hold = f.hold[:0]
			}
		}
	}
	return out
}

// headerLine handles a whole line of a header block in f.hold: at the
// block's empty last line, it hands the block over (or the refusal) and
// moves to its body.
func (f *framer) headerLine(out []byte) []byte {
	last := f.hold[:len(f.hold)-1]
	if j := bytes.LastIndexByte(last, '\n'); j >= 0 {
		last = last[j+1:]
	}
	if len(bytes.TrimSuffix(last, []byte("\r"))) != 0 {
		if len(f.hold) > maxHeldHeader {
			out = append(out, f.hold...)
			f.hold, f.state = nil, frameEnd
		}
		return out
	}
	block := string(f.hold)
	f.hold = f.hold[:0]
	lines := strings.Split(block, "\n")
	var length string
	var hasLength, chunked bool
	for _, l := range lines[1:] {
		name, value, ok := strings.Cut(strings.TrimSuffix(l, "\r"), ":")
		switch {
		case !ok:
		case strings.EqualFold(name, "Content-Length"):
			if !hasLength {
				length = strings.TrimSpace(value)
			}
			hasLength = true
		case strings.EqualFold(name, "Transfer-Encoding"):
			chunked = true
		}
	}
	if hasLength && chunked {
		f.refused, f.state = true, frameEnd
		return append(out, refusedRequest...)
	}
	out = append(out, block...)
	// net/http ignores Transfer-Encoding on an HTTP/1.0 request.
	if chunked && !strings.HasSuffix(strings.TrimSuffix(lines[0], "\r"), " HTTP/1.0") {
		f.state = frameChunkLine
		return out
	}
	if !hasLength {
		return out
	}
	n, err := strconv.ParseUint(length, 10, 63)
	switch {
	case err != nil:
		f.state = framePass // net/http refuses it and closes
	case n > 0:
		f.state, f.remain = frameBody, int64(n)
	}
	return out
}

// chunkLine reads the chunk-size line in f.hold as net/http does.
func (f *framer) chunkLine() {
	line, ok := bytes.CutSuffix(f.hold, []byte("\r\n"))
	f.hold = f.hold[:0]
	if !ok || bytes.IndexByte(line, '\r') >= 0 {
		f.state = framePass
		return
	}
	line, _, _ = bytes.Cut(bytes.TrimRight(line, " \t"), []byte(";"))
	n, err := strconv.ParseUint(string(line), 16, 63)
	switch {
	case err != nil || len(line) > 16:
		f.state = framePass
	case n == 0:
		f.state = frameTrailer
	default:
		f.state, f.remain = frameChunkData, int64(n)+2
	}
}
