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

	"github.com/google/uuid"

	"github.com/pixgate/pixgate/internal/clock"
	"github.com/pixgate/pixgate/internal/outbox"
	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/provider"
	"github.com/pixgate/pixgate/internal/qr"
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
	// psp is the PSP; txidLen is the length of its charges' txids.
	psp     provider.Provider
	txidLen int
	// ReconcileEvery spaces the readings of the PSP's received payments.
	ReconcileEvery time.Duration
	// retry holds when a PSP check that failed may be tried again.
	retry *backoffs
	// w writes the use cases' transactions with their events.
	w *outbox.Writer
	// CheckWebhookURL, when set, refuses webhook URLs that may not be
	// called (SSRF guard); WebhookURLIssue's syntax checks always apply.
	CheckWebhookURL func(string) error
	// SendWebhook, when set, makes one signed attempt at an event that is
	// not in the outbox (TestWebhook).
	SendWebhook WebhookSender
	// HoldUnmatched keeps unmatched receipts for an operator (see
	// Config.HoldUnmatched).
	HoldUnmatched bool
	// sweep spaces this node's looks for orphan cobs.
	sweep *sweepClock
	// sandbox is the sandbox's actions, nil where payers do not pay on
	// request.
	sandbox *Sandbox
	// cobs registers the charges' cobs at the provider.
	cobs cobs
	// transfers sends the payouts and refunds the use cases accept.
	transfers *transfer.Engine
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
		Log: c.Log, Now: c.Now, Rand: c.Rand, QR: c.QR, psp: c.Provider, retry: &backoffs{},
		ReconcileEvery: c.ReconcileEvery, CheckWebhookURL: c.CheckWebhookURL,
		HoldUnmatched: c.HoldUnmatched, sweep: &sweepClock{}}
	// The hooks are read through s: a test may replace them after New.
	s.w = &outbox.Writer{DB: c.DB, Courier: c.Courier, Wake: c.Wake, Now: func() time.Time { return s.Now() },
		Rand: readerFunc(func(p []byte) (int, error) { return s.Rand.Read(p) })}
	s.clocks = &clock.Clients{DB: c.DB, Log: c.Log, Real: func() time.Time { return s.Now() }, Advancing: func() bool { return s.sandbox != nil }, Loc: loc}
	// What the provider is decides, here and once, how charges are
	// registered and payouts sent.
	caps := c.Provider.Capabilities()
	s.txidLen, s.cobs, s.sandbox = caps.TxIDLength, newCobs(s, caps.LocalCharges), newSandbox(s)
	s.transfers, err = transfer.New(transfer.Config{DB: c.DB, Provider: c.Provider, Writer: s.w, Clocks: s.clocks, Log: c.Log})
	if err != nil {
		return nil, fmt.Errorf("gateway: %w", err)
	}
	s.SendWebhook = c.SendWebhook
	if s.ReconcileEvery <= 0 {
		s.ReconcileEvery = DefaultReconcileEvery
	}
	if s.Now == nil {
		s.Now = time.Now
	}
	if s.Rand == nil {
		s.Rand = rand.Reader
	}
	if s.QR == nil {
		s.QR = &qr.Encoder{}
	}
	return s, nil
}

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
func (s *Service) newUUID() string {
	id, err := uuid.NewRandomFromReader(s.Rand)
	if err != nil {
		panic("gateway: random source failed: " + err.Error())
	}
	return id.String()
}

// canonicalID reports whether id is a lower-case UUID, the form of every
// transaction and refund id: anything else names nothing, and is answered
// without reaching the database (which refuses some bytes).
func canonicalID(id string) bool {
	u, err := uuid.Parse(id)
	return err == nil && u.String() == id
}

// readerFunc is an io.Reader made of a function.
type readerFunc func([]byte) (int, error)

func (f readerFunc) Read(p []byte) (int, error) { return f(p) }
