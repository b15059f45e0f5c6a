package sim

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/provider"
	"github.com/pixgate/pixgate/internal/pspsim"
	"github.com/pixgate/pixgate/internal/store"
	"github.com/pixgate/pixgate/internal/store/postgres"
	"github.com/pixgate/pixgate/internal/store/sqlite"
)

// ClusterConfig describes the system under test.
type ClusterConfig struct {
	// Pixgate is the path of the pixgate binary (required).
	Pixgate string
	// DB is "sqlite" or "postgres".
	DB string
	// PostgresURL (postgres) names a server: the cluster creates a fresh
	// database pixgate_sim_<random> in it, and drops it on Close unless
	// Keep.
	PostgresURL string
	// Nodes is how many serve processes run: SQLite allows 1 (the
	// default); on PostgreSQL they share the database (default 2).
	Nodes int
	// Dir is the work directory: the SQLite file, the PSP's certificates,
	// each node's log (required).
	Dir string
	Log *slog.Logger
	// Seed seeds the receiver's failure decisions.
	Seed uint64
	// Env holds extra PIXGATE_* settings for serve, which override the
	// cluster's defaults (not the address, database or PSP webhook URL of
	// a node, which the cluster wires itself).
	Env map[string]string
	// Keep leaves the PostgreSQL database in place on Close.
	Keep bool
	// SettleAtOnce makes the PSP settle each send and devolução at its
	// next look (a status read, or its settle tick every 10 ms) instead of
	// keeping it EM_PROCESSAMENTO for settleDelay.
	SettleAtOnce bool
}

// settleDelay is how long the PSP keeps a transfer EM_PROCESSAMENTO unless
// SettleAtOnce: long enough that pixgate reads some sends still pending.
const settleDelay = 300 * time.Millisecond

// pspWebhookSecret is the secret part of every node's PSP webhook URL.
const pspWebhookSecret = "simPspWebhook_0123456789-abcdefghijklmnop" //nolint:gosec // G101: a throwaway secret between loopback processes of a test tool

// nodeStartTimeout bounds how long a node may take to answer /healthz.
const nodeStartTimeout = time.Minute

// Cluster is the system under test: the PSP simulator in process, the
// merchants' webhook receiver, and `pixgate serve` processes on one
// database. Its methods are safe for concurrent use.
type Cluster struct {
	cfg     ClusterConfig
	log     *slog.Logger
	stop    context.CancelFunc // ends the PSP simulator
	psp     *pspsim.Server
	recv    *Receiver
	clients []Credentials
	dbURL   string // what serve's PIXGATE_DATABASE_URL says
	pgName  string // the PostgreSQL database created, "" on SQLite
	db      *store.DB
	env     []string // serve's environment but a node's own settings
	nodes   []*node
	http    *http.Client

	closeOnce sync.Once
	closeErr  error
}

// node is one serve process slot: its address and log stay across
// restarts.
type node struct {
	index   int
	addr    string
	logPath string

	mu     sync.Mutex
	cmd    *exec.Cmd     // nil before the first start
	exited chan struct{} // closed when cmd has exited
}

