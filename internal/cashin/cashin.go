// Package cashin owns the money that comes in: how a charge's cob is
// registered at the PSP (and withdrawn when no charge holds it), the
// crediting of every payment the PSP confirmed (once per end-to-end id,
// at the PSP's amount), the receipts no open charge takes, the PSP's
// reports and readings of received Pix, and the expiry of unpaid charges.
// The merchant's use cases (gateway) and recurrences (recurrence) both
// build on it; it knows recurrences only through the Cycles it is handed.
package cashin

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/pixgate/pixgate/internal/clock"
	"github.com/pixgate/pixgate/internal/outbox"
	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/provider"
	"github.com/pixgate/pixgate/internal/store"
	"github.com/pixgate/pixgate/internal/transfer"
)

// Config is everything a Service is built from; New validates it whole.
type Config struct {
	DB       *store.DB
	Provider provider.Provider
	// Writer writes the transactions with their events; Clocks is the
	// real time and the sandbox clients' clocks; Transfers settles the
	// refunds and returns the PSP reports with a payment.
	Writer    *outbox.Writer
	Clocks    *clock.Clients
	Transfers *transfer.Engine
	Log       *slog.Logger
	// ReconcileEvery spaces the readings of the PSP's list of received
	// payments; zero means DefaultReconcileEvery.
	ReconcileEvery time.Duration
	// HoldUnmatched keeps money that matches no open charge for an
	// operator instead of returning it to the payer at once.
	HoldUnmatched bool
	// ReturnsEvery spaces the readings of received Pix with a devolução
	// (MED returns); zero means DefaultReturnsEvery.
	ReturnsEvery time.Duration
	// DisputesEvery spaces the readings of the PSP's infractions (MED
	// contests); zero means DefaultDisputesEvery.
	DisputesEvery time.Duration
}

// Cycles is what crediting and expiry need of recurrences: a cycle's
// charge is debited, not paid by a cob, and its recurrence moves with it.
type Cycles interface {
	// CycleCredited records, in the transaction tx that credits charge t
	// (a charge of a recurrence), the paid debit of t's cycle.
	CycleCredited(ctx context.Context, tx *store.Tx, o *outbox.Events, t pix.Transaction, now time.Time) error
	// ExpireCycle settles t, a cycle's charge past its last attempt day,
	// with the PSP, and reports whether it was cancelled.
	ExpireCycle(ctx context.Context, t pix.Transaction) (bool, error)
}

// Service runs the cash-in side. Build it with New.
type Service struct {
	db             *store.DB
	psp            provider.Provider
	w              *outbox.Writer
	clocks         *clock.Clients
	transfers      *transfer.Engine
	log            *slog.Logger
	reconcileEvery time.Duration
	returnsEvery   time.Duration
	disputesEvery  time.Duration
	holdUnmatched  bool
	// txidLen is the length of the provider's charges' txids.
	txidLen int
	// cobs registers the charges' cobs at the provider.
	cobs cobs
	// retry holds when a PSP check that failed may be tried again.
	retry *clock.Backoffs
	// sweep spaces this node's looks for orphan cobs.
	sweep *sweepClock
	// cycles is the recurrences' part of crediting and expiry.
	cycles Cycles
}

// New returns the Service c describes, or every problem of c.
func New(c Config) (*Service, error) {
	var errs []error
	for _, missing := range []struct {
		nil  bool
		name string
	}{{c.DB == nil, "DB"}, {c.Provider == nil, "Provider"}, {c.Writer == nil, "Writer"}, {c.Clocks == nil, "Clocks"},
		{c.Transfers == nil, "Transfers"}, {c.Log == nil, "Log"}} {
		if missing.nil {
			errs = append(errs, fmt.Errorf("cashin: %s is required", missing.name))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	caps := c.Provider.Capabilities()
	s := &Service{db: c.DB, psp: c.Provider, w: c.Writer, clocks: c.Clocks, transfers: c.Transfers, log: c.Log,
		reconcileEvery: c.ReconcileEvery, returnsEvery: cmp.Or(c.ReturnsEvery, DefaultReturnsEvery),
		disputesEvery: cmp.Or(c.DisputesEvery, DefaultDisputesEvery), holdUnmatched: c.HoldUnmatched, txidLen: caps.TxIDLength,
		retry: &clock.Backoffs{}, sweep: &sweepClock{}, cycles: noCycles{}}
	if s.reconcileEvery <= 0 {
		s.reconcileEvery = DefaultReconcileEvery
	}
	// What the provider is decides, here and once, how cobs are registered.
	s.cobs = newCobs(s, caps.LocalCharges)
	return s, nil
}

// HandCycles gives s the recurrences' part of crediting and expiry; the
// composition root calls it once, before s serves.
func (s *Service) HandCycles(c Cycles) { s.cycles = c }

// noCycles is the Cycles of a node without recurrences.
type noCycles struct{}

func (noCycles) CycleCredited(context.Context, *store.Tx, *outbox.Events, pix.Transaction, time.Time) error {
	return nil
}

func (noCycles) ExpireCycle(context.Context, pix.Transaction) (bool, error) {
	return false, errors.New("cashin: a cycle's charge expired on a node without recurrences")
}

func (s *Service) now() time.Time { return s.clocks.Now() }

func (s *Service) dateOf(t time.Time) pix.Date { return s.clocks.DateOf(t) }

func (s *Service) newUUID() string { return s.w.NewID() }
