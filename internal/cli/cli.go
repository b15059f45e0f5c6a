// Package cli is pixgate's command line and composition root: it parses
// flags and PIXGATE_* variables, opens the database, wires the services and
// runs serve, migrate, the client administration commands and statement.
package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"path/filepath"
	"strings"

	"github.com/alecthomas/kong"

	"github.com/pixgate/pixgate/internal/backoffice"
	"github.com/pixgate/pixgate/internal/config"
	"github.com/pixgate/pixgate/internal/gateway"
	"github.com/pixgate/pixgate/internal/httpapi"
	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/provider"
	"github.com/pixgate/pixgate/internal/store"
	"github.com/pixgate/pixgate/internal/store/postgres"
	"github.com/pixgate/pixgate/internal/store/sqlite"
)

type clientsCreate struct {
	Name             string `required:"" help:"Client name."`
	CashinFeePercent string `name:"cashin-fee-percent" default:"0" help:"Cash-in fee: percent of the amount."`
	CashinFeeFixed   string `name:"cashin-fee-fixed" default:"0" help:"Cash-in fee: fixed part in reais."`
	PayoutFeePercent string `name:"payout-fee-percent" default:"0" help:"Payout fee: percent of the amount."`
	PayoutFeeFixed   string `name:"payout-fee-fixed" default:"0" help:"Payout fee: fixed part in reais."`
}

type clientID struct {
	ID string `arg:"" help:"Client id."`
}

// grammar is the command line. Every command but psp-sim takes pixgate's
// settings (config.Config) as its own flags, so that a command's --help
// lists what that command reads: psp-sim is a separate program sharing the
// binary, with flags of its own.
type grammar struct {
	Serve   struct{ config.Config } `cmd:"" help:"Serve the API (migrations are applied at start)."`
	Migrate struct{ config.Config } `cmd:"" help:"Apply database migrations and exit."`
	Clients struct {
		config.Config
		Create              clientsCreate `cmd:"" help:"Create a client; prints its credentials once, as JSON."`
		List                struct{}      `cmd:"" help:"List clients as JSON."`
		RotateSecret        clientID      `cmd:"" name:"rotate-secret" help:"Replace a client's secret; prints the new one once."`
		Disable             clientID      `cmd:"" help:"Disable a client; its credentials stop working at once."`
		RotateWebhookSecret clientID      `cmd:"" name:"rotate-webhook-secret" help:"Replace a client's webhook secret; for 24 h webhooks carry signatures by both."`
	} `cmd:"" help:"Manage API clients."`
	Users struct {
		config.Config
		Create        usersCreate        `cmd:"" help:"Create an administration panel user; prints its generated password once, as JSON."`
		ResetPassword usersResetPassword `cmd:"" name:"reset-password" help:"Give a panel user a new generated password, printed once as JSON; the old one stops working and the user's sessions end."`
	} `cmd:"" help:"Manage administration panel users."`
	Statement struct {
		config.Config
		statementCmd
	} `cmd:"" help:"Print a client's statement for a window (balances and every movement), as GET /api/v1/wallet/statement answers it."`
	PspSim pspSimCmd `cmd:"" name:"psp-sim" help:"Run a simulated PSP (API Pix v2 and Efí's Pix send) and print the environment that points pixgate at it."`
}

type exitCode int