// StartCluster creates the database and the merchant clients, starts the
// PSP simulator, the receiver and every node, and returns once each node
// answers /healthz and the PSP has a registered webhook. On error,
// everything started is stopped again.
func StartCluster(ctx context.Context, cfg ClusterConfig) (_ *Cluster, err error) {
	if cfg.Pixgate == "" || cfg.Dir == "" {
		return nil, errors.New("cluster: Pixgate and Dir are required")
	}
	switch cfg.DB {
	case "sqlite":
		if cfg.Nodes == 0 {
			cfg.Nodes = 1
		}
		if cfg.Nodes != 1 {
			return nil, fmt.Errorf("cluster: SQLite runs one node, not %d", cfg.Nodes)
		}
	case "postgres":
		if cfg.PostgresURL == "" {
			return nil, errors.New("cluster: PostgresURL is required on postgres")
		}
		if cfg.Nodes == 0 {
			cfg.Nodes = 2
		}
	default:
		return nil, fmt.Errorf("cluster: database %q must be sqlite or postgres", cfg.DB)
	}
	if cfg.Nodes < 1 {
		return nil, fmt.Errorf("cluster: %d nodes", cfg.Nodes)
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if err := os.MkdirAll(cfg.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("cluster: %w", err)
	}
	c := &Cluster{cfg: cfg, log: cfg.Log, http: &http.Client{Timeout: 5 * time.Second}}
	defer func() {
		if err != nil {
			if cerr := c.Close(); cerr != nil {
				c.log.Warn("cluster: cleanup after a failed start", "error", cerr.Error())
			}
		}
	}()

	if err := c.createDatabase(ctx); err != nil {
		return nil, err
	}
	if err := c.createClients(ctx); err != nil {
		return nil, err
	}
	if c.recv, err = NewReceiver(c.clients, cfg.Seed); err != nil {
		return nil, fmt.Errorf("cluster: %w", err)
	}
	if err := c.startPSP(); err != nil {
		return nil, err
	}
	for i := range cfg.Nodes {
		addr, err := freePort()
		if err != nil {
			return nil, fmt.Errorf("cluster: node %d: %w", i, err)
		}
		c.nodes = append(c.nodes, &node{index: i, addr: addr, logPath: filepath.Join(cfg.Dir, fmt.Sprintf("node%d.log", i))})
	}
	// Nodes start together: on PostgreSQL they race to migrate the shared
	// database, which the migrations must survive.
	errs := make([]error, len(c.nodes))
	var wg sync.WaitGroup
	for i := range c.nodes {
		wg.Go(func() { errs[i] = c.start(ctx, i) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	if err := c.waitWebhook(ctx); err != nil {
		return nil, err
	}
	if c.db, err = c.openDB(ctx); err != nil {
		return nil, err
	}
	c.log.Info("cluster up", "db", cfg.DB, "nodes", c.Addrs(), "psp", c.psp.URL(), "dir", cfg.Dir)
	return c, nil
}

// createDatabase sets dbURL: the SQLite file in Dir, or a new PostgreSQL
// database on the configured server.
func (c *Cluster) createDatabase(ctx context.Context) error {
	if c.cfg.DB == "sqlite" {
		c.dbURL = filepath.Join(c.cfg.Dir, "pixgate.db")
		return nil
	}
	var b [8]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go ≥ 1.24)
	name := "pixgate_sim_" + hex.EncodeToString(b[:])
	u, err := withDatabase(c.cfg.PostgresURL, name)
	if err != nil {
		return fmt.Errorf("cluster: PostgreSQL URL: %w", err)
	}
	if err := adminExec(ctx, c.cfg.PostgresURL, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
		return fmt.Errorf("cluster: create database %s: %w", name, err)
	}
	c.dbURL, c.pgName = u, name
	c.log.Info("cluster: database created", "name", name)
	return nil
}

// createClients makes two production merchant clients with different
// fees through `pixgate clients create` (which migrates the database).
func (c *Cluster) createClients(ctx context.Context) error {
	for _, fees := range [][]string{
		{"--name", "Sim Loja A", "--cashin-fee-percent", "1", "--payout-fee-fixed", "0.50"},
		{"--name", "Sim Loja B", "--cashin-fee-percent", "2.5", "--cashin-fee-fixed", "0.10", "--payout-fee-percent", "0.5", "--payout-fee-fixed", "1.00"},
	} {
		args := append([]string{"clients", "create", "--env", pix.EnvProduction, "--database-url", c.dbURL}, fees...)
		cmd := exec.CommandContext(ctx, c.cfg.Pixgate, args...) //nolint:gosec // G204: runs the pixgate binary the caller built
		cmd.Env = baseEnv()
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			return fmt.Errorf("cluster: pixgate clients create: %w: %s", err, strings.TrimSpace(stderr.String()))
		}
		var cr Credentials
		if err := json.Unmarshal(out, &cr); err != nil {
			return fmt.Errorf("cluster: pixgate clients create: its output: %w", err)
		}
		if cr.ClientID == "" || cr.ClientSecret == "" || cr.WebhookSecret == "" {
			return errors.New("cluster: pixgate clients create printed no credentials")
		}
		c.clients = append(c.clients, cr)
	}
	return nil
}

// startPSP starts the simulator, writes its PKI to Dir and fills env with
// what points serve at it.
func (c *Cluster) startPSP() error {
	ctx, stop := context.WithCancel(context.Background())
	c.stop = stop
	delay := settleDelay
	if c.cfg.SettleAtOnce {
		delay = 0
	}
	c.psp = pspsim.New(pspsim.Options{
		SettleDelay:   delay,
		WebhookClient: &http.Client{Timeout: 5 * time.Second},
		Log:           c.log.With("component", "psp"),
	})
	if err := c.psp.Start(ctx); err != nil {
		return fmt.Errorf("cluster: %w", err)
	}
	o := c.psp.Options()
	dir := filepath.Join(c.cfg.Dir, "psp")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("cluster: %w", err)
	}
	files, err := o.PKI.WriteFiles(dir)
	if err != nil {
		return fmt.Errorf("cluster: PSP certificates: %w", err)
	}
	settings := map[string]string{
		"PIXGATE_ENV":                    pix.EnvProduction,
		"PIXGATE_PROVIDER":               provider.NameEfi,
		"PIXGATE_RATE_LIMIT":             "1000000",
		"PIXGATE_WEBHOOK_ALLOW_PRIVATE":  "true",
		"PIXGATE_WEBHOOK_RETRY_SCHEDULE": "200ms,200ms,500ms,1s,1s,2s,2s,2s,2s,2s,2s,2s",
		"PIXGATE_CHARGE_TTL":             "20s",
		// MED: infractions have no webhook, and returns one may lose.
		"PIXGATE_PSP_DISPUTES_INTERVAL": "2s",
		"PIXGATE_PSP_RETURNS_INTERVAL":  "5s",
		"PIXGATE_PSP_API_URL":           c.psp.URL(),
		"PIXGATE_PSP_CLIENT_ID":         o.ClientID,
		"PIXGATE_PSP_CLIENT_SECRET":     o.ClientSecret,
		"PIXGATE_PSP_CERT_FILE":         files.ClientCert,
		"PIXGATE_PSP_KEY_FILE":          files.ClientKey,
		"PIXGATE_PSP_CA_FILE":           files.CA,
		"PIXGATE_PSP_PIX_KEY":           o.PixKey,
		// The receiving account cycle charges name: without it the PSP
		// takes no recurrence.
		"PIXGATE_PSP_ACCOUNT_NUMBER": "12345-6",
		"PIXGATE_PSP_ACCOUNT_TYPE":   "CORRENTE",
	}
	for k, v := range c.cfg.Env {
		settings[k] = v
	}
	c.env = baseEnv()
	for k, v := range settings {
		c.env = append(c.env, k+"="+v)
	}
	return nil
}

// baseEnv is this process's environment without any PIXGATE_* setting:
// serve reads only what the cluster gives it.
func baseEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "PIXGATE_") {
			env = append(env, kv)
		}
	}
	return env
}

