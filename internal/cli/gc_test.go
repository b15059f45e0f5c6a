package cli

import (
	"os"
	"runtime/debug"
	"testing"

	"github.com/stretchr/testify/require"
)

// Not parallel: it changes the process's GC target and GOGC.
func TestTuneGC(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))

	t.Setenv("GOGC", "") // restored after the test
	require.NoError(t, os.Unsetenv("GOGC"))
	debug.SetGCPercent(100)
	tuneGC()
	require.Equal(t, gcPercent, debug.SetGCPercent(100), "without GOGC, serve and bench use gcPercent")

	t.Setenv("GOGC", "150")
	debug.SetGCPercent(150)
	tuneGC()
	require.Equal(t, 150, debug.SetGCPercent(100), "GOGC wins")
}
