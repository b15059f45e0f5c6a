package bench_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/cmd/pixgate-bench/internal/bench"
	"github.com/pixgate/pixgate/internal/cli"
	"github.com/pixgate/pixgate/internal/ledger"
	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/store"
	"github.com/pixgate/pixgate/internal/store/sqlite"
	"github.com/pixgate/pixgate/internal/testkit"
)

type syncBuffer = testkit.Buffer

// asPixgate, set in the environment, makes this test binary run pixgate's
// command line (cli.Main) instead of the tests: the bench creates clients by
// running `pixgate clients create`, and pixgate is os.Args[0] here.
const asPixgate = "PIXGATE_BENCH_TEST_AS_PIXGATE"

// pixgate is the pixgate binary the tests give the bench.
var pixgate string

func TestMain(m *testing.M) {
	if os.Getenv(asPixgate) == "1" {
		os.Exit(cli.Main(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
	}
	pixgate = os.Args[0]
	if err := os.Setenv(asPixgate, "1"); err != nil {
		panic(err)
	}
	os.Exit(m.Run())
}

// skipShort skips a test that starts pixgate processes under -short.
func skipShort(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("starts pixgate processes")
	}
}

// server is a real `pixgate serve` (cli.Main) running in this process.
type server struct {
	url     string
	sandbox bench.Credential // the client serve bootstraps on an empty database
}

// startServe runs serve on dbURL (with extra flags, e.g. another provider)
// until the test ends and waits until it listens. The bench runs
// `pixgate clients create` processes against it, so the test is skipped
// under -short.
func startServe(t *testing.T, dbURL string, extra ...string) server {
	t.Helper()
	skipShort(t)
	ctx, cancel := context.WithCancel(context.Background())
	stdout, stderr := &syncBuffer{}, &syncBuffer{}
	done := make(chan int, 1)
	go func() {
		args := []string{"serve", "--addr", "127.0.0.1:0", "--database-url", dbURL, "--rate-limit", "100000", "--sandbox-payout-delay", "100ms"}
		done <- cli.Main(ctx, append(args, extra...), stdout, stderr)
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			t.Errorf("serve did not stop")
		}
	})
	// Generous: under -race, with the other packages' tests on the same
	// two CPUs, the sandbox bootstrap (password hashing) alone has taken
	// over 20 s.
	deadline := time.Now().Add(90 * time.Second)
	for {
		if addr := testkit.ListeningAddr(stderr.String()); addr != "" {
			var cred struct {
				ClientID     string `json:"client_id"`
				ClientSecret string `json:"client_secret"`
			}
			if err := json.Unmarshal([]byte(strings.SplitN(stdout.String(), "\n", 2)[0]), &cred); len(extra) == 0 {
				require.NoError(t, err, "sandbox credentials on stdout")
			}
			return server{url: "http://" + addr, sandbox: bench.Credential{ID: cred.ClientID, Secret: cred.ClientSecret}}
		}
		select {
		case code := <-done:
			t.Fatalf("serve exited with %d; stderr:\n%s", code, stderr.String())
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("serve did not listen; stderr:\n%s", stderr.String())
		}
	}
}

func requireEveryOp(t *testing.T, rep bench.Report) {
	t.Helper()
	seen := map[string]bool{}
	for _, o := range rep.Operations {
		seen[o.Op] = true
		require.Positive(t, o.Count, "%s count", o.Op)
		require.Positive(t, o.OK, "%s ok (errors %v)", o.Op, o.Errors)
		require.Positive(t, o.OKRPS, "%s ok/s", o.Op)
		require.LessOrEqual(t, o.P50MS, o.P95MS, o.Op)
		require.LessOrEqual(t, o.P95MS, o.P99MS, o.Op)
		require.LessOrEqual(t, o.P99MS, o.MaxMS, o.Op)
		require.Positive(t, o.P50MS, o.Op)
	}
	for _, op := range bench.Ops {
		require.True(t, seen[op], "report has no %s row", op)
	}
	require.Equal(t, len(bench.Ops), len(rep.Operations))
}

