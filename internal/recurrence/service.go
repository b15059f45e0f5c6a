// Package recurrence owns Pix Automático: recurrences, the cycle
// calendar, the charge of each cycle and the retries of failed debits.
// It applies only the states a provider reported (a webhook's report or a
// reading, each read back from the PSP), and builds no provider state of
// its own; the money of each cycle comes in through cashin.
package recurrence

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/pixgate/pixgate/internal/cashin"
	"github.com/pixgate/pixgate/internal/clock"
	"github.com/pixgate/pixgate/internal/outbox"
	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/provider"
	"github.com/pixgate/pixgate/internal/qr"
	"github.com/pixgate/pixgate/internal/store"
)

// Config is everything a Service is built from; New validates it whole.
type Config struct {
	DB       *store.DB
	Provider provider.Provider
	Writer   *outbox.Writer
	Clocks   *clock.Clients
	// Cashin credits the cycles' payments and registers first payments'
	// cobs; New hands it the Service's part of crediting and expiry.
	Cashin *cashin.Service
	Log    *slog.Logger
	QR     *qr.Encoder
	// ChargeTTL is how long a first payment's charge stays payable.
	ChargeTTL time.Duration
	// WebhookURLIssue says what is wrong with a postbackUrl ("" if none).
	WebhookURLIssue func(string) string
	// Sandbox, when set, enables the sandbox payer's actions (Sandbox):
	// Pay pays a first payment as the sandbox's pay action does.
	Sandbox *SandboxConfig
}

// SandboxConfig is what the sandbox's payer actions need of the gateway.
type SandboxConfig struct {
	Pay func(ctx context.Context, charge pix.Transaction) (pix.Transaction, error)
}

// Service runs the recurrences. Build it with New.
type Service struct {
	db              *store.DB
	psp             provider.Provider
	w               *outbox.Writer
	clocks          *clock.Clients
	cashin          *cashin.Service
	log             *slog.Logger
	qr              *qr.Encoder
	chargeTTL       time.Duration
	webhookURLIssue func(string) string
	// retry spaces the readings of recurrences left unanswered.
	retry   *clock.Backoffs
	sandbox *Sandbox
}

// New returns the Service c describes, or every problem of c, and hands
// c.Cashin its part of crediting and expiry.
func New(c Config) (*Service, error) {
	var errs []error
	for _, missing := range []struct {
		nil  bool
		name string
	}{{c.DB == nil, "DB"}, {c.Provider == nil, "Provider"}, {c.Writer == nil, "Writer"}, {c.Clocks == nil, "Clocks"},
		{c.Cashin == nil, "Cashin"}, {c.Log == nil, "Log"}, {c.QR == nil, "QR"}, {c.WebhookURLIssue == nil, "WebhookURLIssue"}} {
		if missing.nil {
			errs = append(errs, fmt.Errorf("recurrence: %s is required", missing.name))
		}
	}
	if c.ChargeTTL <= 0 {
		errs = append(errs, errors.New("recurrence: ChargeTTL must be positive"))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	s := &Service{db: c.DB, psp: c.Provider, w: c.Writer, clocks: c.Clocks, cashin: c.Cashin, log: c.Log, qr: c.QR,
		chargeTTL: c.ChargeTTL, webhookURLIssue: c.WebhookURLIssue, retry: &clock.Backoffs{}}
	if payer, ok := c.Provider.(provider.RecurrencePayer); ok && c.Sandbox != nil {
		s.sandbox = &Sandbox{s: s, payer: payer, pay: c.Sandbox.Pay}
	}
	c.Cashin.HandCycles(s)
	return s, nil
}

// Sandbox returns the sandbox payer's actions, nil outside the sandbox.
func (s *Service) Sandbox() *Sandbox { return s.sandbox }

func (s *Service) now() time.Time { return s.clocks.Now() }

// errChanged marks a change another node, or a report of the PSP, made
// first: nothing to do.
var errChanged = errors.New("recurrence: changed concurrently")

// issues collects field problems for one 400 response.
type issues []pix.FieldIssue

func (is *issues) add(field, issue string) {
	*is = append(*is, pix.FieldIssue{Field: field, Issue: issue})
}

func (is *issues) err() error {
	if len(*is) == 0 {
		return nil
	}
	return &pix.Error{Code: pix.EInvalid, Message: "Invalid request parameters", Details: *is}
}

// webhookURL records the issue of a required webhook URL field, if any.
func (s *Service) webhookURL(is *issues, field, u string) {
	if u == "" {
		is.add(field, "is required")
	} else if issue := s.webhookURLIssue(u); issue != "" {
		is.add(field, issue)
	}
}