// Main runs pixgate with args (without the program name) and returns the
// process exit code: 0 success, 1 failure, 2 bad usage or configuration.
func Main(ctx context.Context, args []string, stdout, stderr io.Writer) (code int) {
	var g grammar
	parser, err := kong.New(&g, kong.Name("pixgate"),
		kong.Description("pixgate — a PIX payment gateway."),
		kong.Writers(stdout, stderr),
		kong.Exit(func(c int) { panic(exitCode(c)) }),
		kong.UsageOnError())
	if err != nil {
		fmt.Fprintf(stderr, "pixgate: %v\n", err)
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
	kctx, err := parser.Parse(args)
	if err != nil {
		fmt.Fprintf(stderr, "pixgate: %v\n", err)
		return 2
	}
	if kctx.Command() == "psp-sim" {
		log := newLogger(stderr, g.PspSim.LogLevel)
		app := &app{stdout: stdout, stderr: stderr, log: log}
		if err := app.pspSim(ctx, g.PspSim); err != nil {
			fmt.Fprintf(stderr, "pixgate: %v\n", err)
			return 1
		}
		return 0
	}
	cfg := g.config(kctx.Command())
	if cfg == nil {
		fmt.Fprintf(stderr, "pixgate: unknown command %q\n", kctx.Command())
		return 2
	}
	settings, err := cfg.Validate()
	if err != nil {
		for _, line := range strings.Split(err.Error(), "\n") {
			fmt.Fprintf(stderr, "pixgate: %s\n", line)
		}
		return 2
	}
	if kctx.Command() == "serve" {
		// Production never runs on sandbox defaults; other commands need
		// neither a provider nor the BR Code's receiving side.
		if err := settings.ValidateServe(); err != nil {
			for _, line := range strings.Split(err.Error(), "\n") {
				fmt.Fprintf(stderr, "pixgate: %s\n", line)
			}
			return 2
		}
	}
	log := newLogger(stderr, settings.LogLevel)
	app := &app{settings: settings, stdout: stdout, stderr: stderr, log: log}
	switch kctx.Command() {
	case "serve":
		err = app.serve(ctx)
	case "migrate":
		err = app.migrate(ctx)
	case "clients create":
		err = app.clientsCreate(ctx, g.Clients.Create)
	case "clients list":
		err = app.clientsList(ctx)
	case "clients rotate-secret <id>":
		err = app.clientsRotate(ctx, g.Clients.RotateSecret.ID)
	case "clients disable <id>":
		err = app.clientsDisable(ctx, g.Clients.Disable.ID)
	case "clients rotate-webhook-secret <id>":
		err = app.clientsRotateWebhook(ctx, g.Clients.RotateWebhookSecret.ID)
	case "users create":
		err = app.usersCreate(ctx, g.Users.Create)
	case "users reset-password":
		err = app.usersResetPassword(ctx, g.Users.ResetPassword)
	case "statement":
		err = app.statement(ctx, g.Statement.statementCmd)
	default:
		err = fmt.Errorf("unknown command %q", kctx.Command())
	}
	if err != nil {
		if pe := pix.AsError(err); pe != nil {
			fmt.Fprintf(stderr, "pixgate: %s\n", pe.Message)
			return 1
		}
		for _, line := range strings.Split(err.Error(), "\n") {
			fmt.Fprintf(stderr, "pixgate: %s\n", line)
		}
		return 1
	}
	return 0
}

// config returns the settings given to command (kong's name for it, such
// as "clients create"), or nil for one without them (psp-sim).
func (g *grammar) config(command string) *config.Config {
	name, _, _ := strings.Cut(command, " ")
	switch name {
	case "serve":
		return &g.Serve.Config
	case "migrate":
		return &g.Migrate.Config
	case "clients":
		return &g.Clients.Config
	case "users":
		return &g.Users.Config
	case "statement":
		return &g.Statement.Config
	}
	return nil
}

func newLogger(w io.Writer, level string) *slog.Logger {
	var l slog.Level
	_ = l.UnmarshalText([]byte(level))
	return slog.New(httpapi.LogHandler(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: l})))
}

// app holds what every command needs.
type app struct {
	settings config.Settings
	stdout   io.Writer
	stderr   io.Writer
	log      *slog.Logger
}

// open opens and migrates the configured database.
func (a *app) open(ctx context.Context) (*store.DB, error) {
	var db *store.DB
	var err error
	if a.settings.Postgres {
		db, err = postgres.Open(ctx, a.settings.DatabaseURL, 32)
	} else {
		db, err = sqlite.Open(ctx, sqlite.Path(a.settings.DatabaseURL))
	}
	if err != nil {
		return nil, err
	}
	applied, err := db.Migrate(ctx)
	if err != nil {
		_ = db.Close()
		return nil, err
	}
	if len(applied) > 0 {
		a.log.Info("migrations applied", "versions", applied)
	}
	return db, nil
}

// gatewayConfig is the gateway's configuration from the settings, with
// the PSP that settles this process's transfers.
func (a *app) gatewayConfig(db *store.DB, psp provider.Provider) gateway.Config {
	s := a.settings
	return gateway.Config{DB: db, Env: s.Env,
		ChargeTTL: s.ChargeTTLD, Log: a.log, Provider: psp, HoldUnmatched: s.PSPUnmatched == "hold", ReturnsEvery: s.ReturnsEvery, DisputesEvery: s.DisputesEvery}
}

func (a *app) migrate(ctx context.Context) error {
	db, err := a.open(ctx)
	if err != nil {
		return err
	}
	return db.Close()
}

func (a *app) printJSON(v any) error {
	enc := json.NewEncoder(a.stdout)
	return enc.Encode(v)
}

