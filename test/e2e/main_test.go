// Package e2e holds pixgate's process-level tests: they start `pixgate
// serve` (as a built binary or through cli.Main), PSP simulators and
// several nodes, kill and restart them, and speak to them over loopback
// HTTP and TLS, as a deployment would. They take minutes, so `go test
// -short ./...` skips them all; the full `go test ./...` runs them.
//
// They run the program configured by flags only, in parallel: none of them
// may touch the process environment.
package e2e

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/internal/cli"
	"github.com/pixgate/pixgate/internal/testkit"
)

var pixgate testkit.Binary

// TestMain skips the whole package under -short: every test here starts
// servers or processes.
func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() {
		fmt.Println("test/e2e: process-level tests skipped under -short")
		os.Exit(0)
	}
	code := m.Run()
	pixgate.Remove()
	os.Exit(code)
}

// buildPixgate builds cmd/pixgate once per test binary and returns its path.
func buildPixgate(t *testing.T) string { return pixgate.Path(t) }

// run runs the program in-process to completion and returns its exit code,
// stdout and stderr.
func run(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	var out, errOut bytes.Buffer
	code = cli.Main(ctx, args, &out, &errOut)
	return code, out.String(), errOut.String()
}

// listClients runs clients list and returns its entries by client id; the
// raw output is returned too, to look for secrets in it.
func listClients(t *testing.T, dbURL string) (map[string]testkit.ListedClient, string) {
	t.Helper()
	code, out, errOut := run(t, "clients", "list", "--database-url", dbURL)
	require.Equal(t, 0, code, "clients list: %s", errOut)
	return testkit.DecodeClientList(t, out), out
}
