// Command pixgate-sim runs pixgate's whole-system simulation (package
// internal/sim): real `pixgate serve` processes against the PSP simulator,
// a seeded random workload and fault schedule, SIGKILLs, and an auditor
// that checks the money afterwards. A failing run prints its seed and the
// command that replays it, and exits 1.
//
//	go run ./cmd/pixgate-sim -db sqlite -ops 300 -kills 3
//	go run ./cmd/pixgate-sim -db postgres -postgres-url postgres://… -seed 42
//
// With -drain or -open it measures payouts instead (docs/simulation.md):
//
//	go run ./cmd/pixgate-sim -db postgres -drain 2000 -latency 150ms
//	go run ./cmd/pixgate-sim -db postgres -open 500 -for 60s -latency 150ms
package main

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/pixgate/pixgate/internal/sim"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("pixgate-sim", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		seed    = fs.Uint64("seed", 0, "the run's seed (0: a random one, printed)")
		dbs     = fs.String("db", "sqlite", "sqlite, postgres, or both (one run each, in turn)")
		pgURL   = fs.String("postgres-url", os.Getenv("PIXGATE_TEST_POSTGRES_URL"), "PostgreSQL server in which each run creates its own database (default $PIXGATE_TEST_POSTGRES_URL)")
		nodes   = fs.Int("nodes", 0, "serve processes (default: 1 on SQLite, 2 on PostgreSQL)")
		ops     = fs.Int("ops", 300, "operations the workload issues")
		kills   = fs.Int("kills", 3, "SIGKILLs of a node during the run")
		workers = fs.Int("workers", 8, "operations in flight at once")
		bin     = fs.String("pixgate", "", "the pixgate binary (default: built from this module)")
		dir     = fs.String("dir", "", "directory for the run's files (default: a new temporary one, removed after a passing run)")
		quiesce = fs.Duration("quiesce", 3*time.Minute, "longest wait for the system to settle after the workload")
		keep    = fs.Bool("keep", false, "keep the PostgreSQL database and the files after the run")
		verbose = fs.Bool("v", false, "log progress to stderr")
		drain   = fs.Int("drain", 0, "instead of a simulation, measure how fast this many payouts reach the PSP (no faults)")
		latency = fs.Duration("latency", 0, "with -drain or -open: the PSP's latency per call (jitter ±20 %)")
		open    = fs.Float64("open", 0, "instead of a simulation, offer this many payouts a second, open loop, for -for, to a PSP that settles at once, and measure them")
		openFor = fs.Duration("for", time.Minute, "with -open: how long the payouts are offered")
		tracing = fs.String("trace", "", "with -open: a directory where each run writes open-<db>.csv, one line per payout (see docs/simulation.md)")
		asJSON  = fs.Bool("json", false, "with -drain or -open: print each run's report as one JSON object")
	)
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *seed == 0 {
		var b [8]byte
		_, _ = rand.Read(b[:])
		*seed = binary.LittleEndian.Uint64(b[:]) >> 1
	}
	level := slog.LevelWarn
	if *verbose {
		level = slog.LevelInfo
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
	var runs []string
	switch *dbs {
	case "sqlite", "postgres":
		runs = []string{*dbs}
	case "both":
		runs = []string{"sqlite", "postgres"}
	default:
		fmt.Fprintf(stderr, "pixgate-sim: -db %q must be sqlite, postgres or both\n", *dbs)
		return 2
	}
	if *pgURL == "" && strings.Contains(*dbs, "postgres") || *dbs == "both" && *pgURL == "" {
		fmt.Fprintln(stderr, "pixgate-sim: PostgreSQL runs need -postgres-url or PIXGATE_TEST_POSTGRES_URL")
		return 2
	}
	root := *dir
	if root == "" {
		var err error
		if root, err = os.MkdirTemp("", "pixgate-sim-"); err != nil {
			fmt.Fprintf(stderr, "pixgate-sim: %v\n", err)
			return 1
		}
	}
	if *bin == "" {
		*bin = filepath.Join(root, "pixgate")
		build := exec.CommandContext(ctx, "go", "build", "-o", *bin, "github.com/pixgate/pixgate/cmd/pixgate") //nolint:gosec // G204: the output path is the operator's own flag
		build.Stdout, build.Stderr = stderr, stderr
		if err := build.Run(); err != nil {
			fmt.Fprintf(stderr, "pixgate-sim: build pixgate: %v\n", err)
			return 1
		}
	}
	if *drain > 0 || *open > 0 {
		for _, db := range runs {
			var r measurement
			var err error
			if *open > 0 {
				r, err = openLoop(ctx, sim.OpenLoopConfig{DB: db, PostgresURL: *pgURL, Pixgate: *bin, Dir: filepath.Join(root, db),
					Rate: *open, For: *openFor, Latency: *latency, Log: log}, *tracing)
			} else {
				r, err = sim.Drain(ctx, sim.DrainConfig{DB: db, PostgresURL: *pgURL, Pixgate: *bin, Dir: filepath.Join(root, db),
					Payouts: *drain, Concurrency: *workers * 4, Latency: *latency, Log: log})
			}
			if err != nil {
				fmt.Fprintf(stderr, "pixgate-sim: %v\n", err)
				return 1
			}
			if err := printMeasurement(stdout, db, r, *asJSON); err != nil {
				fmt.Fprintf(stderr, "pixgate-sim: %v\n", err)
				return 1
			}
		}
		if *dir == "" && !*keep {
			_ = os.RemoveAll(root)
		}
		return 0
	}
	failed := false
	for _, db := range runs {
		runDir := filepath.Join(root, db)
		if err := os.MkdirAll(runDir, 0o750); err != nil {
			fmt.Fprintf(stderr, "pixgate-sim: %v\n", err)
			return 1
		}
		r, err := sim.Run(ctx, sim.Config{Seed: *seed, DB: db, PostgresURL: *pgURL, Nodes: *nodes, Ops: *ops, Kills: *kills,
			Workers: *workers, Pixgate: *bin, Dir: runDir, Quiesce: *quiesce, Keep: *keep, Log: log})
		if err != nil {
			fmt.Fprintf(stderr, "pixgate-sim: %v\n", err)
			return 1
		}
		fmt.Fprint(stdout, r.String())
		if r.Failed() {
			failed = true
			fmt.Fprintf(stdout, "FAILED. The nodes' logs are in %s. Replay with:\n  go run ./cmd/pixgate-sim -seed %d -db %s -ops %d -kills %d -workers %d%s\n\n",
				runDir, *seed, db, *ops, *kills, *workers, nodesFlag(*nodes))
		} else {
			fmt.Fprintln(stdout, "passed")
			fmt.Fprintln(stdout)
		}
	}
	if failed {
		return 1
	}
	if *dir == "" && !*keep {
		_ = os.RemoveAll(root)
	}
	return 0
}

