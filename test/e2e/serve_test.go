package e2e

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/internal/cli"
	"github.com/pixgate/pixgate/internal/testkit"
)

// server is one `pixgate serve` run through Main in a goroutine.
type server struct {
	addr           string
	stdout, stderr *testkit.Buffer
	cancel         context.CancelFunc
	exited         chan struct{} // closed when Main has returned
	code           int           // Main's result, once exited is closed
}

// launchServe starts serve on dbURL with extra flags, without waiting for it.
// The server is stopped when the test ends, if it is still running.
func launchServe(t *testing.T, dbURL string, extra ...string) *server {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	s := &server{stdout: &testkit.Buffer{}, stderr: &testkit.Buffer{}, cancel: cancel, exited: make(chan struct{})}
	args := append([]string{"serve", "--addr", "127.0.0.1:0", "--database-url", dbURL}, extra...)
	go func() {
		defer close(s.exited)
		s.code = cli.Main(ctx, args, s.stdout, s.stderr)
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-s.exited:
		case <-time.After(20 * time.Second):
			t.Errorf("serve did not stop within 20 s after its context ended")
		}
	})
	return s
}

// waitListening waits for the "listening" log line and records its addr;
// the bound is generous because a -race build starting beside the other
// parallel tests on 2 cores took over 15 s.
func (s *server) waitListening(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		if addr := testkit.ListeningAddr(s.stderr.String()); addr != "" {
			s.addr = addr
			return
		}
		select {
		case <-s.exited:
			t.Fatalf("serve exited with %d before listening; stderr:\n%s", s.code, s.stderr.String())
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("serve did not log \"listening\" within 60 s; stderr:\n%s", s.stderr.String())
		}
	}
}

// startServe starts serve and waits until it listens.
func startServe(t *testing.T, dbURL string, extra ...string) *server {
	t.Helper()
	s := launchServe(t, dbURL, extra...)
	s.waitListening(t)
	return s
}

// stop ends serve's context (what SIGTERM does in main) and requires Main to
// return 0 promptly.
func (s *server) stop(t *testing.T) {
	t.Helper()
	s.cancel()
	s.wait(t)
}

func (s *server) wait(t *testing.T) {
	t.Helper()
	select {
	case <-s.exited:
	case <-time.After(10 * time.Second):
		t.Fatalf("serve did not return within 10 s; stderr:\n%s", s.stderr.String())
	}
	require.Equal(t, 0, s.code, "serve exit code; stderr:\n%s", s.stderr.String())
	require.Contains(t, s.stderr.String(), `"msg":"stopped"`)
}

