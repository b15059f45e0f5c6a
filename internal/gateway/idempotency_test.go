package gateway

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/internal/pix"
)

// TestIdempotencyErrorsNameTheKey pins the docs/api.md texts of the 422 and
// 409 for each key, and which key an earlier request was found by.
func TestIdempotencyErrorsNameTheKey(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		err     *pix.Error
		code    pix.Code
		message string
	}{
		{mismatch(byExternalID), pix.EIdempotencyMismatch, "external_id already used with different parameters"},
		{mismatch(byIdempotencyKey), pix.EIdempotencyMismatch, "Idempotency-Key already used with different parameters"},
		{inProgress(byExternalID), pix.EConflict, "A request with this external_id is in progress"},
		{inProgress(byIdempotencyKey), pix.EConflict, "A request with this Idempotency-Key is in progress"},
	} {
		require.Equal(t, tc.code, tc.err.Code, tc.message)
		require.Equal(t, tc.message, tc.err.Message)
	}

	prev := pix.Transaction{ExternalID: "ext-1"}
	require.Equal(t, byExternalID, foundBy(prev, "ext-1"), "external_id is looked up first")
	require.Equal(t, byIdempotencyKey, foundBy(prev, "ext-2"), "only the header matched")
	require.Equal(t, byIdempotencyKey, foundBy(prev, ""), "no external_id sent")
	require.Equal(t, byIdempotencyKey, foundBy(pix.Transaction{}, ""), "neither had one")
}
