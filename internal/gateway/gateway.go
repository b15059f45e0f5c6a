// Package gateway holds pixgate's use cases, the merchant's: client
// authentication, charges, payments, payouts, refunds, expiry and wallet
// queries. Each use case that changes money runs in one database
// transaction holding the state change, its ledger posting and its outbox
// event. Time and ids are injected. The HTTP API reaches the database
// through it alone; the panel through it and, for what is not money (the
// operators' tools over clients included), through internal/backoffice.
package gateway

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"
	_ "time/tzdata" // São Paulo's calendar dates charges' due terms on any host

	"github.com/pixgate/pixgate/internal/account"
	"github.com/pixgate/pixgate/internal/cashin"
	"github.com/pixgate/pixgate/internal/clock"
	"github.com/pixgate/pixgate/internal/outbox"
	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/provider"
	"github.com/pixgate/pixgate/internal/qr"
	"github.com/pixgate/pixgate/internal/recurrence"
	"github.com/pixgate/pixgate/internal/store"
	"github.com/pixgate/pixgate/internal/transfer"
)

// Environments a Service runs in.
const (
	EnvSandbox    = pix.EnvSandbox
	EnvProduction = pix.EnvProduction
)

// Config is everything a Service is built from; New validates it whole.
type Config struct {
	// DB is the store; required.
	DB *store.DB
	// Env is EnvSandbox or EnvProduction.
	Env string
	// ChargeTTL is how long a charge stays payable; it must be positive.
	ChargeTTL time.Duration
	// Log receives the use cases' logs; required.
	Log *slog.Logger
	// Provider is the PSP that moves the money; required, so that no
	// configuration falls back to the sandbox without saying so.
	Provider provider.Provider
	// ReconcileEvery spaces the readings of the PSP's list of received
	// payments (ReconcileReceived); zero means DefaultReconcileEvery.
	ReconcileEvery time.Duration
	// Now returns the current time; nil means time.Now.
	Now func() time.Time
	// Rand is the source of secrets, ids and txids; nil means crypto/rand.
	Rand io.Reader
	// QR renders BR Codes; nil means a new encoder.
	QR *qr.Encoder
	// Wake, when set, tells the webhook dispatcher that events are due now.
	Wake func()
	// Courier, when set, takes the events this node writes for delivery
	// without a claim (outbox).
	Courier outbox.Courier
	// CheckWebhookURL, when set, refuses webhook URLs that may not be
	// called (SSRF guard); WebhookURLIssue's syntax checks always apply.
	CheckWebhookURL func(string) error
	// SendWebhook, when set, makes one signed attempt at an event that is
	// not in the outbox (TestWebhook).
	SendWebhook WebhookSender
	// HoldUnmatched keeps money that matches no open charge for an
	// operator instead of returning it to the payer at once.
	HoldUnmatched bool
	// ReturnsEvery spaces the readings of MED returns at the PSP; zero
	// means cashin.DefaultReturnsEvery.
	ReturnsEvery time.Duration
	// DisputesEvery spaces the readings of the PSP's infractions; zero
	// means cashin.DefaultDisputesEvery.
	DisputesEvery time.Duration
}

// Validate reports every problem of c at once, one error per line.
func (c *Config) Validate() error {
	var errs []error
	if c.DB == nil {
		errs = append(errs, errors.New("gateway: DB is required"))
	}
	if c.Env != EnvSandbox && c.Env != EnvProduction {
		errs = append(errs, fmt.Errorf("gateway: Env must be sandbox or production, not %q", c.Env))
	}
	if c.ChargeTTL <= 0 {
		errs = append(errs, errors.New("gateway: ChargeTTL must be positive"))
	}
	if c.Log == nil {
		errs = append(errs, errors.New("gateway: Log is required"))
	}
	if c.Provider == nil {
		errs = append(errs, errors.New("gateway: Provider is required (the sandbox is not a default)"))
	}
	return errors.Join(errs...)
}

// Service runs the use cases. New fills its fields from a Config; the
// exported hooks may be replaced before the Service is first used (tests
// swap the clock or the provider), never while it serves.
type Service struct {
	db        *store.DB
	Env       string // EnvSandbox or EnvProduction
	ChargeTTL time.Duration
	Log       *slog.Logger
	// Now returns the current time; one call per transaction.
	Now func() time.Time
	// Rand is the source of secrets, ids and txids.
	Rand io.Reader
	QR   *qr.Encoder
	// psp is the PSP.
	psp provider.Provider
	// w writes the use cases' transactions with their events.
	w *outbox.Writer
	// CheckWebhookURL, when set, refuses webhook URLs that may not be
	// called (SSRF guard); WebhookURLIssue's syntax checks always apply.
	CheckWebhookURL func(string) error
	// SendWebhook, when set, makes one signed attempt at an event that is
	// not in the outbox (TestWebhook).
	SendWebhook WebhookSender
	// sandbox is the sandbox's actions, nil where payers do not pay on
	// request.
	sandbox *Sandbox
	// cashin registers charges' cobs and credits what the PSP received;
	// transfers sends the payouts and refunds the use cases accept;
	// recurrences runs Pix Automático.
	cashin      *cashin.Service
	transfers   *transfer.Engine
	recurrences *recurrence.Service
	// accounts is sub-accounts and the transfers within a family.
	accounts *account.Service
	// loc is America/Sao_Paulo, whose calendar dates due terms and payments.
	loc *time.Location
	// clocks is the real time and this node's view of the sandbox
	// clients' clocks.
	clocks *clock.Clients
}