func (a *app) clientsCreate(ctx context.Context, c clientsCreate) error {
	var p backoffice.ClientParams
	p.Name = c.Name
	var errs []error
	if n := strings.TrimSpace(c.Name); n == "" || len(n) > 100 {
		errs = append(errs, errors.New("invalid --name: 1 to 100 characters"))
	}
	parsePct := func(flag, v string, dst *int64) {
		bp, err := pix.ParsePercent(v)
		if err != nil {
			errs = append(errs, fmt.Errorf("invalid --%s %q: a percent from 0 to 100 with at most two decimals", flag, v))
		}
		*dst = bp
	}
	parseFixed := func(flag, v string, dst *pix.Amount) {
		amt, err := pix.ParseAmountString(v)
		if err != nil {
			errs = append(errs, fmt.Errorf("invalid --%s %q: an amount in reais such as 0.50", flag, v))
		}
		*dst = amt
	}
	parsePct("cashin-fee-percent", c.CashinFeePercent, &p.CashinFee.PercentBP)
	parseFixed("cashin-fee-fixed", c.CashinFeeFixed, &p.CashinFee.Fixed)
	parsePct("payout-fee-percent", c.PayoutFeePercent, &p.PayoutFee.PercentBP)
	parseFixed("payout-fee-fixed", c.PayoutFeeFixed, &p.PayoutFee.Fixed)
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	return a.runBackoffice(ctx, func(bo *backoffice.Service) (any, error) {
		cred, err := bo.CreateClient(ctx, p)
		if err == nil {
			// A client works only on a server with the same environment and
			// database: a create run without the server's PIXGATE_ENV or
			// PIXGATE_DATABASE_URL makes a client no request can use, so
			// say where this one went.
			fmt.Fprintf(a.stderr, "pixgate: client %s created in environment %s, database %s; use it with a server started with the same PIXGATE_ENV and PIXGATE_DATABASE_URL\n",
				cred.ClientID, a.settings.Env, a.databaseName())
		}
		return cred, err
	})
}

// databaseName names the configured database for a person, without its
// secrets: a PostgreSQL URL loses its password and every query parameter
// that names one (password, sslpassword); a SQLite file is named by its
// absolute path.
func (a *app) databaseName() string {
	dsn := a.settings.DatabaseURL
	if !a.settings.Postgres {
		p := sqlite.Path(dsn)
		if abs, err := filepath.Abs(p); err == nil {
			p = abs
		}
		return "SQLite " + p
	}
	u, err := url.Parse(dsn)
	if err != nil {
		return "PostgreSQL (unparsable URL)"
	}
	c := url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path}
	if u.User != nil {
		c.User = url.User(u.User.Username())
	}
	q := u.Query()
	for k := range q {
		if strings.Contains(strings.ToLower(k), "password") {
			q.Del(k)
		}
	}
	c.RawQuery = q.Encode()
	return "PostgreSQL " + c.String()
}

// withGateway opens the database and runs fn with a gateway on it.
func (a *app) withGateway(ctx context.Context, fn func(gw *gateway.Service) error) error {
	db, err := a.open(ctx)
	if err != nil {
		return err
	}
	defer db.Close()
	// Administrative commands settle nothing, so they get no PSP.
	gw, err := gateway.New(a.gatewayConfig(db, provider.None{}))
	if err != nil {
		return err
	}
	return fn(gw)
}

type clientJSON struct {
	ClientID         string           `json:"client_id"`
	Name             string           `json:"name"`
	Environment      string           `json:"environment"`
	Status           pix.ClientStatus `json:"status"`
	CashinFeePercent string           `json:"cashin_fee_percent"`
	CashinFeeFixed   string           `json:"cashin_fee_fixed"`
	PayoutFeePercent string           `json:"payout_fee_percent"`
	PayoutFeeFixed   string           `json:"payout_fee_fixed"`
	CreatedAt        string           `json:"created_at"`
}

func (a *app) clientsList(ctx context.Context) error {
	return a.runBackoffice(ctx, func(bo *backoffice.Service) (any, error) {
		cs, err := bo.Clients(ctx)
		out := make([]clientJSON, 0, len(cs))
		for _, c := range cs {
			out = append(out, clientJSON{ClientID: c.ID, Name: c.Name, Environment: c.Environment, Status: c.Status,
				CashinFeePercent: pix.FormatPercent(c.CashinFee.PercentBP), CashinFeeFixed: c.CashinFee.Fixed.String(),
				PayoutFeePercent: pix.FormatPercent(c.PayoutFee.PercentBP), PayoutFeeFixed: c.PayoutFee.Fixed.String(),
				CreatedAt: pix.FormatTime(c.CreatedAt)})
		}
		return out, err
	})
}

func (a *app) clientsRotate(ctx context.Context, id string) error {
	return a.runBackoffice(ctx, func(bo *backoffice.Service) (any, error) { return bo.RotateSecret(ctx, id) })
}

func (a *app) clientsDisable(ctx context.Context, id string) error {
	return a.runBackoffice(ctx, func(bo *backoffice.Service) (any, error) {
		return map[string]string{"client_id": id, "status": string(pix.ClientDisabled)}, bo.DisableClient(ctx, id)
	})
}

func (a *app) clientsRotateWebhook(ctx context.Context, id string) error {
	return a.runBackoffice(ctx, func(bo *backoffice.Service) (any, error) {
		cred, err := bo.RotateWebhookSecret(ctx, id)
		return map[string]string{"client_id": cred.ClientID, "webhook_secret": cred.WebhookSecret}, err
	})
}
