package ratelimittest

import (
	"testing"

	"github.com/pixgate/pixgate/internal/ratelimit"
)

// TestMemoryConforms checks the tables themselves against the reference
// implementation.
func TestMemoryConforms(t *testing.T) {
	t.Parallel()
	Exercise(t, func(_ *testing.T, limit int) ratelimit.Limiter { return ratelimit.NewMemory(limit) })
}
