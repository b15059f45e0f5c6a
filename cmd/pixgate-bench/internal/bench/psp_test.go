package bench_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/cmd/pixgate-bench/internal/bench"
	"github.com/pixgate/pixgate/internal/pspsim"
)

// TestBenchFundsViaPSPSim runs the bench against serve with the efi
// provider pointed at a PSP simulator: the sandbox's pay endpoint is not
// there, so --fund-via-psp-sim pays the funding charges through the
// simulator's control API, and payouts (sent to the simulated PSP) draw
// on them; the outside check passes.
func TestBenchFundsViaPSPSim(t *testing.T) {
	sim := pspsim.New(pspsim.Options{ControlAddr: "127.0.0.1:0"})
	require.NoError(t, sim.Start(t.Context()))
	t.Cleanup(sim.Close)
	opts := sim.Options()
	files, err := opts.PKI.WriteFiles(t.TempDir())
	require.NoError(t, err)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())

	dbURL := filepath.Join(t.TempDir(), "pixgate.db")
	srv := startServe(t, dbURL, "--addr", addr, "--env", "sandbox", "--provider", "efi", "--psp-api-url", sim.URL(),
		"--psp-client-id", opts.ClientID, "--psp-client-secret", opts.ClientSecret,
		"--psp-cert-file", files.ClientCert, "--psp-key-file", files.ClientKey, "--psp-ca-file", files.CA,
		"--psp-pix-key", opts.PixKey, "--psp-webhook-url", "http://"+addr+"/psp/webhook/bench-test_webhook-secret-0123456789abcdef")

	args := []string{"--pixgate", pixgate, "--database-url", dbURL, "--target", srv.url, "--create-clients", "2",
		"--mix", "payout=1,charge=1", "--payout-fail-percent", "0", "--payout-reverse-percent", "0",
		"--duration", "1s", "--concurrency", "2", "--settle-timeout", "30s", "--json"}
	var stdout, stderr bytes.Buffer
	code := bench.Main(context.Background(), args, &stdout, &stderr)
	require.Equal(t, 1, code, "without --fund-via-psp-sim the sandbox pay endpoint is missing")
	require.Contains(t, stderr.String(), "--fund-via-psp-sim")

	stdout.Reset()
	stderr.Reset()
	code = bench.Main(context.Background(), append(args, "--fund-via-psp-sim", sim.ControlURL()+"/"), &stdout, &stderr)
	require.Equal(t, 0, code, "stderr:\n%s\nstdout:\n%s", stderr.String(), stdout.String())
	var rep bench.Report
	require.NoError(t, json.Unmarshal(stdout.Bytes(), &rep), stdout.String())
	require.True(t, rep.Check.OK, "mismatches: %v", rep.Check.Mismatches)
	require.Positive(t, rep.Check.Payouts)
	for _, o := range rep.Operations {
		require.Positive(t, o.OK, "%s ok (errors %v)", o.Op, o.Errors)
	}
	st := sim.State()
	require.Len(t, st.Pix, 2, "one funding Pix per client, paid at the simulator")
	require.NotEmpty(t, st.Sends, "the payouts went to the simulated PSP")
}

// TestBenchFundViaPSPSimURL: a malformed --fund-via-psp-sim is refused
// before anything runs.
func TestBenchFundViaPSPSimURL(t *testing.T) {
	var stdout, stderr bytes.Buffer
	code := bench.Main(context.Background(), []string{"--client", "a:b", "--fund-via-psp-sim", "127.0.0.1:8444"}, &stdout, &stderr)
	require.Equal(t, 1, code)
	require.Contains(t, stderr.String(), "fund-via-psp-sim")
}
