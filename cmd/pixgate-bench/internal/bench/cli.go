package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"
	"time"

	"github.com/alecthomas/kong"

	"github.com/pixgate/pixgate/internal/pix"
)

// command is pixgate-bench's command line.
type command struct {
	Target               string        `default:"http://127.0.0.1:8080" help:"Base URL of the running pixgate server (sandbox) under test."`
	Duration             time.Duration `default:"10s" help:"How long to send load."`
	Warmup               time.Duration `default:"0s" help:"Load sent first, with no pause before --duration: checked, but not in the figures (a steady state to measure, e.g. at a --rate)."`
	Concurrency          int           `default:"16" help:"Closed loop: number of workers, each sending its next request when its last one answered (ignored with --rate)."`
	Rate                 float64       `default:"0" help:"Open loop: requests per second in total, each sent at its scheduled time; latency counts from that time. 0 = closed loop."`
	MaxInFlight          int           `name:"max-in-flight" default:"4096" help:"Open loop: most requests in flight at once."`
	Mix                  string        `default:"charge=20,pay=15,payout=25,balance=15,lookup=15,history=10" help:"Operation weights: charge, pay (sandbox payment of a charge the bench created), payout, balance, lookup, history."`
	Client               []string      `name:"client" sep:"none" placeholder:"ID:SECRET" help:"An existing client to use (repeatable)."`
	CreateClients        int           `name:"create-clients" placeholder:"N" help:"Create N clients first by running 'pixgate clients create' on the server's database (--database-url, --env)."`
	Pixgate              string        `name:"pixgate" placeholder:"PATH" help:"The pixgate binary that creates clients (default: pixgate beside pixgate-bench, else on the PATH)."`
	DatabaseURL          string        `name:"database-url" placeholder:"URL" help:"The running server's database, passed to 'pixgate clients create' (default: pixgate's own, PIXGATE_DATABASE_URL or ./data/pixgate.db)."`
	Env                  string        `name:"env" help:"The running server's environment, passed to 'pixgate clients create' (default: pixgate's own, PIXGATE_ENV or sandbox)."`
	Fund                 string        `default:"100000.00" help:"Reais credited to each client before the load (one charge, paid in the sandbox or through --fund-via-psp-sim), for payouts to draw on."`
	FundViaPSPSim        string        `name:"fund-via-psp-sim" placeholder:"URL" help:"Pay the funding charges through the control API of a pixgate psp-sim at URL (e.g. http://127.0.0.1:8444), for a server whose provider (efi, apipix) points at that simulator."`
	PayoutFailPercent    int           `name:"payout-fail-percent" default:"5" help:"Percent of payouts to a sandbox key that fails (funds come back)."`
	PayoutReversePercent int           `name:"payout-reverse-percent" default:"5" help:"Percent of payouts to a sandbox key that completes and is then returned."`
	WebhookURL           string        `name:"webhook-url" help:"postbackUrl/callbackUrl of the bench's operations (default: a receiver the bench runs on 127.0.0.1)."`
	SettleTimeout        time.Duration `name:"settle-timeout" default:"60s" help:"Longest wait for pending payouts to settle before the check."`
	Timeout              time.Duration `default:"30s" help:"Per-request timeout."`
	JSON                 bool          `name:"json" help:"Print one JSON document instead of the table."`
}

// Help is shown by `pixgate-bench --help` below the one-line description.
func (command) Help() string {
	return `Drives a RUNNING pixgate server (sandbox environment) with a weighted mix of
operations, reports per operation count, errors by status, throughput and
p50/p95/p99 latency, then checks from outside, through the API: every
acknowledged charge and payout is found by payment_id with its amount, tax and
status (a paid charge reads PAID; payouts are awaited until settled), and each
client's balance equals its balance before the run plus what the acknowledged
operations imply. Any mismatch is listed and the exit code is 1.

Clients: --client ID:SECRET (repeatable) and/or --create-clients N, which
runs 'pixgate clients create' (--pixgate) N times on the server's database
(--database-url, same --env), with a 0.99% cash-in fee and a R$ 0.50 payout
fee. Use clients nobody else
uses during the run; a client that already has transactions must first hold
still (nothing pending, available unchanged for 3 s).

Rate limit: the server accepts --rate-limit requests per client per rolling
60 s (default 100, i.e. 1.7 req/s per client). A load of R req/s needs at
least R*60/limit clients, so start the server under test with a high limit
and use several clients, for example (about 64,000 req/s of headroom):

  pixgate serve --database-url ./bench.db --rate-limit 60000 &
  pixgate-bench --database-url ./bench.db --create-clients 64 --concurrency 32 --duration 30s

Do not use an absurd limit such as 1000000000: the in-memory limiter keeps
24 bytes per allowed request per client, allocated up front, and the
server's garbage collector then dominates what you measure.

Requests refused with 429 are reported as errors.`
}

