package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// shopMain is a program of another module that uses the client.
const shopMain = `package main

import (
	"fmt"

	"github.com/pixgate/pixgate/client"
)

func main() {
	c, err := client.New("http://127.0.0.1:8080", "client-id", "client-secret")
	fmt.Println(c != nil, err, client.Reais("10.50"))
}
`

// TestClientFromAnotherModule builds and runs a program of another module
// that imports the client, as the README and the package doc say to until
// the module is published: with their replace directive (then go mod
// tidy), and with their go.work workspace. Nothing is downloaded
// (GOPROXY=off): every module comes from this checkout or the cache.
func TestClientFromAnotherModule(t *testing.T) {
	t.Parallel()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	require.NoError(t, err)
	mod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	require.NoError(t, err)
	goLine := regexp.MustCompile(`(?m)^go [0-9.]+$`).FindString(string(mod))
	require.NotEmpty(t, goLine)

	goCmd := func(t *testing.T, dir string, env []string, args ...string) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, "go", args...)
		cmd.Dir = dir
		// The checksums of the cached modules were verified when they were
		// downloaded; the checksum database is not asked again.
		cmd.Env = append(os.Environ(), "GOPROXY=off", "GOSUMDB=off", "GOFLAGS=")
		cmd.Env = append(cmd.Env, env...)
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "go %s:\n%s", strings.Join(args, " "), out)
		return string(out)
	}
	write := func(t *testing.T, dir, name, text string) {
		t.Helper()
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600))
	}

	t.Run("replace", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		write(t, dir, "main.go", shopMain)
		write(t, dir, "go.mod", "module example.com/shop\n\n"+goLine+"\n\n"+
			"require github.com/pixgate/pixgate v0.0.0\n\n"+
			"replace github.com/pixgate/pixgate => "+root+"\n")
		env := []string{"GOWORK=off"}
		goCmd(t, dir, env, "mod", "tidy")
		out := goCmd(t, dir, env, "run", ".")
		require.Equal(t, "true <nil> 10.50\n", out)
	})
	t.Run("workspace", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		write(t, dir, "main.go", shopMain)
		write(t, dir, "go.mod", "module example.com/shop\n\n"+goLine+"\n")
		env := []string{"GOWORK=" + filepath.Join(dir, "go.work")}
		goCmd(t, dir, []string{"GOWORK=off"}, "work", "init", ".", root)
		out := goCmd(t, dir, env, "run", ".")
		require.Equal(t, "true <nil> 10.50\n", out)
	})
}
