// Package transfer is the send engine of every kind of money leaving the
// PSP account — payouts, refunds, returns of unmatched receipts: the
// transfers due are found, each step is claimed in the database, sent or
// read at the PSP, and finished by the finisher of its kind in one
// transaction with its posting and its event. It is the only package that
// writes the store's send steps: a transfer is never sent twice, because
// its claim is committed (as "unknown") before every send, and an unknown
// outcome is read at the PSP before any resend.
package transfer

import (
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
	"github.com/pixgate/pixgate/internal/store/batch"
)

// Timing of the sends (docs/production.md, Moving real money).
const (
	// pollFirst and pollMax bound the backoff between readings of a
	// transfer's status, and between retries after an unknown outcome.
	pollFirst = time.Second
	pollMax   = 30 * time.Second
	// maxRateWait bounds how long a transfer waits on a PSP's 429, whatever
	// its Retry-After says.
	maxRateWait = time.Minute
	// Workers is how many transfers one node takes a step of at once. A
	// step waits mostly on the PSP, so the send rate is about Workers /
	// the PSP's latency until the database or the CPU is the bound: 16
	// sent 104 payouts/s to a PSP taking 150 ms per call, against 1,927/s
	// to one answering at once (docs/decisions.md).
	Workers = 512
	// kickGap is the least time between two looks for due transfers that
	// commits wake: at thousands of payouts per second, one look takes up
	// the few dozen committed meanwhile, for at most that much more
	// latency.
	kickGap = 10 * time.Millisecond
)

// ErrChanged marks a step or a finish another node, or a report of the
// PSP, took first: nothing to do.
var ErrChanged = errors.New("changed concurrently")

// errStillSent marks a transfer the PSP accepted but cannot find now: it
// is never sent again, only read again later.
var errStillSent = errors.New("the PSP accepted this transfer but does not find it now")

// errSendRefused marks a transfer the PSP refused and does not know: final.
var errSendRefused = errors.New("refused by the PSP")

// Config is what an Engine is built from.
type Config struct {
	// DB is the store; required.
	DB *store.DB
	// Provider is the PSP the transfers are sent to; required.
	Provider provider.Provider
	// Writer writes the finishes with their events; required.
	Writer *outbox.Writer
	// Clocks is the time, and the sandbox clients' clocks; required.
	Clocks *clock.Clients
	// Log receives the sends' warnings; required.
	Log *slog.Logger
}

// Engine sends the transfers. Its strategy is chosen once, by New, from
// what its provider is: a provider whose sends change nothing
// (provider.Capabilities.StatelessSends) has each payout sent as it is
// accepted (Accept); a provider that lists its sent payouts
// (provider.SentLister) has them read by the list first (ReadSent).
type Engine struct {
	db       *store.DB
	psp      provider.Provider
	w        *outbox.Writer
	clocks   *clock.Clients
	log      *slog.Logger
	kinds    [3]kind
	payouts  bool
	sendsNow bool
	lister   provider.SentLister
	// stepTimeout bounds one step's calls to the provider.
	stepTimeout time.Duration
	// kick wakes this node's Run when a transfer is committed.
	kick chan struct{}
	// payoutFinishes writes the payouts' finishes of the same moment
	// together (finishPayouts).
	payoutFinishes *batch.Batch[payoutFinish, bool]
}

// New returns the Engine c describes.
func New(c Config) (*Engine, error) {
	var errs []error
	if c.DB == nil || c.Provider == nil || c.Writer == nil || c.Clocks == nil || c.Log == nil {
		errs = append(errs, errors.New("transfer: DB, Provider, Writer, Clocks and Log are required"))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	caps := c.Provider.Capabilities()
	e := &Engine{db: c.DB, psp: c.Provider, w: c.Writer, clocks: c.Clocks, log: c.Log, payouts: caps.Payouts,
		sendsNow: caps.StatelessSends, stepTimeout: caps.CallTimeout, kick: make(chan struct{}, 1)}
	if e.stepTimeout <= 0 {
		e.stepTimeout = provider.DefaultCallTimeout
	}
	e.lister, _ = c.Provider.(provider.SentLister)
	e.payoutFinishes = batch.New(c.DB.GroupSlots(), 64, e.finishPayouts)
	e.kinds = [3]kind{
		pix.TransferPayout: {noun: "payout", refusal: "it fails", due: e.duePayouts, finish: e.finishPayout},
		pix.TransferRefund: {noun: "refund", refusal: "it fails", due: e.dueRefunds, finish: e.finishRefundStep},
		pix.TransferReturn: {noun: "return of an unmatched receipt", refusal: "it is held for an operator",
			due: e.dueReturns, finish: e.finishReturnStep},
	}
	return e, nil
}

// Available reports, as the 422 the API answers, a kind of transfer the
// provider cannot send (payouts with a PSP that takes only devoluções).
func (e *Engine) Available(k pix.TransferKind) error {
	if k == pix.TransferPayout && !e.payouts {
		return pix.Errorf(pix.EUnprocessable, "Payouts are not available with this provider")
	}
	return nil
}

// Kick tells this node's Run that a transfer was committed: its first
// step starts now rather than at the next look.
func (e *Engine) Kick() {
	select {
	case e.kick <- struct{}{}:
	default:
	}
}

// Accept prepares payout t, about to be stored: with a provider whose
// sends change nothing, it is sent now and stored already sent, to be
// read when the provider expects it to change (one write instead of
// three); a send that fails leaves it to Run, as any payout. With any
// other provider it changes nothing: t waits for its claimed step.
func (e *Engine) Accept(ctx context.Context, t *pix.Transaction, d pix.PayoutDetails) {
	if !e.sendsNow {
		return
	}
	st, err := e.psp.Send(ctx, transferOf(*t, d))
	if err != nil {
		return
	}
	t.SendState, t.SettleAt = pix.SendSent, t.CreatedAt
	if !st.ReadAt.IsZero() && st.ReadAt.After(t.CreatedAt) {
		t.SettleAt = st.ReadAt.UTC().Truncate(time.Millisecond)
	}
}

// StepDue takes one step of up to limit due transfers of kind k and
// returns how many reached their final state. Run does the same
// continuously; this one-shot form serves tests and tools.
func (e *Engine) StepDue(ctx context.Context, k pix.TransferKind, limit int) (int, error) {
	items, err := e.kinds[k].due(ctx, e.clocks.Now(), limit, nil)
	if err != nil {
		return 0, err
	}
	return eachN(ctx, Workers, lanes(items), func(lane []item) (int, error) {
		n := 0
		for _, it := range lane {
			k, err := e.step(ctx, it)
			n += k
			if err != nil {
				return n, err // the lane's later transfers wait for the next look
			}
		}
		return n, nil
	})
}

// stepSend applies one guarded step in a transaction of its own.
func (e *Engine) stepSend(ctx context.Context, st store.SendStep) (bool, error) {
	if !pix.SendStepAllowed(st.WasState, st.State) {
		return false, fmt.Errorf("send step of %s %s: %q → %q is not a step a transfer may take", st.Kind, st.ID, st.WasState, st.State)
	}
	ok, err := e.db.StepSendGrouped(ctx, st)
	if err != nil {
		return false, fmt.Errorf("send step: %w", err)
	}
	return ok, nil
}
