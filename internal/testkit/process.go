package testkit

import (
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Command is the pixgate binary bin with args, in the test's environment
// minus every PIXGATE_* variable, so that only the flags given count.
func Command(bin string, args ...string) *exec.Cmd {
	cmd := exec.Command(bin, args...) // #nosec G204 -- the test's own build of pixgate
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "PIXGATE_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	return cmd
}

// ServeProcess runs the pixgate binary bin as `serve --addr 127.0.0.1:0`
// with args (Command's environment), waits up to 60 s until it logs the
// address it listens on and answers /healthz there, and kills it when the
// test ends. It returns the server's base URL and its log.
func ServeProcess(t testing.TB, bin string, args ...string) (string, *Buffer) {
	t.Helper()
	logs := &Buffer{}
	cmd := Command(bin, append([]string{"serve", "--addr", "127.0.0.1:0"}, args...)...)
	cmd.Stdout, cmd.Stderr = &Buffer{}, logs
	if err := cmd.Start(); err != nil {
		t.Fatalf("start pixgate serve: %v", err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		select {
		case <-exited:
		default:
			_ = cmd.Process.Signal(syscall.SIGKILL)
			<-exited
		}
	})
	deadline := time.Now().Add(60 * time.Second)
	for {
		if addr := ListeningAddr(logs.String()); addr != "" && healthy("http://"+addr) {
			return "http://" + addr, logs
		}
		select {
		case <-exited:
			t.Fatalf("pixgate serve exited; its log:\n%s", logs.String())
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("pixgate serve did not listen within 60 s; its log:\n%s", logs.String())
		}
	}
}

// ListeningAddr returns the addr of the JSON log line "listening" in
// logs, or "".
func ListeningAddr(logs string) string {
	for _, line := range strings.Split(logs, "\n") {
		var entry struct {
			Msg  string `json:"msg"`
			Addr string `json:"addr"`
		}
		if json.Unmarshal([]byte(line), &entry) == nil && entry.Msg == "listening" {
			return entry.Addr
		}
	}
	return ""
}

// healthy reports whether the server at base answers GET /healthz with 200.
func healthy(base string) bool {
	c := http.Client{Timeout: 2 * time.Second}
	resp, err := c.Get(base + "/healthz")
	if err != nil {
		return false
	}
	_ = resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}
