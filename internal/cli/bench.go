package cli

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/pixgate/pixgate/internal/bench"
	"github.com/pixgate/pixgate/internal/pix"
)

// benchCmd is `pixgate bench`: a load generator against a running server.
type benchCmd struct {
	Target               string        `default:"http://127.0.0.1:8080" help:"Base URL of the running pixgate server (sandbox) under test."`
	Duration             time.Duration `default:"10s" help:"How long to send load."`
	Warmup               time.Duration `default:"0s" help:"Load sent first, with no pause before --duration: checked, but not in the figures (a steady state to measure, e.g. at a --rate)."`
	Concurrency          int           `default:"16" help:"Closed loop: number of workers, each sending its next request when its last one answered (ignored with --rate)."`
	Rate                 float64       `default:"0" help:"Open loop: requests per second in total, each sent at its scheduled time; latency counts from that time. 0 = closed loop."`
	MaxInFlight          int           `name:"max-in-flight" default:"4096" help:"Open loop: most requests in flight at once."`
	Mix                  string        `default:"charge=20,pay=15,payout=25,balance=15,lookup=15,history=10" help:"Operation weights: charge, pay (sandbox payment of a charge the bench created), payout, balance, lookup, history."`
	Client               []string      `name:"client" sep:"none" placeholder:"ID:SECRET" help:"An existing client to use (repeatable)."`
	CreateClients        int           `name:"create-clients" placeholder:"N" help:"Create N clients first, as 'pixgate clients create' does, in the server's database (--database-url, --env)."`
	Fund                 string        `default:"100000.00" help:"Reais credited to each client before the load (one sandbox charge, paid), for payouts to draw on."`
	PayoutFailPercent    int           `name:"payout-fail-percent" default:"5" help:"Percent of payouts to a sandbox key that fails (funds come back)."`
	PayoutReversePercent int           `name:"payout-reverse-percent" default:"5" help:"Percent of payouts to a sandbox key that completes and is then returned."`
	WebhookURL           string        `name:"webhook-url" help:"postbackUrl/callbackUrl of the bench's operations (default: a receiver the bench runs on 127.0.0.1)."`
	SettleTimeout        time.Duration `name:"settle-timeout" default:"60s" help:"Longest wait for pending payouts to settle before the check."`
	Timeout              time.Duration `default:"30s" help:"Per-request timeout."`
	JSON                 bool          `name:"json" help:"Print one JSON document instead of the table."`
}

// Help is shown by `pixgate bench --help` below the one-line description.
func (benchCmd) Help() string {
	return `Drives a RUNNING pixgate server (sandbox environment) with a weighted mix of
operations, reports per operation count, errors by status, throughput and
p50/p95/p99 latency, then checks from outside, through the API: every
acknowledged charge and payout is found by payment_id with its amount, tax and
status (a paid charge reads PAID; payouts are awaited until settled), and each
client's balance equals its balance before the run plus what the acknowledged
operations imply. Any mismatch is listed and the exit code is 1.

Clients: --client ID:SECRET (repeatable) and/or --create-clients N, which
opens the server's database (--database-url, same --env) and creates N clients
with a 0.99% cash-in fee and a R$ 0.50 payout fee. Use clients nobody else
uses during the run; a client that already has transactions must first hold
still (nothing pending, available unchanged for 3 s).

Rate limit: the server accepts --rate-limit requests per client per rolling
60 s (default 100, i.e. 1.7 req/s per client). A load of R req/s needs at
least R*60/limit clients, so start the server under test with a high limit
and use several clients, for example (about 64,000 req/s of headroom):

  pixgate serve --database-url ./bench.db --rate-limit 60000 &
  pixgate bench --database-url ./bench.db --create-clients 64 --concurrency 32 --duration 30s

Do not use an absurd limit such as 1000000000: the in-memory limiter keeps
24 bytes per allowed request per client, allocated up front, and the
server's garbage collector then dominates what you measure.

Requests refused with 429 are reported as errors.`
}

func (a *app) bench(ctx context.Context, cmd benchCmd) error {
	tuneGC()
	var errs []error
	mix, err := bench.ParseMix(cmd.Mix)
	if err != nil {
		errs = append(errs, fmt.Errorf("invalid --mix: %w", err))
	}
	var creds []bench.Credential
	for _, s := range cmd.Client {
		c, err := bench.ParseCredential(s)
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
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	return bench.Run(ctx, bench.Config{
		Target: cmd.Target, Duration: cmd.Duration, Warmup: cmd.Warmup, Concurrency: cmd.Concurrency, Rate: cmd.Rate, MaxInFlight: cmd.MaxInFlight,
		Mix: mix, Clients: creds, CreateClients: cmd.CreateClients, DatabaseURL: a.settings.DatabaseURL, Env: a.settings.Env,
		Fund: fund, PayoutFailPercent: cmd.PayoutFailPercent, PayoutReversePercent: cmd.PayoutReversePercent,
		WebhookURL: cmd.WebhookURL, SettleTimeout: cmd.SettleTimeout, RequestTimeout: cmd.Timeout,
		JSON: cmd.JSON, Progress: a.stderr,
	}, a.stdout)
}