// gcPercent is the GOGC pixgate-bench runs with unless GOGC is set: as for
// pixgate serve, fewer collections for a small heap leave more CPU to the
// server it shares the machine with.
const gcPercent = 400

type exitCode int

// Main runs pixgate-bench with args (without the program name) and returns
// the process exit code: 0 success, 1 failure (an invalid flag value, a run
// that could not be made or a failed check), 2 bad usage.
func Main(ctx context.Context, args []string, stdout, stderr io.Writer) (code int) {
	var cmd command
	parser, err := kong.New(&cmd, kong.Name("pixgate-bench"),
		kong.Description("pixgate-bench — load-test a running pixgate server (sandbox) and check every acknowledged operation from outside."),
		kong.Writers(stdout, stderr),
		kong.Exit(func(c int) { panic(exitCode(c)) }),
		kong.UsageOnError())
	if err != nil {
		fmt.Fprintf(stderr, "pixgate-bench: %v\n", err)
		return 2
	}
	defer func() {
		if v := recover(); v != nil {
			c, ok := v.(exitCode)
			if !ok {
				panic(v)
			}
			code = int(c)
		}
	}()
	if _, err := parser.Parse(args); err != nil {
		fmt.Fprintf(stderr, "pixgate-bench: %v\n", err)
		return 2
	}
	cfg, err := cmd.config(stderr)
	if err != nil {
		printErr(stderr, err)
		return 1
	}
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(gcPercent)
	}
	if err := Run(ctx, cfg, stdout); err != nil {
		printErr(stderr, err)
		return 1
	}
	return 0
}

func printErr(w io.Writer, err error) {
	for _, line := range strings.Split(err.Error(), "\n") {
		fmt.Fprintf(w, "pixgate-bench: %s\n", line)
	}
}

// config turns the flags into a Config, listing every invalid one.
func (cmd command) config(progress io.Writer) (Config, error) {
	var errs []error
	mix, err := ParseMix(cmd.Mix)
	if err != nil {
		errs = append(errs, fmt.Errorf("invalid --mix: %w", err))
	}
	var creds []Credential
	for _, s := range cmd.Client {
		c, err := ParseCredential(s)
		if err != nil {
			errs = append(errs, fmt.Errorf("invalid --client: %w", err))
			continue
		}
		creds = append(creds, c)
	}
	fund, err := pix.ParseAmountString(cmd.Fund)
	if err != nil || fund <= 0 {
		errs = append(errs, fmt.Errorf("invalid --fund %q: an amount in reais such as 100000.00", cmd.Fund))
	}
	return Config{
		Target: cmd.Target, Duration: cmd.Duration, Warmup: cmd.Warmup, Concurrency: cmd.Concurrency, Rate: cmd.Rate, MaxInFlight: cmd.MaxInFlight,
		Mix: mix, Clients: creds, CreateClients: cmd.CreateClients, Pixgate: cmd.Pixgate, DatabaseURL: cmd.DatabaseURL, Env: cmd.Env,
		Fund: fund, FundViaPSPSim: cmd.FundViaPSPSim, PayoutFailPercent: cmd.PayoutFailPercent, PayoutReversePercent: cmd.PayoutReversePercent,
		WebhookURL: cmd.WebhookURL, SettleTimeout: cmd.SettleTimeout, RequestTimeout: cmd.Timeout,
		JSON: cmd.JSON, Progress: progress,
	}, errors.Join(errs...)
}
