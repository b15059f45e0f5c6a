package testkit

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// Binary is the pixgate binary built once per test binary, for tests that
// run it as a process. Declare one per package and call Remove from
// TestMain after m.Run.
type Binary struct {
	once      sync.Once
	dir, path string
	err       error
}

// Path builds cmd/pixgate on first use and returns the binary's path.
func (b *Binary) Path(t testing.TB) string {
	t.Helper()
	b.once.Do(func() {
		if b.dir, b.err = os.MkdirTemp("", "pixgate-test-bin-"); b.err != nil {
			return
		}
		b.path = filepath.Join(b.dir, "pixgate")
		out, err := exec.Command("go", "build", "-o", b.path, "github.com/pixgate/pixgate/cmd/pixgate").CombinedOutput()
		if err != nil {
			b.err = fmt.Errorf("go build: %w\n%s", err, out)
		}
	})
	require.NoError(t, b.err)
	return b.path
}

// Remove deletes the built binary, if any.
func (b *Binary) Remove() {
	if b.dir != "" {
		_ = os.RemoveAll(b.dir)
	}
}