// webhookURL is where node i asks the PSP to deliver.
func (n *node) webhookURL() string {
	return "http://" + n.addr + "/psp/webhook/" + pspWebhookSecret
}

// start runs node i and waits until it answers /healthz. The node must
// not be running.
func (c *Cluster) start(ctx context.Context, i int) error {
	n := c.nodes[i]
	cmd, exited, err := c.spawn(n)
	if err != nil {
		return err
	}
	c.log.Info("node started", "node", i, "addr", n.addr, "pid", cmd.Process.Pid)

	ctx, cancel := context.WithTimeout(ctx, nodeStartTimeout)
	defer cancel()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for !c.healthy(ctx, n.addr) {
		select {
		case <-exited:
			return fmt.Errorf("cluster: node %d exited before answering /healthz (%s); its log ends:\n%s", i, cmd.ProcessState, tail(n.logPath, 20))
		case <-ctx.Done():
			return fmt.Errorf("cluster: node %d did not answer /healthz: %w; its log ends:\n%s", i, ctx.Err(), tail(n.logPath, 20))
		case <-tick.C:
		}
	}
	return nil
}

// spawn starts node n's process. The node's lock is held only while it
// starts, not while it comes up, so that Up and Kill answer meanwhile.
func (c *Cluster) spawn(n *node) (*exec.Cmd, chan struct{}, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.running() {
		return nil, nil, fmt.Errorf("cluster: node %d is already running", n.index)
	}
	logf, err := os.OpenFile(n.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, nil, fmt.Errorf("cluster: node %d log: %w", n.index, err)
	}
	cmd := exec.Command(c.cfg.Pixgate, "serve") //nolint:gosec // G204: runs the pixgate binary the caller built
	cmd.Env = append(append([]string(nil), c.env...),
		"PIXGATE_ADDR="+n.addr, "PIXGATE_DATABASE_URL="+c.dbURL, "PIXGATE_PSP_WEBHOOK_URL="+n.webhookURL())
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		_ = logf.Close()
		return nil, nil, fmt.Errorf("cluster: start node %d: %w", n.index, err)
	}
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait() // a killed node's exit status is expected
		_ = logf.Close()
		close(exited)
	}()
	n.cmd, n.exited = cmd, exited
	return cmd, exited, nil
}

