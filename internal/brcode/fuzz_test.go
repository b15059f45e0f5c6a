package brcode

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// FuzzParse checks that Parse never panics and that whatever it accepts
// survives String: the re-encoded text parses to an equal Code, equals the
// input but for the CRC's case, and the typed view, when there is one,
// encodes back to a code carrying the same payload. Seeds live in
// testdata/fuzz/FuzzParse.
func FuzzParse(f *testing.F) {
	f.Add(golden)
	f.Fuzz(func(t *testing.T, s string) {
		c, err := Parse(s)
		if err != nil {
			require.Nil(t, c)
			return
		}
		out := c.String()
		require.Equal(t, s[:len(s)-4], out[:len(out)-4])
		c2, err := Parse(out)
		require.NoError(t, err)
		require.Equal(t, c, c2)
		require.Equal(t, out, c2.String())

		p, err := c.Payload()
		if err != nil {
			require.ErrorIs(t, err, ErrNotPix)
			return
		}
		enc, err := Encode(p)
		if err != nil {
			require.ErrorIs(t, err, ErrInvalidPayload)
			return
		}
		c3, err := Parse(enc)
		require.NoError(t, err, enc)
		p3, err := c3.Payload()
		require.NoError(t, err)
		p.MerchantName = Sanitize(p.MerchantName, MaxMerchantName)
		p.MerchantCity = Sanitize(p.MerchantCity, MaxMerchantCity)
		p.Description = Sanitize(p.Description, 0)
		require.Equal(t, p, p3)
	})
}