// TestBenchCommand runs `pixgate-bench` against `pixgate serve` on each
// database, with an existing client and two it creates itself, and requires
// every operation to have been measured and the outside check to pass.
func TestBenchCommand(t *testing.T) {
	for _, kind := range []string{"sqlite", "postgres"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			dbURL := filepath.Join(t.TempDir(), "pixgate.db")
			if kind == "postgres" {
				dbURL = testkit.PostgresURL(t)
			}
			srv := startServe(t, dbURL)
			var stdout, stderr bytes.Buffer
			code := bench.Main(context.Background(), []string{"--pixgate", pixgate, "--database-url", dbURL, "--target", srv.url,
				"--client", srv.sandbox.ID + ":" + srv.sandbox.Secret, "--create-clients", "2",
				"--duration", "2s", "--concurrency", "4", "--settle-timeout", "30s", "--json"}, &stdout, &stderr)
			require.Equal(t, 0, code, "stderr:\n%s\nstdout:\n%s", stderr.String(), stdout.String())
			var rep bench.Report
			dec := json.NewDecoder(&stdout)
			dec.DisallowUnknownFields()
			require.NoError(t, dec.Decode(&rep), "one JSON document")
			require.False(t, dec.More(), "nothing after the JSON document")
			require.Equal(t, "closed", rep.Mode)
			require.Equal(t, 3, rep.Clients)
			requireEveryOp(t, rep)
			require.NotNil(t, rep.Check)
			require.True(t, rep.Check.OK, "mismatches: %v", rep.Check.Mismatches)
			require.Zero(t, rep.Check.MismatchCount)
			require.Positive(t, rep.Check.Charges)
			require.Positive(t, rep.Check.Payouts)
			require.Equal(t, 3, rep.Check.Clients)
			require.Positive(t, rep.WebhooksReceived, "the bench's receiver got webhooks")
			require.Positive(t, rep.Check.WebhooksDrainedS, "the run waited for the server's outbox to empty")
			require.Zero(t, rep.Check.WebhooksPending)
		})
	}
}

// TestBenchOpenLoop runs the fixed-rate mode and prints the table.
func TestBenchOpenLoop(t *testing.T) {
	dbURL := filepath.Join(t.TempDir(), "pixgate.db")
	srv := startServe(t, dbURL)
	var out bytes.Buffer
	err := bench.Run(context.Background(), bench.Config{Target: srv.url, Duration: 1500 * time.Millisecond, Rate: 200,
		Clients: []bench.Credential{srv.sandbox}, CreateClients: 1, Pixgate: pixgate, DatabaseURL: dbURL, SettleTimeout: 30 * time.Second}, &out)
	require.NoError(t, err, out.String())
	text := out.String()
	require.Contains(t, text, "200 req/s (open loop)")
	for _, op := range append(bench.Ops, "total") {
		require.Regexp(t, `(?m)^\s*`+op+`\s+[1-9]\d*\s`, text, "table row for %s", op)
	}
	require.Contains(t, text, "check: OK")
}

// TestBenchWarmup: with --warmup the open loop sends its warm-up first and
// the measured requests straight after, counted apart — exactly rate ×
// each — and the check covers the warm-up's payouts too.
func TestBenchWarmup(t *testing.T) {
	dbURL := filepath.Join(t.TempDir(), "pixgate.db")
	srv := startServe(t, dbURL)
	var stdout, stderr bytes.Buffer
	code := bench.Main(context.Background(), []string{"--pixgate", pixgate, "--database-url", dbURL, "--target", srv.url,
		"--create-clients", "2", "--mix", "payout=1", "--rate", "200", "--warmup", "1s", "--duration", "1s",
		"--settle-timeout", "30s", "--json"}, &stdout, &stderr)
	require.Equal(t, 0, code, "stderr:\n%s\nstdout:\n%s", stderr.String(), stdout.String())
	var rep bench.Report
	require.NoError(t, json.Unmarshal(stdout.Bytes(), &rep), stdout.String())
	require.InDelta(t, 1.0, rep.WarmupS, 1e-9)
	require.NotNil(t, rep.Warmup)
	require.Equal(t, 200, rep.Warmup.Count, "the warm-up's requests")
	require.Equal(t, 200, rep.Total.Count, "the measured requests")
	require.Len(t, rep.Operations, 1)
	payouts := rep.Operations[0]
	require.Equal(t, bench.OpPayout, payouts.Op)
	require.Positive(t, payouts.OK)
	require.Positive(t, rep.Warmup.OK)
	require.True(t, rep.Check.OK, "mismatches: %v", rep.Check.Mismatches)
	require.Equal(t, payouts.OK+rep.Warmup.OK, rep.Check.Payouts, "every acknowledged payout checked, the warm-up's too")
}

