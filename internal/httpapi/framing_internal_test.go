package httpapi

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestFramerSplitAnywhere: whatever the sizes of the reads, the framer
// hands net/http every byte of well-framed requests unchanged (bodies by
// length and by chunks that hold header-like text), and replaces a block
// with both framings, and everything after it, by the refused request.
func TestFramerSplitAnywhere(t *testing.T) {
	lookalike := "x\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n"
	good := "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n" +
		"POST /a HTTP/1.1\r\nHost: x\r\nContent-Length: 52\r\n\r\n" + lookalike +
		"POST /b HTTP/1.1\nHost: x\ntransfer-encoding: chunked\n\n" + "34;e\r\n" + lookalike + "\r\n0\r\nX-T: 1\r\n\r\n" +
		"POST /c HTTP/1.0\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n" +
		"GET /d HTTP/1.1\r\nHost: x\r\n\r\n"
	bad := "POST /e HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\nGET /smuggled HTTP/1.1\r\n\r\n"
	for _, size := range []int{1, 2, 3, 7, 64, 4096} {
		var f framer
		var out []byte
		in := good + bad
		for len(in) > 0 {
			n := min(size, len(in))
			out = f.feed(out, []byte(in[:n]))
			in = in[n:]
		}
		require.Equal(t, good+refusedRequest, string(out), "reads of %d bytes", size)
		require.True(t, f.refused)
		require.False(t, strings.Contains(string(out), "smuggled"))
	}
}
