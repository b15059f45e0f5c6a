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

// options are the command's flags.
type options struct {
	seed    uint64
	dbs     string
	pgURL   string
	nodes   int
	ops     int
	kills   int
	workers int
	bin     string
	dir     string
	quiesce time.Duration
	keep    bool
	verbose bool
	drain   int
	batches int
	latency time.Duration
	open    float64
	openFor time.Duration
	tracing string
	asJSON  bool
}

// parseFlags reads args into options; false when they are not valid (the
// flag package has said why).
func parseFlags(args []string, stderr io.Writer) (options, bool) {
	fs := flag.NewFlagSet("pixgate-sim", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o options
	fs.Uint64Var(&o.seed, "seed", 0, "the run's seed (0: a random one, printed)")
	fs.StringVar(&o.dbs, "db", "sqlite", "sqlite, postgres, or both (one run each, in turn)")
	fs.StringVar(&o.pgURL, "postgres-url", os.Getenv("PIXGATE_TEST_POSTGRES_URL"), "PostgreSQL server in which each run creates its own database (default $PIXGATE_TEST_POSTGRES_URL)")
	fs.IntVar(&o.nodes, "nodes", 0, "serve processes (default: 1 on SQLite, 2 on PostgreSQL)")
	fs.IntVar(&o.ops, "ops", 300, "operations the workload issues")
	fs.IntVar(&o.kills, "kills", 3, "SIGKILLs of a node during the run")
	fs.IntVar(&o.workers, "workers", 8, "operations in flight at once")
	fs.StringVar(&o.bin, "pixgate", "", "the pixgate binary (default: built from this module)")
	fs.StringVar(&o.dir, "dir", "", "directory for the run's files (default: a new temporary one, removed after a passing run)")
	fs.DurationVar(&o.quiesce, "quiesce", 3*time.Minute, "longest wait for the system to settle after the workload")
	fs.BoolVar(&o.keep, "keep", false, "keep the PostgreSQL database and the files after the run")
	fs.BoolVar(&o.verbose, "v", false, "log progress to stderr")
	fs.IntVar(&o.drain, "drain", 0, "instead of a simulation, measure how fast this many payouts reach the PSP (no faults)")
	fs.IntVar(&o.batches, "batches", 0, "with -drain: send this many batches of -drain payouts (at most 1000) instead of single payouts, one after another")
	fs.DurationVar(&o.latency, "latency", 0, "with -drain or -open: the PSP's latency per call (jitter ±20 %)")
	fs.Float64Var(&o.open, "open", 0, "instead of a simulation, offer this many payouts a second, open loop, for -for, to a PSP that settles at once, and measure them")
	fs.DurationVar(&o.openFor, "for", time.Minute, "with -open: how long the payouts are offered")
	fs.StringVar(&o.tracing, "trace", "", "with -open: a directory where each run writes open-<db>.csv, one line per payout (see docs/simulation.md)")
	fs.BoolVar(&o.asJSON, "json", false, "with -drain or -open: print each run's report as one JSON object")
	if err := fs.Parse(args); err != nil {
		return options{}, false
	}
	if o.seed == 0 {
		var b [8]byte
		_, _ = rand.Read(b[:])
		o.seed = binary.LittleEndian.Uint64(b[:]) >> 1
	}
	return o, true
}

// runs are the databases -db names, one run each; false (said on stderr)
// when -db or the PostgreSQL URL is wrong.
func (o options) runs(stderr io.Writer) ([]string, bool) {
	var runs []string
	switch o.dbs {
	case "sqlite", "postgres":
		runs = []string{o.dbs}
	case "both":
		runs = []string{"sqlite", "postgres"}
	default:
		fmt.Fprintf(stderr, "pixgate-sim: -db %q must be sqlite, postgres or both\n", o.dbs)
		return nil, false
	}
	if o.pgURL == "" && strings.Contains(o.dbs, "postgres") || o.dbs == "both" && o.pgURL == "" {
		fmt.Fprintln(stderr, "pixgate-sim: PostgreSQL runs need -postgres-url or PIXGATE_TEST_POSTGRES_URL")
		return nil, false
	}
	return runs, true
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	o, ok := parseFlags(args, stderr)
	if !ok {
		return 2
	}
	level := slog.LevelWarn
	if o.verbose {
		level = slog.LevelInfo
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
	runs, ok := o.runs(stderr)
	if !ok {
		return 2
	}
	root := o.dir
	if root == "" {
		var err error
		if root, err = os.MkdirTemp("", "pixgate-sim-"); err != nil {
			fmt.Fprintf(stderr, "pixgate-sim: %v\n", err)
			return 1
		}
	}
	if o.bin == "" {
		o.bin = filepath.Join(root, "pixgate")
		build := exec.CommandContext(ctx, "go", "build", "-o", o.bin, "github.com/pixgate/pixgate/cmd/pixgate") //nolint:gosec // G204: the output path is the operator's own flag
		build.Stdout, build.Stderr = stderr, stderr
		if err := build.Run(); err != nil {
			fmt.Fprintf(stderr, "pixgate-sim: build pixgate: %v\n", err)
			return 1
		}
	}
	var code int
	if o.drain > 0 || o.open > 0 {
		code = o.measure(ctx, runs, root, log, stdout, stderr)
	} else {
		code = o.simulate(ctx, runs, root, log, stdout, stderr)
	}
	if code == 0 && o.dir == "" && !o.keep {
		_ = os.RemoveAll(root)
	}
	return code
}

// measure runs -drain or -open on each database of runs, printing each
// report.
func (o options) measure(ctx context.Context, runs []string, root string, log *slog.Logger, stdout, stderr io.Writer) int {
	for _, db := range runs {
		var r measurement
		var err error
		if o.open > 0 {
			r, err = openLoop(ctx, sim.OpenLoopConfig{DB: db, PostgresURL: o.pgURL, Pixgate: o.bin, Dir: filepath.Join(root, db),
				Rate: o.open, For: o.openFor, Latency: o.latency, Log: log}, o.tracing)
		} else if o.batches > 0 {
			r, err = sim.DrainBatches(ctx, sim.DrainConfig{DB: db, PostgresURL: o.pgURL, Pixgate: o.bin, Dir: filepath.Join(root, db),
				Payouts: o.drain, Latency: o.latency, Log: log}, o.batches)
		} else {
			r, err = sim.Drain(ctx, sim.DrainConfig{DB: db, PostgresURL: o.pgURL, Pixgate: o.bin, Dir: filepath.Join(root, db),
				Payouts: o.drain, Concurrency: o.workers * 4, Latency: o.latency, Log: log})
		}
		if err != nil {
			fmt.Fprintf(stderr, "pixgate-sim: %v\n", err)
			return 1
		}
		if err := printMeasurement(stdout, db, r, o.asJSON); err != nil {
			fmt.Fprintf(stderr, "pixgate-sim: %v\n", err)
			return 1
		}
	}
	return 0
}

// simulate runs the simulation on each database of runs, printing each
// report and, for a failed run, the command that replays it; 1 if any
// failed.
func (o options) simulate(ctx context.Context, runs []string, root string, log *slog.Logger, stdout, stderr io.Writer) int {
	failed := false
	for _, db := range runs {
		runDir := filepath.Join(root, db)
		if err := os.MkdirAll(runDir, 0o750); err != nil {
			fmt.Fprintf(stderr, "pixgate-sim: %v\n", err)
			return 1
		}
		r, err := sim.Run(ctx, sim.Config{Seed: o.seed, DB: db, PostgresURL: o.pgURL, Nodes: o.nodes, Ops: o.ops, Kills: o.kills,
			Workers: o.workers, Pixgate: o.bin, Dir: runDir, Quiesce: o.quiesce, Keep: o.keep, Log: log})
		if err != nil {
			fmt.Fprintf(stderr, "pixgate-sim: %v\n", err)
			return 1
		}
		fmt.Fprint(stdout, r.String())
		if r.Failed() {
			failed = true
			fmt.Fprintf(stdout, "FAILED. The nodes' logs are in %s. Replay with:\n  go run ./cmd/pixgate-sim -seed %d -db %s -ops %d -kills %d -workers %d%s\n\n",
				runDir, o.seed, db, o.ops, o.kills, o.workers, nodesFlag(o.nodes))
		} else {
			fmt.Fprintln(stdout, "passed")
			fmt.Fprintln(stdout)
		}
	}
	if failed {
		return 1
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