func badRun(t *testing.T, dbURL string, srv server, tamper func(ctx context.Context, h bench.Hook) error) bench.Report {
	t.Helper()
	restore := bench.SetAfterLoad(tamper)
	defer restore()
	var out bytes.Buffer
	err := bench.Run(context.Background(), bench.Config{Target: srv.url, Duration: time.Second, Concurrency: 4,
		CreateClients: 2, Pixgate: pixgate, DatabaseURL: dbURL, SettleTimeout: 30 * time.Second, JSON: true}, &out)
	require.Error(t, err)
	require.True(t, errors.Is(err, bench.ErrCheckFailed), "error %v", err)
	var rep bench.Report
	require.NoError(t, json.Unmarshal(out.Bytes(), &rep), out.String())
	requireEveryOp(t, rep)
	require.False(t, rep.Check.OK)
	require.Positive(t, rep.Check.MismatchCount)
	return rep
}

func mismatchesContain(t *testing.T, rep bench.Report, substrings ...string) {
	t.Helper()
	all := strings.Join(rep.Check.Mismatches, "\n")
	for _, s := range substrings {
		require.Contains(t, all, s)
	}
}

// TestCheckFailsOnTamperedDatabase alters the server's database behind its
// back after the load — one paid charge now reads CANCELLED, one balance has
// an extra centavo — and requires the check to report both and Run to fail
// with ErrCheckFailed.
func TestCheckFailsOnTamperedDatabase(t *testing.T) {
	dbURL := filepath.Join(t.TempDir(), "pixgate.db")
	srv := startServe(t, dbURL)
	var tamperedCharge, tamperedClient string
	rep := badRun(t, dbURL, srv, func(ctx context.Context, h bench.Hook) error {
		db, err := sqlite.Open(ctx, dbURL)
		if err != nil {
			return err
		}
		defer db.Close()
		ids := h.ClientIDs()
		tamperedClient = ids[1]
		return db.Write(ctx, func(tx *store.Tx) error {
			rows, _, err := db.History(ctx, ids[0], store.HistoryFilter{Status: "PAID", Type: pix.TypeCashin, Limit: 1})
			if err != nil || len(rows) != 1 {
				return errors.Join(err, errors.New("no paid charge to tamper with"))
			}
			tamperedCharge = rows[0].ID
			if err := store.RawExec(ctx, tx, `UPDATE transactions SET status = 'CANCELLED' WHERE id = $1`, tamperedCharge); err != nil {
				return err
			}
			if err := store.RawExec(ctx, tx, `UPDATE accounts SET balance = balance + 1 WHERE id = $1`,
				store.AccountID(tamperedClient, ledger.Available)); err != nil {
				return err
			}
			return store.RawExec(ctx, tx, `UPDATE accounts SET balance = balance - 1 WHERE id = $1`,
				store.AccountID(tamperedClient, ledger.Settlement))
		})
	})
	mismatchesContain(t, rep, "charge "+tamperedCharge, "reads CANCELLED, want PAID", "client "+tamperedClient+": balance", "difference +1 / +0")
}

