package e2e

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/internal/testkit"
)

// privatePostgres starts a PostgreSQL of this test's own in a short temp
// dir (its socket path must stay short) and returns its URL and dir; it is
// stopped when the test ends.
func privatePostgres(t *testing.T) (url, dir string) {
	t.Helper()
	if _, err := os.Stat("/usr/lib/postgresql"); err != nil {
		t.Skip("PostgreSQL is not installed")
	}
	dir, err := os.MkdirTemp("", "pgo")
	require.NoError(t, err)
	t.Cleanup(func() {
		_ = exec.Command("../../scripts/stop-postgres.sh", dir).Run()
		_ = os.RemoveAll(dir)
	})
	out, err := exec.Command("../../scripts/start-postgres.sh", dir).Output()
	require.NoError(t, err)
	return strings.TrimSpace(string(out)), dir
}

// restartPostgres starts again the cluster in dir that stop-postgres.sh
// stopped, with the options it last ran with (pg_ctl restart reads them
// back from postmaster.opts).
func restartPostgres(t *testing.T, dir string) {
	t.Helper()
	bins, _ := filepath.Glob("/usr/lib/postgresql/*/bin/pg_ctl")
	require.NotEmpty(t, bins)
	args := []string{bins[len(bins)-1], "-D", filepath.Join(dir, "data"), "-l", filepath.Join(dir, "pg.log"), "-w", "-t", "60", "restart"}
	if os.Geteuid() == 0 {
		args = append([]string{"runuser", "-u", "postgres", "--"}, args...)
	}
	out, err := exec.Command(args[0], args[1:]...).CombinedOutput() //nolint:gosec // G204: the test's own pg_ctl
	require.NoError(t, err, "%s", out)
}

// TestPostgresOutage: a real PostgreSQL stopped under a running serve and
// started again. While it is down, API requests answer 503 with
// Retry-After in their family's shape, /readyz answers 503, and the log
// holds a handful of lines (each kind of background work once, the API
// once), not one per attempt; when it is back, requests and background
// work resume without a restart.
func TestPostgresOutage(t *testing.T) {
	t.Parallel()
	dbURL, dir := privatePostgres(t)
	s := startServe(t, dbURL, "--charge-ttl", "2s")
	c := testkit.DecodeOne(t, s.stdout.String(), testkit.ServeKeys...)
	status, body := api(t, s.addr, c, "GET", "/api/v1/wallet/balance", nil)
	require.Equal(t, http.StatusOK, status, "%v", body)

	down := len(s.stderr.String())
	require.NoError(t, exec.Command("../../scripts/stop-postgres.sh", dir).Run())

	for _, tc := range []struct {
		method, path string
		body         any
		want         map[string]any
	}{
		{"GET", "/api/v1/wallet/balance", nil, map[string]any{"statusCode": float64(503), "message": "Service temporarily unavailable"}},
		{"POST", "/api/v1/gateway/request-qrcode", charge("outage-1", 10), map[string]any{"statusCode": float64(503),
			"message": "Service temporarily unavailable", "error": "Service Unavailable"}},
	} {
		status, hdr, out := apiHeader(t, s.addr, c, tc.method, tc.path, tc.body)
		require.Equal(t, http.StatusServiceUnavailable, status, "%s %s: %v", tc.method, tc.path, out)
		require.Equal(t, tc.want, out, tc.path)
		require.Equal(t, "5", hdr.Get("Retry-After"), tc.path)
	}
	resp, err := http.Get("http://" + s.addr + "/readyz")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)

	// Long enough for every loop to have failed many times at its pace
	// (the job interval is a second, the dispatcher's less).
	for range 12 {
		_, _, _ = apiHeader(t, s.addr, c, "GET", "/api/v1/wallet/balance", nil)
		resp, err := http.Get("http://" + s.addr + "/readyz")
		require.NoError(t, err)
		resp.Body.Close()
		time.Sleep(500 * time.Millisecond)
	}
	outage := s.stderr.String()[down:]
	restartPostgres(t, dir)

	warnings := regexp.MustCompile(`(?m)^.*"level":"(WARN|ERROR)".*$`).FindAllString(outage, -1)
	t.Logf("%d warnings while the database was down", len(warnings))
	require.LessOrEqual(t, len(warnings), 15, "a handful of lines, not one per attempt:\n%s", strings.Join(warnings, "\n"))
	perJob := map[string]int{}
	for _, m := range regexp.MustCompile(`"msg":"background work failing; backing off","job":"([^"]+)"`).FindAllStringSubmatch(outage, -1) {
		perJob[m[1]]++
	}
	require.NotEmpty(t, perJob, "the loops say they back off:\n%s", outage)
	for job, n := range perJob {
		require.Equal(t, 1, n, "job %s logged once", job)
	}
	require.Equal(t, 1, strings.Count(outage, "database unavailable; answering 503"))
	require.LessOrEqual(t, strings.Count(outage, `"msg":"not ready"`), 1)

	// Back: requests at once, and background work too (a charge created
	// now expires by the job runner's expiry).
	require.Eventually(t, func() bool {
		status, _, err := tryAPI(s.addr, c, "GET", "/api/v1/wallet/balance", nil)
		return err == nil && status == http.StatusOK
	}, 15*time.Second, 100*time.Millisecond)
	status, body = api(t, s.addr, c, "POST", "/api/v1/gateway/request-qrcode", charge("outage-2", 10))
	require.Equal(t, http.StatusCreated, status, "%v", body)
	id := body["payment_id"].(string)
	require.Eventually(t, func() bool {
		status, body, err := tryAPI(s.addr, c, "POST", "/api/v1/wallet/transaction", map[string]any{"payment_id": id})
		data, _ := body["data"].(map[string]any)
		return err == nil && status == http.StatusOK && data["status"] == "CANCELLED"
	}, 40*time.Second, 200*time.Millisecond, "the expiry job resumed")
	require.Contains(t, s.stderr.String()[down:], "background work resumed")
	resp, err = http.Get("http://" + s.addr + "/readyz")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	s.stop(t)
}

// apiHeader is api that also returns the response headers.
func apiHeader(t *testing.T, addr string, c testkit.Creds, method, path string, body any) (int, http.Header, map[string]any) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		require.NoError(t, err)
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, "http://"+addr+path, rd)
	require.NoError(t, err)
	req.Header.Set("stpi", c.ClientID)
	req.Header.Set("stps", c.ClientSecret)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, resp.Header, out
}
