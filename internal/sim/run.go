package sim

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"
)

// Config is one run of the simulation.
type Config struct {
	Seed uint64
	// DB is "sqlite" or "postgres"; PostgresURL names the server in which
	// the run creates (and drops) its own database.
	DB          string
	PostgresURL string
	// Nodes is how many serve processes share the database: 1 on SQLite
	// (its default), 2 by default on PostgreSQL.
	Nodes int
	// Ops is how many operations the workload issues, Kills how many
	// SIGKILLs the faults deliver, Workers how many operations run at
	// once (default 8).
	Ops, Kills, Workers int
	// Pixgate is the pixgate binary to run.
	Pixgate string
	// Dir holds the run's files (the SQLite database, each node's log).
	Dir string
	// Quiesce bounds the wait for the system to settle after the
	// workload (default 3 minutes: a send held by a killed node is
	// retaken after its 30 s lease).
	Quiesce time.Duration
	// Keep leaves the PostgreSQL database in place after the run.
	Keep bool
	Log  *slog.Logger
}

// withDefaults fills what cfg leaves zero: two nodes on PostgreSQL (one
// on SQLite), 8 workers, 3 minutes to settle, a silent log.
func (cfg Config) withDefaults() Config {
	if cfg.Nodes <= 0 {
		cfg.Nodes = 1
		if cfg.DB == "postgres" {
			cfg.Nodes = 2
		}
	}
	if cfg.Workers <= 0 {
		cfg.Workers = 8
	}
	if cfg.Quiesce <= 0 {
		cfg.Quiesce = 3 * time.Minute
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	return cfg
}

// Run runs the simulation cfg describes and returns its report. The error
// is the simulation's own (the system could not be started); what the
// system did wrong is in the report.
func Run(ctx context.Context, cfg Config) (Report, error) {
	start := time.Now()
	cfg = cfg.withDefaults()
	if cfg.DB != "sqlite" && cfg.DB != "postgres" {
		return Report{}, fmt.Errorf("sim: database %q must be sqlite or postgres", cfg.DB)
	}
	cl, err := StartCluster(ctx, ClusterConfig{Pixgate: cfg.Pixgate, DB: cfg.DB, PostgresURL: cfg.PostgresURL, Nodes: cfg.Nodes,
		Dir: cfg.Dir, Log: cfg.Log, Seed: cfg.Seed, Keep: cfg.Keep})
	if err != nil {
		return Report{}, fmt.Errorf("sim: start the system: %w", err)
	}
	defer func() {
		if err := cl.Close(); err != nil {
			cfg.Log.Warn("close the system", "error", err.Error())
		}
	}()
	clients := cl.Clients()
	api := NewAPI(cl.Addrs(), cl.Up, clients)
	psp := cl.PSP()
	w := NewWorkload(cfg.Seed, len(clients), api, psp, cl.Receiver().URL)
	w.hooks = cl.Receiver()
	f := NewFaults(cfg.Seed, cfg.Ops, cfg.Kills, Target{PSP: psp, Nodes: cfg.Nodes, Kill: cl.Kill, Restart: cl.Restart, Up: cl.Up,
		Receiver: cl.Receiver().SetMode, Latency: psp.SetLatency}, cfg.Log)

	// The workload: operations drawn in order, run by a pool of workers;
	// the faults due before each operation are injected as it is drawn.
	ops := make(chan op)
	var wg sync.WaitGroup
	for range cfg.Workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for o := range ops {
				w.Run(ctx, o)
			}
		}()
	}
	for n := 1; n <= cfg.Ops && ctx.Err() == nil; n++ {
		f.Before(ctx, n)
		ops <- w.Next()
		if n%500 == 0 {
			cfg.Log.Info("operations issued", "n", n)
		}
	}
	close(ops)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return Report{}, fmt.Errorf("sim: %w", err)
	}
	cfg.Log.Info("workload done; calming the faults and waiting for the system to settle")
	f.Calm(ctx)

	in := AuditInput{DB: cl.DB(), Clients: api.Clients(), Keys: w.Keys(), Call: api.Call} // with the sub-accounts made
	observe := func() {
		in.PSP = psp.State()
		in.Deliveries = cl.Receiver().Deliveries()
		in.InvalidSignatures = cl.Receiver().Invalid()
	}
	redelivery := &redelivery{done: map[string]bool{}}
	quiesced := false
	deadline := time.Now().Add(cfg.Quiesce)
	for {
		psp.Settle(ctx)
		redelivery.run(ctx, cl, api, api.Clients()) // the sub-accounts too, whose pix.split.received may have failed
		observe()
		ok, moving, err := Settled(ctx, in)
		if err != nil && !errors.Is(err, context.Canceled) {
			cfg.Log.Warn("settled?", "error", err.Error())
		}
		if ok {
			quiesced = true
			break
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			cfg.Log.Warn("the system did not settle", "still", moving)
			break
		}
		cfg.Log.Debug("settling", "still", moving)
		time.Sleep(time.Second)
	}
	observe()
	faults, kills := f.Counts()
	r := Report{Seed: cfg.Seed, DB: cfg.DB, Nodes: cfg.Nodes, Ops: w.Counts(), Faults: faults, Kills: kills, Quiesced: quiesced}
	r.Checks = append([]Check{w.Check(), redelivery.check()}, Audit(ctx, in)...)
	r.Elapsed = time.Since(start)
	return r, nil
}

// redelivery is the merchant's side of events whose delivery pixgate gave
// up on while the receiver was failing: once the receiver is healthy, each
// is sent again through POST /api/v1/webhooks/deliveries/{id}/retry, as a
// merchant does after an outage. Giving up is right only if the receiver
// refused every attempt; an event given up on although the receiver
// accepted it is a violation.
type redelivery struct {
	done    map[string]bool
	checked int
	issues  []string
}

func (rd *redelivery) run(ctx context.Context, cl *Cluster, api *API, clients []Credentials) {
	// The failing events only (the panel's own query), not the whole table
	// every second of the wait.
	events, err := cl.DB().FailingEvents(ctx, "", 10000)
	if err != nil {
		return
	}
	accepted := map[string]bool{}
	for _, d := range cl.Receiver().Deliveries() {
		if d.Valid && d.Status >= 200 && d.Status < 300 {
			accepted[d.WebhookID] = true
		}
	}
	for _, e := range events {
		if e.Status != "failed" || rd.done[e.ID] {
			continue
		}
		rd.done[e.ID] = true
		rd.checked++
		if accepted[e.ID] {
			rd.issues = append(rd.issues, fmt.Sprintf("event %s (%s) was given up on although the receiver accepted it", e.ID, e.Type))
		}
		for i, c := range clients {
			if c.ClientID == e.ClientID {
				_, _, _, _ = api.Call(ctx, i, http.MethodPost, "/api/v1/webhooks/deliveries/"+e.ID+"/retry", nil, nil)
			}
		}
	}
}

func (rd *redelivery) check() Check {
	return Check{Name: "events given up on were refused at every attempt", Checked: rd.checked, Violations: rd.issues}
}
