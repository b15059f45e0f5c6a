package pix

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestIdempotencyErrorsNameTheKey pins the docs/api.md texts of the 422 and
// 409 for each key, and which key an earlier request was found by.
func TestIdempotencyErrorsNameTheKey(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		err     *Error
		code    Code
		message string
	}{
		{Mismatch(true), EIdempotencyMismatch, "external_id already used with different parameters"},
		{Mismatch(false), EIdempotencyMismatch, "Idempotency-Key already used with different parameters"},
		{InProgress(true), EConflict, "A request with this external_id is in progress"},
		{InProgress(false), EConflict, "A request with this Idempotency-Key is in progress"},
	} {
		require.Equal(t, tc.code, tc.err.Code, tc.message)
		require.Equal(t, tc.message, tc.err.Message)
	}

	require.True(t, ByExternalID("ext-1", "ext-1"), "external_id is looked up first")
	require.False(t, ByExternalID("ext-1", "ext-2"), "only the header matched")
	require.False(t, ByExternalID("ext-1", ""), "no external_id sent")
	require.False(t, ByExternalID("", ""), "neither had one")
}

// TestValidIdempotencyKey pins the header's form: 1–255 visible ASCII.
func TestValidIdempotencyKey(t *testing.T) {
	t.Parallel()
	require.True(t, ValidIdempotencyKey("k-1"))
	require.False(t, ValidIdempotencyKey(""))
	require.False(t, ValidIdempotencyKey("a b"))
	require.False(t, ValidIdempotencyKey(string(make([]byte, 256))))
	require.True(t, ValidIdempotencyKey(string(bytesOf('x', 255))))
}

func bytesOf(c byte, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = c
	}
	return b
}

// TestCanonicalID accepts only the lower-case 8-4-4-4-12 form.
func TestCanonicalID(t *testing.T) {
	t.Parallel()
	require.True(t, CanonicalID("0190a1b2-c3d4-4e5f-8a9b-0c1d2e3f4a5b"))
	for _, bad := range []string{"", "0190A1B2-C3D4-4E5F-8A9B-0C1D2E3F4A5B", "0190a1b2c3d44e5f8a9b0c1d2e3f4a5b",
		"0190a1b2-c3d4-4e5f-8a9b-0c1d2e3f4a5", "0190a1b2-c3d4-4e5f-8a9b_0c1d2e3f4a5b", "{190a1b2-c3d4-4e5f-8a9b-0c1d2e3f4a5b"} {
		require.False(t, CanonicalID(bad), bad)
	}
}
