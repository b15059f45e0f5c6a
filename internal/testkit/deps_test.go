package testkit_test

import (
	"os/exec"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestNoBrowserInTestkit: testkit does not link chromedp, so the tests that
// import it and drive no browser do not build it; testkit/chromium does.
func TestNoBrowserInTestkit(t *testing.T) {
	t.Parallel()
	deps := func(pkg string) string {
		out, err := exec.Command("go", "list", "-deps", pkg).CombinedOutput()
		require.NoError(t, err, "%s", out)
		return string(out)
	}
	require.NotContains(t, deps("github.com/pixgate/pixgate/internal/testkit"), "github.com/chromedp/")
	require.Contains(t, deps("github.com/pixgate/pixgate/internal/testkit/chromium"), "github.com/chromedp/chromedp\n")
}