// openLoop runs sim.OpenLoop, tracing into dir/open-<db>.csv when dir is
// set.
func openLoop(ctx context.Context, cfg sim.OpenLoopConfig, dir string) (sim.OpenLoopReport, error) {
	if dir == "" {
		return sim.OpenLoop(ctx, cfg)
	}
	f, err := os.Create(filepath.Join(dir, "open-"+cfg.DB+".csv")) //nolint:gosec // G304: the operator's own flag
	if err != nil {
		return sim.OpenLoopReport{}, fmt.Errorf("trace: %w", err)
	}
	cfg.Trace = f
	r, err := sim.OpenLoop(ctx, cfg)
	if cerr := f.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("trace: %w", cerr)
	}
	return r, err
}

// measurement is the report of -drain or -open.
type measurement interface {
	fmt.Stringer
	json.Marshaler
}

// printMeasurement writes r as "db: line", or as one JSON object that
// names db.
func printMeasurement(w io.Writer, db string, r measurement, asJSON bool) error {
	if !asJSON {
		_, err := fmt.Fprintf(w, "%s: %s\n", db, r)
		return err
	}
	b, err := r.MarshalJSON()
	if err != nil {
		return err
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	m["db"] = db
	b, err = json.Marshal(m)
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	_, err = fmt.Fprintf(w, "%s\n", b)
	return err
}

func nodesFlag(n int) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf(" -nodes %d", n)
}