// running reports whether the node's process runs; n.mu is held.
func (n *node) running() bool {
	if n.cmd == nil {
		return false
	}
	select {
	case <-n.exited:
		return false
	default:
		return true
	}
}

// healthy reports whether serve at addr answers GET /healthz with 200.
func (c *Cluster) healthy(ctx context.Context, addr string) bool {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/healthz", nil)
	if err != nil {
		return false
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return false
	}
	_ = resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// waitWebhook waits until the PSP holds the webhook URL of one of the
// nodes (serve registers it in the background after it starts).
func (c *Cluster) waitWebhook(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, nodeStartTimeout)
	defer cancel()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		got := c.psp.State().Webhook
		for _, n := range c.nodes {
			if got == n.webhookURL() {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("cluster: no node registered its webhook with the PSP: %w", ctx.Err())
		case <-tick.C:
		}
	}
}

// openDB opens the database the nodes share, for the auditor.
func (c *Cluster) openDB(ctx context.Context) (*store.DB, error) {
	var db *store.DB
	var err error
	if c.cfg.DB == "sqlite" {
		db, err = sqlite.Open(ctx, c.dbURL)
	} else {
		db, err = postgres.Open(ctx, c.dbURL, 4)
	}
	if err != nil {
		return nil, fmt.Errorf("cluster: open the database: %w", err)
	}
	return db, nil
}

// PSP is the simulated PSP every node talks to.
func (c *Cluster) PSP() *pspsim.Server { return c.psp }

// Clients are the two production merchant clients, with different fees.
func (c *Cluster) Clients() []Credentials { return append([]Credentials(nil), c.clients...) }

// Addrs are the "127.0.0.1:port" of each node, the same for the
// cluster's life.
func (c *Cluster) Addrs() []string {
	out := make([]string, len(c.nodes))
	for i, n := range c.nodes {
		out[i] = n.addr
	}
	return out
}

// Up reports whether node i's process is running (it may not answer yet).
func (c *Cluster) Up(i int) bool {
	n := c.nodes[i]
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.running()
}

// Kill sends node i SIGKILL and waits for it to exit; a node already down
// is left as it is.
func (c *Cluster) Kill(i int) error {
	n := c.nodes[i]
	n.mu.Lock()
	defer n.mu.Unlock()
	if !n.running() {
		return nil
	}
	if err := n.cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("cluster: kill node %d: %w", i, err)
	}
	<-n.exited
	c.log.Info("node killed", "node", i)
	return nil
}

