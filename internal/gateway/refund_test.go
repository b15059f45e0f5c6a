package gateway_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/testkit"
)

// TestRefundLookupOfMalformedIDs: an id that cannot be a refund's is not
// found, on both databases, without reaching the database — PostgreSQL
// refuses a NUL byte or invalid UTF-8 with an error that would be a 500.
func TestRefundLookupOfMalformedIDs(t *testing.T) {
	t.Parallel()
	testkit.Databases(t, func(t *testing.T, open testkit.Opener) {
		ctx := context.Background()
		s, c := sandboxClient(t, open(t), time.Second, pix.FeeRule{}, pix.FeeRule{})
		for _, id := range []string{"", "x", "\x00", "\xff\xfe", "0b7c3a52-2222-4222-8222-22222222222\x00",
			"0B7C3A52-2222-4222-8222-222222222222", "{0b7c3a52-2222-4222-8222-222222222222}", "0b7c3a52-2222-4222-8222-222222222222"} {
			_, err := s.Refund(ctx, c, id)
			require.Equal(t, pix.ENotFound, pix.ErrorCode(err), "%q: %v", id, err)
		}
	})
}