// New returns the Service c describes, or every problem of c.
func New(c Config) (*Service, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	loc, err := time.LoadLocation("America/Sao_Paulo")
	if err != nil {
		return nil, fmt.Errorf("gateway: %w", err)
	}
	s := &Service{loc: loc, db: c.DB, Env: c.Env, ChargeTTL: c.ChargeTTL,
		Log: c.Log, Now: c.Now, Rand: c.Rand, QR: c.QR, psp: c.Provider, CheckWebhookURL: c.CheckWebhookURL}
	if s.Now == nil {
		s.Now = time.Now
	}
	if s.Rand == nil {
		s.Rand = rand.Reader
	}
	if s.QR == nil {
		s.QR = &qr.Encoder{}
	}
	// The hooks are read through s: a test may replace them after New.
	s.w = &outbox.Writer{DB: c.DB, Courier: c.Courier, Wake: c.Wake, Now: func() time.Time { return s.Now() },
		Rand: readerFunc(func(p []byte) (int, error) { return s.Rand.Read(p) })}
	s.clocks = &clock.Clients{DB: c.DB, Log: c.Log, Real: func() time.Time { return s.Now() }, Advancing: func() bool { return s.sandbox != nil }, Loc: loc}
	if err := s.compose(c); err != nil {
		return nil, fmt.Errorf("gateway: %w", err)
	}
	s.SendWebhook = c.SendWebhook
	return s, nil
}

// compose builds the engines below the use cases, each told once what
// the provider is: the send engine, the cash-in side and recurrences;
// then sub-accounts, which need no provider.
func (s *Service) compose(c Config) error {
	var err error
	s.sandbox = newSandbox(s)
	if s.transfers, err = transfer.New(transfer.Config{DB: c.DB, Provider: c.Provider, Writer: s.w, Clocks: s.clocks, Log: c.Log}); err != nil {
		return err
	}
	s.cashin, err = cashin.New(cashin.Config{DB: c.DB, Provider: c.Provider, Writer: s.w, Clocks: s.clocks, Transfers: s.transfers,
		Log: c.Log, ReconcileEvery: c.ReconcileEvery, HoldUnmatched: c.HoldUnmatched, ReturnsEvery: c.ReturnsEvery, DisputesEvery: c.DisputesEvery})
	if err != nil {
		return err
	}
	rc := recurrence.Config{DB: c.DB, Provider: c.Provider, Writer: s.w, Clocks: s.clocks, Cashin: s.cashin, Log: c.Log,
		QR: s.QR, ChargeTTL: c.ChargeTTL, WebhookURLIssue: s.WebhookURLIssue}
	if s.sandbox != nil {
		rc.Sandbox = &recurrence.SandboxConfig{Pay: s.sandbox.Pay}
	}
	if s.recurrences, err = recurrence.New(rc); err != nil {
		return err
	}
	s.accounts, err = account.New(account.Config{DB: c.DB, Writer: s.w, Clocks: s.clocks, Log: c.Log,
		Rand: readerFunc(func(p []byte) (int, error) { return s.Rand.Read(p) }), WebhookURLIssue: s.WebhookURLIssue})
	return err
}

// Cashin is the cash-in side: the PSP's reports and readings of received
// Pix, expiry and the orphan-cob sweep, which the composition root runs.
func (s *Service) Cashin() *cashin.Service { return s.cashin }

// Recurrences is Pix Automático: the merchant's recurrences and the
// cycle job.
func (s *Service) Recurrences() *recurrence.Service { return s.recurrences }

// Accounts is sub-accounts and the transfers between a parent and its
// sub-accounts.
func (s *Service) Accounts() *account.Service { return s.accounts }

// Transfers is the send engine of the payouts, refunds and returns this
// Service accepts: the composition root runs it (Run, ReadSent).
func (s *Service) Transfers() *transfer.Engine { return s.transfers }

// InSandbox reports whether the Service runs in the sandbox environment.
func (s *Service) InSandbox() bool { return s.Env == EnvSandbox }

func (s *Service) now() time.Time { return s.clocks.Now() }

// Today is the current date on the São Paulo calendar, by which due dates
// and the amount due on a day are reckoned.
func (s *Service) Today() pix.Date { return s.dateOf(s.Now()) }

// dateOf is the São Paulo calendar date of t.
func (s *Service) dateOf(t time.Time) pix.Date { return s.clocks.DateOf(t) }

// newUUID returns a random (v4) UUID in lower case.
func (s *Service) newUUID() string { return s.w.NewID() }

// readerFunc is an io.Reader made of a function.
type readerFunc func([]byte) (int, error)

func (f readerFunc) Read(p []byte) (int, error) { return f(p) }