// Restart starts node i again on its address and waits until it answers
// /healthz. The node must be down.
func (c *Cluster) Restart(ctx context.Context, i int) error { return c.start(ctx, i) }

// Receiver is the merchants' webhook receiver.
func (c *Cluster) Receiver() *Receiver { return c.recv }

// DB is the nodes' database opened directly, for the auditor.
func (c *Cluster) DB() *store.DB { return c.db }

// Database names the PostgreSQL database the cluster created ("" on
// SQLite): what to look at after a run with Keep.
func (c *Cluster) Database() string { return c.pgName }

// NodeLog is the path of node i's log: its stdout and stderr, appended
// across restarts.
func (c *Cluster) NodeLog(i int) string { return c.nodes[i].logPath }

// Close kills every node, closes the PSP, the receiver and the database,
// and drops the PostgreSQL database unless Keep.
func (c *Cluster) Close() error {
	c.closeOnce.Do(func() {
		var errs []error
		for i := range c.nodes {
			errs = append(errs, c.Kill(i))
		}
		if c.psp != nil {
			c.psp.Close()
		}
		if c.stop != nil {
			c.stop()
		}
		if c.recv != nil {
			errs = append(errs, c.recv.Close())
		}
		if c.db != nil {
			errs = append(errs, c.db.Close())
		}
		if c.pgName != "" && !c.cfg.Keep {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			if err := adminExec(ctx, c.cfg.PostgresURL, "DROP DATABASE IF EXISTS "+pgx.Identifier{c.pgName}.Sanitize()+" WITH (FORCE)"); err != nil {
				errs = append(errs, fmt.Errorf("cluster: drop database %s: %w", c.pgName, err))
			}
		} else if c.pgName != "" {
			c.log.Info("cluster: database kept", "name", c.pgName)
		}
		c.closeErr = errors.Join(errs...)
	})
	return c.closeErr
}

// freePort picks a free loopback port below the usual ephemeral range
// (32768 and up on Linux, 49152 and up elsewhere), so that no outgoing
// connection takes it while its node is down.
func freePort() (string, error) {
	const lo, hi = 20000, 32000
	for range 100 {
		n, err := rand.Int(rand.Reader, big.NewInt(hi-lo))
		if err != nil {
			return "", fmt.Errorf("pick a port: %w", err)
		}
		addr := fmt.Sprintf("127.0.0.1:%d", lo+n.Int64())
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			continue
		}
		if err := ln.Close(); err != nil {
			return "", fmt.Errorf("pick a port: %w", err)
		}
		return addr, nil
	}
	return "", errors.New("pick a port: no free port found")
}

// tail returns the last n lines of the file at path, for error messages.
func tail(path string, n int) string {
	b, err := os.ReadFile(path) //nolint:gosec // G304: a node's own log, in the work directory
	if err != nil {
		return "(" + err.Error() + ")"
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// adminExec runs one statement on a short-lived connection to the
// PostgreSQL server at adminURL.
func adminExec(ctx context.Context, adminURL, sql string) error {
	conn, err := pgx.Connect(ctx, adminURL)
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	defer func() { _ = conn.Close(context.WithoutCancel(ctx)) }()
	if _, err := conn.Exec(ctx, sql); err != nil {
		return fmt.Errorf("exec: %w", err)
	}
	return nil
}

// withDatabase returns the PostgreSQL URL s with its database replaced by
// name (serve takes URLs only, including the socket form
// postgres://user@/db?host=/dir).
func withDatabase(s, name string) (string, error) {
	if !strings.HasPrefix(s, "postgres://") && !strings.HasPrefix(s, "postgresql://") {
		return "", errors.New("not a postgres:// URL")
	}
	u, err := url.Parse(s)
	if err != nil {
		return "", errors.New("not a valid URL")
	}
	u.Path, u.RawPath = "/"+name, ""
	if q := u.Query(); q.Has("dbname") {
		// pgx lets a dbname query parameter override the path.
		q.Set("dbname", name)
		u.RawQuery = q.Encode()
	}
	return u.String(), nil
}