// waitRefused waits until addr refuses new connections.
func waitRefused(t *testing.T, addr string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		conn, err := net.DialTimeout("tcp", addr, time.Second)
		if err != nil {
			return
		}
		conn.Close()
		if time.Now().After(deadline) {
			t.Fatalf("%s still accepts connections 5 s after shutdown began", addr)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// slowRequest sends the headers of an authenticated POST with
// "Expect: 100-continue" and returns once the server answered 100 Continue,
// that is once the handler is reading the body: the request is in flight
// until finish sends the body and reads the final response.
func slowRequest(t *testing.T, addr string, c testkit.Creds) (finish func() (status int, body string)) {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	require.NoError(t, err)
	t.Cleanup(func() { conn.Close() })
	require.NoError(t, conn.SetDeadline(time.Now().Add(15*time.Second)))
	const body = `{}`
	_, err = fmt.Fprintf(conn, "POST /api/v1/gateway/request-qrcode HTTP/1.1\r\nHost: %s\r\n"+
		"Content-Type: application/json\r\nContent-Length: %d\r\nExpect: 100-continue\r\n"+
		"stpi: %s\r\nstps: %s\r\n\r\n", addr, len(body), c.ClientID, c.ClientSecret)
	require.NoError(t, err)
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	require.NoError(t, err)
	resp.Body.Close() // an interim 100 has no body
	require.Equal(t, http.StatusContinue, resp.StatusCode)
	return func() (int, string) {
		t.Helper()
		_, err := io.WriteString(conn, body)
		require.NoError(t, err)
		resp, err := http.ReadResponse(br, nil)
		require.NoError(t, err, "in-flight request cut off by shutdown")
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err, "in-flight response cut off by shutdown")
		return resp.StatusCode, string(b)
	}
}

func TestServe(t *testing.T) {
	t.Parallel()
	testkit.ForEachDatabaseURL(t, func(t *testing.T, db string) {
		// First start on an empty sandbox database: the sandbox client is
		// created and its credentials printed once, and never logged.
		s := startServe(t, db)
		sb := testkit.DecodeOne(t, s.stdout.String(), testkit.ServeKeys...)
		testkit.RequireNewClient(t, sb, "sandbox", "sandbox")
		require.NotContains(t, s.stderr.String(), sb.ClientSecret, "secret logged")
		require.NotContains(t, s.stderr.String(), sb.WebhookSecret, "webhook secret logged")
		require.Equal(t, http.StatusOK, getStatus(t, "http://"+s.addr+"/healthz"))
		require.Equal(t, http.StatusOK, getStatus(t, "http://"+s.addr+"/readyz"))
		require.Equal(t, http.StatusOK, balance(t, s.addr, sb.ClientID, sb.ClientSecret))

		// Shutdown with a request in flight: new connections are refused at
		// once, the request still gets its answer, then Main returns 0.
		finish := slowRequest(t, s.addr, sb)
		s.cancel()
		waitRefused(t, s.addr)
		select {
		case <-s.exited:
			t.Fatal("serve returned with a request in flight")
		default:
		}
		status, body := finish()
		require.Equal(t, http.StatusBadRequest, status, body) // {} is not a valid charge
		require.Contains(t, body, `"statusCode":400`)
		s.wait(t)
		waitRefused(t, s.addr)

		// Second start on the same database: no second sandbox client.
		s2 := startServe(t, db)
		require.Equal(t, http.StatusOK, getStatus(t, "http://"+s2.addr+"/readyz"))
		require.Equal(t, http.StatusOK, balance(t, s2.addr, sb.ClientID, sb.ClientSecret))
		s2.stop(t)
		require.Empty(t, s2.stdout.String(), "second start printed something")
		require.NotContains(t, s2.stderr.String(), "migrations applied", "second start re-applied migrations")

		clients, _ := listClients(t, db)
		require.Len(t, clients, 1)
		require.Equal(t, "sandbox", clients[sb.ClientID].Name)
	})
}

func TestServeProductionCreatesNoClient(t *testing.T) {
	t.Parallel()
	testkit.ForEachDatabaseURL(t, func(t *testing.T, db string) {
		s := startServe(t, db, testkit.ProductionSandboxFlags...)
		require.Equal(t, http.StatusOK, getStatus(t, "http://"+s.addr+"/healthz"))
		require.Equal(t, http.StatusOK, getStatus(t, "http://"+s.addr+"/readyz"))
		s.stop(t)
		require.Empty(t, s.stdout.String())
		clients, _ := listClients(t, db)
		require.Empty(t, clients, "production must not create a sandbox client")
	})
}

// TestServeConcurrentStart starts two nodes at once on one empty PostgreSQL
// database: migrations serialize and one sandbox client results. (The
// migration lock polls every 5 s, so the loser may take that long to start.)
func TestServeConcurrentStart(t *testing.T) {
	t.Parallel()
	db := testkit.PostgresURL(t)
	nodes := make([]*server, 2)
	for i := range nodes {
		nodes[i] = launchServe(t, db)
	}
	var printed []testkit.Creds
	for _, n := range nodes {
		n.waitListening(t)
		require.Equal(t, http.StatusOK, getStatus(t, "http://"+n.addr+"/readyz"))
		if out := n.stdout.String(); out != "" {
			printed = append(printed, testkit.DecodeOne(t, out, testkit.ServeKeys...))
		}
	}
	require.Len(t, printed, 1, "exactly one node creates and prints the sandbox client")
	clients, _ := listClients(t, db)
	require.Len(t, clients, 1)
	require.Equal(t, "sandbox", clients[printed[0].ClientID].Name)
	for _, n := range nodes {
		require.Equal(t, http.StatusOK, balance(t, n.addr, printed[0].ClientID, printed[0].ClientSecret))
		n.stop(t)
	}
}

// TestSIGTERM runs the real binary and sends it SIGTERM with a request in
// flight: it stops accepting, answers the request, and exits 0.
func TestSIGTERM(t *testing.T) {
	t.Parallel()
	bin := buildPixgate(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())

	cmd := exec.Command(bin, "serve", "--addr", addr, "--database-url", testkit.SQLiteURL(t))
	for _, kv := range os.Environ() { // flags only: no PIXGATE_* from the caller
		if !strings.HasPrefix(kv, "PIXGATE_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	stdout, stderr := &testkit.Buffer{}, &testkit.Buffer{}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	require.NoError(t, cmd.Start())
	exited := make(chan struct{})
	var waitErr error
	go func() { waitErr = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		select {
		case <-exited:
		default:
			_ = cmd.Process.Kill()
			<-exited
		}
	})

	deadline := time.Now().Add(60 * time.Second)
	for {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://"+addr+"/healthz", nil)
		require.NoError(t, err)
		if resp, err := testHTTP.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		select {
		case <-exited:
			t.Fatalf("pixgate exited before serving: %v\nstderr:\n%s", waitErr, stderr.String())
		case <-time.After(20 * time.Millisecond):
		}
		require.True(t, time.Now().Before(deadline), "no /healthz within 60 s; stderr:\n%s", stderr.String())
	}
	require.Equal(t, addr, testkit.ListeningAddr(stderr.String()))
	sb := testkit.DecodeOne(t, stdout.String(), testkit.ServeKeys...)
	testkit.RequireNewClient(t, sb, "sandbox", "sandbox")

	finish := slowRequest(t, addr, sb)
	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	waitRefused(t, addr)
	status, body := finish()
	require.Equal(t, http.StatusBadRequest, status, body)

	select {
	case <-exited:
		var exitErr *exec.ExitError
		if errors.As(waitErr, &exitErr) {
			t.Fatalf("pixgate exited with %d after SIGTERM; stderr:\n%s", exitErr.ExitCode(), stderr.String())
		}
		require.NoError(t, waitErr)
	case <-time.After(5 * time.Second):
		t.Fatalf("pixgate still running 5 s after SIGTERM; stderr:\n%s", stderr.String())
	}
	require.Contains(t, stderr.String(), `"msg":"shutting down"`)
	require.Contains(t, stderr.String(), `"msg":"stopped"`)
}