// TestCheckFailsOnFabricatedAcknowledgement feeds the checker a paid charge
// the server never created.
func TestCheckFailsOnFabricatedAcknowledgement(t *testing.T) {
	dbURL := filepath.Join(t.TempDir(), "pixgate.db")
	srv := startServe(t, dbURL)
	fake := uuid.NewString()
	rep := badRun(t, dbURL, srv, func(ctx context.Context, h bench.Hook) error {
		h.FabricatePaidCharge(0, fake, 1234)
		return nil
	})
	mismatchesContain(t, rep, "acknowledged charge "+fake)
	require.Equal(t, 1, rep.Check.MismatchCount, "only the fabricated charge: %v", rep.Check.Mismatches)
}

// TestScheduleSpreadsTheMix requires one cycle of the schedule to hold each
// operation exactly its weight times, every operation of the default mix to
// come up within the first ten requests (so a one-second run under -race
// still measures each), and no operation more than twice in a row.
func TestScheduleSpreadsTheMix(t *testing.T) {
	for _, text := range []string{bench.DefaultMix, "payout=1", "charge=1,history=1", "charge=3,pay=0,lookup=1", "balance=7,history=2"} {
		mix, err := bench.ParseMix(text)
		require.NoError(t, err)
		seq := bench.Schedule(mix)
		counts := map[string]int{}
		total := 0
		for _, op := range bench.Ops {
			total += mix[op]
		}
		require.Len(t, seq, total, text)
		for _, op := range seq {
			counts[op]++
		}
		for _, op := range bench.Ops {
			require.Equal(t, mix[op], counts[op], "%s: %s", text, op)
		}
	}
	mix, err := bench.ParseMix(bench.DefaultMix)
	require.NoError(t, err)
	seq := bench.Schedule(mix)
	first := map[string]bool{}
	for _, op := range seq[:10] {
		first[op] = true
	}
	require.Len(t, first, len(bench.Ops), "first ten of %v", seq)
	run, longest := 0, 0
	for i, op := range seq {
		if i > 0 && seq[i-1] == op {
			run++
		} else {
			run = 1
		}
		longest = max(longest, run)
	}
	require.LessOrEqual(t, longest, 2, "no operation three times in a row in %v", seq)
}

// TestCreateClientsThroughCLI requires CreateClients to make its clients with
// `pixgate clients create` (the fees the check accounts for included) and to
// refuse a SQLite file that does not exist rather than let pixgate create an
// empty one.
func TestCreateClientsThroughCLI(t *testing.T) {
	skipShort(t)
	dbURL := filepath.Join(t.TempDir(), "pixgate.db")
	var out, errOut bytes.Buffer
	require.Equal(t, 0, cli.Main(context.Background(), []string{"migrate", "--database-url", dbURL}, &out, &errOut), errOut.String())
	creds, err := bench.CreateClients(context.Background(), pixgate, dbURL, "", 2, "t")
	require.NoError(t, err)
	require.Len(t, creds, 2)
	out.Reset()
	require.Equal(t, 0, cli.Main(context.Background(), []string{"clients", "list", "--database-url", dbURL}, &out, &errOut), errOut.String())
	var list []struct {
		ClientID         string `json:"client_id"`
		Name             string `json:"name"`
		CashinFeePercent string `json:"cashin_fee_percent"`
		PayoutFeeFixed   string `json:"payout_fee_fixed"`
	}
	require.NoError(t, json.Unmarshal(out.Bytes(), &list), out.String())
	require.Len(t, list, 2)
	for i, c := range list {
		require.Contains(t, []string{creds[0].ID, creds[1].ID}, c.ClientID)
		require.Regexp(t, `^bench-t-[12]$`, c.Name, "client %d", i)
		require.Equal(t, bench.CreatedCashinFeePercent, c.CashinFeePercent)
		require.Equal(t, bench.CreatedPayoutFeeFixed, c.PayoutFeeFixed)
	}

	missing := filepath.Join(t.TempDir(), "none.db")
	_, err = bench.CreateClients(context.Background(), pixgate, missing, "", 1, "t")
	require.ErrorContains(t, err, "give the running server's --database-url")
	require.NoFileExists(t, missing)
}
