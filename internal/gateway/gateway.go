// Package gateway holds pixgate's use cases: clients and their credentials,
// charges, payments, expiry, wallet queries. Each use case that changes money
// runs in one database transaction holding the state change, its ledger
// posting and its outbox event. Time and ids are injected.
package gateway

import (
	"crypto/rand"
	"io"
	"log/slog"
	"time"

	"github.com/google/uuid"

	"github.com/pixgate/pixgate/internal/provider"
	"github.com/pixgate/pixgate/internal/provider/sandbox"
	"github.com/pixgate/pixgate/internal/qr"
	"github.com/pixgate/pixgate/internal/store"
)

// Merchant is the receiving side written into every BR Code.
type Merchant struct {
	PixKey string
	Name   string
	City   string
}

// Service runs the use cases.
type Service struct {
	DB          *store.DB
	Env         string // sandbox or production
	Merchant    Merchant
	ChargeTTL   time.Duration
	PayoutDelay time.Duration // sandbox: time until a payout or refund settles
	Log         *slog.Logger
	// Now returns the current time; one call per transaction.
	Now func() time.Time
	// Rand is the source of secrets, ids and txids.
	Rand io.Reader
	QR   *qr.Encoder
	// Provider settles outgoing transfers (the sandbox simulator by default).
	Provider provider.Provider
	// Wake, when set, tells the webhook dispatcher that events are due now.
	Wake func()
	// Courier, when set, takes the events this node writes for delivery
	// without a claim (outbox).
	Courier Courier
	// CheckWebhookURL, when set, refuses webhook URLs that may not be
	// called (SSRF guard); WebhookURLIssue's syntax checks always apply.
	CheckWebhookURL func(string) error
}

// New returns a Service with the real clock and crypto/rand.
func New(db *store.DB, env string, m Merchant, chargeTTL, payoutDelay time.Duration, log *slog.Logger) *Service {
	return &Service{DB: db, Env: env, Merchant: m, ChargeTTL: chargeTTL, PayoutDelay: payoutDelay, Log: log,
		Now: time.Now, Rand: rand.Reader, QR: &qr.Encoder{}, Provider: sandbox.Provider{}}
}

func (s *Service) now() time.Time { return s.Now().UTC().Truncate(time.Millisecond) }

// newUUID returns a random (v4) UUID in lower case.
func (s *Service) newUUID() string {
	id, err := uuid.NewRandomFromReader(s.Rand)
	if err != nil {
		panic("gateway: random source failed: " + err.Error())
	}
	return id.String()
}

// newOrderedID returns a time-ordered (v7) UUID, for rows read back in order.
func (s *Service) newOrderedID() string {
	return uuid.Must(uuid.NewV7FromReader(s.Rand)).String()
}

// wake tells the webhook dispatcher, if any, that new events are due.
func (s *Service) wake() {
	if s.Wake != nil {
		s.Wake()
	}
}
