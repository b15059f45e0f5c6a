package transfer

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/pixgate/pixgate/internal/clock"
	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/provider"
	"github.com/pixgate/pixgate/internal/store"
)

// ReturnDescription is the text the payer's bank shows with the return of
// money that matched no open charge (descricao of the devolução).
const ReturnDescription = "Devolucao de Pix sem cobranca em aberto"

// kind is what the engine does differently for one kind of transfer.
type kind struct {
	// noun names the transfer in log texts; refusal says what a refusal
	// by the PSP does to it.
	noun, refusal string
	// due reads up to limit transfers due at now; those named in reading
	// (steps in flight that only read, so their rows are still due) may
	// be left out.
	due func(ctx context.Context, now time.Time, limit int, reading []string) ([]item, error)
	// finish writes the PSP's final word st of it, held by this node as
	// step (with its final send state), and returns 1 if it applied.
	finish func(ctx context.Context, it item, step store.SendStep, st provider.TransferState) (int, error)
}

// item is one transfer due for a step with the PSP.
type item struct {
	kind     pix.TransferKind
	id       string
	state    string
	settleAt time.Time
	attempts int
	transfer provider.Transfer
	// chargeID, for a refund: the charge whose payment it returns (its
	// end-to-end id is read at the step).
	chargeID string
	// clientID: the client whose clock the transfer runs on ("" for the
	// return of an unmatched receipt, which no client's clock times).
	clientID string
	// stray: a row with no send state to take (see unschedule).
	stray bool
	// payout is the payout's row as read, when it is one: its finish is
	// guarded by the row's send state, so it need not be read again.
	payout pix.Transaction
}

// held is the step of it as it was read: the guard of what is written.
func (it item) held() store.SendStep {
	return store.SendStep{Kind: it.kind, ID: it.id, WasState: it.state, WasSettleAt: it.settleAt}
}

// duePayouts reads the payouts due for a step.
func (e *Engine) duePayouts(ctx context.Context, now time.Time, limit int, reading []string) ([]item, error) {
	// The payouts being read are left out by the query: at thousands a
	// second each would otherwise come back with every look while its
	// read and finish run.
	due, err := e.db.DueSettlementsExcept(ctx, now, limit, reading)
	if err != nil {
		return nil, fmt.Errorf("send payouts: %w", err)
	}
	due = clock.Each(e.clocks, ctx, due, func(t pix.Transaction) string { return t.ID },
		func(ctx context.Context, c store.ClientClock, at time.Time) ([]pix.Transaction, error) {
			return e.db.ClientDueSettlements(ctx, c.ClientID, at, now, limit)
		})
	due = due[:min(len(due), limit)]
	items := make([]item, 0, len(due))
	for _, t := range due {
		// The transfer is read from the row's details when the step starts
		// (payoutTransfer): most looks also return payouts already in
		// flight, which are not stepped again.
		items = append(items, payoutItem(t))
	}
	return items, nil
}

// payoutItem is the step of payout row t.
func payoutItem(t pix.Transaction) item {
	it := item{kind: pix.TransferPayout, id: t.ID, clientID: t.ClientID, state: t.SendState, settleAt: t.SettleAt,
		attempts: t.SendAttempts, payout: t}
	it.stray = t.Type != pix.TypeCashout || t.SendState == "" || t.SendState == pix.SendDone
	return it
}

// dueRefunds reads the refunds due for a step.
func (e *Engine) dueRefunds(ctx context.Context, now time.Time, limit int, _ []string) ([]item, error) {
	due, err := e.db.DueRefundRows(ctx, now, limit)
	if err != nil {
		return nil, fmt.Errorf("send refunds: %w", err)
	}
	due = clock.Each(e.clocks, ctx, due, func(r pix.Refund) string { return r.ID },
		func(ctx context.Context, c store.ClientClock, at time.Time) ([]pix.Refund, error) {
			return e.db.ClientDueRefundRows(ctx, c.ClientID, at, now, limit)
		})
	due = due[:min(len(due), limit)]
	items := make([]item, 0, len(due))
	for _, r := range due {
		items = append(items, item{kind: pix.TransferRefund, id: r.ID, clientID: r.ClientID, state: r.SendState, settleAt: r.SettleAt,
			attempts: r.SendAttempts, stray: r.SendState == "" || r.SendState == pix.SendDone, chargeID: r.TransactionID,
			transfer: provider.Transfer{ID: r.ID, Amount: r.Amount, Description: r.Reason, Refund: true, AcceptedAt: r.CreatedAt}})
	}
	return items, nil
}

// dueReturns reads the returns of unmatched receipts due for a step.
func (e *Engine) dueReturns(ctx context.Context, now time.Time, limit int, _ []string) ([]item, error) {
	due, err := e.db.DueUnmatchedReturns(ctx, now, limit)
	if err != nil {
		return nil, fmt.Errorf("return unmatched receipts: %w", err)
	}
	items := make([]item, 0, len(due))
	for _, u := range due {
		items = append(items, item{kind: pix.TransferReturn, id: u.ID, state: u.SendState, settleAt: u.SettleAt, attempts: u.SendAttempts,
			stray: u.SendState == "" || u.SendState == pix.SendDone || u.ReturnID == "",
			transfer: provider.Transfer{ID: u.ReturnID, Amount: u.Amount, Description: ReturnDescription, Refund: true,
				PaymentE2E: u.PaymentEndToEndID, AcceptedAt: u.RecordedAt}})
	}
	return items, nil
}

// lanes groups items into lanes stepped one after another, in order: a
// charge's refunds share one, so that they finish — and their webhooks
// tell the charge's story — in the order they were requested; every other
// transfer has a lane of its own.
func lanes(items []item) [][]item {
	var out [][]item
	open := make(map[string]int)
	for _, it := range items {
		key := it.id
		if it.kind == pix.TransferRefund {
			key = "charge:" + it.chargeID
		}
		i, ok := open[key]
		if !ok {
			i = len(out)
			out = append(out, nil)
			open[key] = i
		}
		out[i] = append(out[i], it)
	}
	return out
}

// eachN runs fn on every item with up to workers at once and returns the
// sum of what fn reported done, and the first error (the others still
// run).
func eachN[T any](ctx context.Context, workers int, items []T, fn func(T) (int, error)) (int, error) {
	var (
		mu       sync.Mutex
		n        int
		firstErr error
		wg       sync.WaitGroup
	)
	work := make(chan T)
	for w := 0; w < min(workers, len(items)); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for item := range work {
				done, err := fn(item)
				mu.Lock()
				n += done
				if err != nil && firstErr == nil {
					firstErr = err
				}
				mu.Unlock()
			}
		}()
	}
	for _, item := range items {
		if ctx.Err() != nil {
			break
		}
		work <- item
	}
	close(work)
	wg.Wait()
	return n, firstErr
}
