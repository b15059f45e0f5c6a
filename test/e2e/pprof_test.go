package e2e

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/internal/cli"
	"github.com/pixgate/pixgate/internal/testkit"
)

// TestServePprof: with PIXGATE_PPROF_ADDR serve answers Go's profiler on
// that loopback address and not on the API's; a non-loopback address
// refuses to start, naming the setting.
func TestServePprof(t *testing.T) {
	t.Parallel()
	db := testkit.SQLiteURL(t)
	s := startServe(t, db, "--pprof-addr", "127.0.0.1:0")
	// The profiler starts beside the API, so its line may follow "listening".
	var addr string
	for deadline := time.Now().Add(15 * time.Second); addr == "" && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		for _, line := range strings.Split(s.stderr.String(), "\n") {
			var e struct{ Msg, Addr string }
			if json.Unmarshal([]byte(line), &e) == nil && e.Msg == "profiler listening" {
				addr = e.Addr
			}
		}
	}
	require.NotEmpty(t, addr, "no profiler line; stderr:\n%s", s.stderr.String())
	require.Equal(t, http.StatusOK, getStatus(t, "http://"+addr+"/debug/pprof/goroutine?debug=1"))
	// The command line would show secrets given as flags.
	resp, err := http.Get("http://" + addr + "/debug/pprof/cmdline")
	require.NoError(t, err)
	cmdline, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	require.Equal(t, http.StatusNotFound, resp.StatusCode)
	require.NotContains(t, string(cmdline), os.Args[0])
	require.Equal(t, http.StatusNotFound, getStatus(t, "http://"+s.addr+"/debug/pprof/goroutine?debug=1"), "the profiler is not on the API's address")
	s.stop(t)

	for _, bad := range []string{"0.0.0.0:6060", ":6060", "10.0.0.1:6060", "example.com:6060", "127.0.0.1"} {
		var out, errOut testkit.Buffer
		code := cli.Main(t.Context(), []string{"serve", "--addr", "127.0.0.1:0", "--database-url", db, "--pprof-addr", bad}, &out, &errOut)
		require.NotEqual(t, 0, code, bad)
		require.Contains(t, errOut.String(), "PIXGATE_PPROF_ADDR", bad)
	}
}
