package gateway

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/pixgate/pixgate/internal/clock"
	"github.com/pixgate/pixgate/internal/job"
	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/provider"
	"github.com/pixgate/pixgate/internal/store"
)

// SettleDue advances up to limit due payouts with the provider, each one
// step of the send state machine (advance), and returns how many reached
// their final state. RunSender does the same continuously; this one-shot
// form serves tests and tools.
func (s *Service) SettleDue(ctx context.Context, limit int) (int, error) {
	return s.stepDue(ctx, s.duePayouts, limit)
}

// SettleRefundsDue advances up to limit due refunds with the provider.
func (s *Service) SettleRefundsDue(ctx context.Context, limit int) (int, error) {
	return s.stepDue(ctx, s.dueRefunds, limit)
}

// ReturnUnmatchedDue advances up to limit due returns of unmatched receipts
// with the PSP, each one step, exactly as refunds are sent: once, and read
// back before any resend.
func (s *Service) ReturnUnmatchedDue(ctx context.Context, limit int) (int, error) {
	return s.stepDue(ctx, s.dueReturns, limit)
}

// dueFunc reads up to limit transfers of one kind due at now; those named
// in reading (steps in flight that only read, so their rows are still
// due) may be left out.
type dueFunc func(ctx context.Context, now time.Time, limit int, reading []string) ([]sendItem, error)

func (s *Service) stepDue(ctx context.Context, due dueFunc, limit int) (int, error) {
	items, err := due(ctx, s.now(), limit, nil)
	if err != nil {
		return 0, err
	}
	return eachN(ctx, pspWorkers, lanes(items), func(lane []sendItem) (int, error) {
		n := 0
		for _, it := range lane {
			k, err := s.step(ctx, it)
			n += k
			if err != nil {
				return n, err // the lane's later transfers wait for the next look
			}
		}
		return n, nil
	})
}

// lanes groups items into lanes stepped one after another, in order: a
// charge's refunds share one, so that they finish — and their webhooks
// tell the charge's story — in the order they were requested; every other
// transfer has a lane of its own.
func lanes(items []sendItem) [][]sendItem {
	var out [][]sendItem
	open := make(map[string]int)
	for _, it := range items {
		key := it.id
		if it.refund {
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

// duePayouts reads the payouts due for a step.
func (s *Service) duePayouts(ctx context.Context, now time.Time, limit int, reading []string) ([]sendItem, error) {
	// The payouts being read are left out by the query: at thousands a
	// second each would otherwise come back with every look while its
	// read and finish run.
	due, err := s.db.DueSettlementsExcept(ctx, now, limit, reading)
	if err != nil {
		return nil, fmt.Errorf("send payouts: %w", err)
	}
	due = clock.Each(s.clocks, ctx, due, func(t pix.Transaction) string { return t.ID },
		func(ctx context.Context, c store.ClientClock, at time.Time) ([]pix.Transaction, error) {
			return s.db.ClientDueSettlements(ctx, c.ClientID, at, now, limit)
		})
	due = due[:min(len(due), limit)]
	items := make([]sendItem, 0, len(due))
	for _, t := range due {
		it := sendItem{id: t.ID, state: t.SendState, settleAt: t.SettleAt, attempts: t.SendAttempts, payout: t}
		if t.Type != pix.TypeCashout || t.SendState == "" || t.SendState == store.SendDone {
			it.stray = true
			items = append(items, it)
			continue
		}
		// The transfer is read from the row's details when the step starts
		// (payoutTransfer): most looks also return payouts already in flight,
		// which are not stepped again.
		items = append(items, it)
	}
	return items, nil
}

// dueRefunds reads the refunds due for a step.
func (s *Service) dueRefunds(ctx context.Context, now time.Time, limit int, _ []string) ([]sendItem, error) {
	due, err := s.db.DueRefundRows(ctx, now, limit)
	if err != nil {
		return nil, fmt.Errorf("send refunds: %w", err)
	}
	due = clock.Each(s.clocks, ctx, due, func(r pix.Refund) string { return r.ID },
		func(ctx context.Context, c store.ClientClock, at time.Time) ([]pix.Refund, error) {
			return s.db.ClientDueRefundRows(ctx, c.ClientID, at, now, limit)
		})
	due = due[:min(len(due), limit)]
	items := make([]sendItem, 0, len(due))
	for _, r := range due {
		items = append(items, sendItem{refund: true, id: r.ID, clientID: r.ClientID, state: r.SendState, settleAt: r.SettleAt, attempts: r.SendAttempts,
			stray: r.SendState == "" || r.SendState == store.SendDone, chargeID: r.TransactionID,
			transfer: provider.Transfer{ID: r.ID, Amount: r.Amount, Description: r.Reason, Refund: true, AcceptedAt: r.CreatedAt}})
	}
	return items, nil
}

// dueReturns reads the returns of unmatched receipts due for a step.
func (s *Service) dueReturns(ctx context.Context, now time.Time, limit int, _ []string) ([]sendItem, error) {
	due, err := s.db.DueUnmatchedReturns(ctx, now, limit)
	if err != nil {
		return nil, fmt.Errorf("return unmatched receipts: %w", err)
	}
	items := make([]sendItem, 0, len(due))
	for _, u := range due {
		items = append(items, sendItem{unmatched: true, id: u.ID, state: u.SendState, settleAt: u.SettleAt, attempts: u.SendAttempts,
			stray: u.SendState == "" || u.SendState == store.SendDone || u.ReturnID == "",
			transfer: provider.Transfer{ID: u.ReturnID, Amount: u.Amount, Description: returnDescription, Refund: true,
				PaymentE2E: u.PaymentEndToEndID, AcceptedAt: u.RecordedAt}})
	}
	return items, nil
}

// step takes one step of it: advance, or unschedule a stray row.
func (s *Service) step(ctx context.Context, it sendItem) (int, error) {
	ctx = s.clocks.For(ctx, it.client())
	if it.stray {
		return 0, s.unschedule(ctx, store.SendStep{Refund: it.refund, Unmatched: it.unmatched, ID: it.id,
			WasState: it.state, WasSettleAt: it.settleAt})
	}
	if !it.refund && !it.unmatched && it.transfer.ID == "" {
		t, err := payoutTransfer(it.payout)
		if err != nil {
			return 0, err
		}
		it.transfer = t
	}
	if it.refund {
		charge, err := s.db.TransactionByID(ctx, it.chargeID)
		if err != nil {
			return 0, fmt.Errorf("refund %s: %w", it.id, err)
		}
		it.transfer.PaymentE2E = charge.EndToEndID
	}
	return s.advance(ctx, it)
}

// payoutTransfer is the transfer payout t asks the PSP for.
func payoutTransfer(t pix.Transaction) (provider.Transfer, error) {
	d, err := parsePayoutDetails(t)
	if err != nil {
		return provider.Transfer{}, err
	}
	return transferOf(t, d), nil
}

// transferOf is the transfer of payout t with its details d.
func transferOf(t pix.Transaction, d payoutDetails) provider.Transfer {
	return provider.Transfer{ID: t.ID, Amount: t.Amount, KeyType: pix.KeyType(strings.ToUpper(d.CreditParty.KeyType)),
		Key: d.CreditParty.Key, Description: d.Description, AcceptedAt: t.CreatedAt}
}

// RunSender advances every due payout, refund and return of an unmatched
// receipt with the provider until ctx ends. Up to pspWorkers steps run at
// once and a new one starts as soon as one ends, so a slow PSP is waited
// on in parallel rather than in rounds; a transfer committed on this node
// is taken up at once (Kick), and what falls due later is found by a
// look every poll. Each step is claimed in the database first, so several
// nodes may run senders over the same rows.
func (s *Service) RunSender(ctx context.Context, poll time.Duration) {
	var (
		mu       sync.Mutex
		inFlight = make(map[string]bool)
		// unclaimed holds the steps in flight that only read (not claimed).
		unclaimed = make(map[string]bool)
		freed     = make(chan struct{}, 1)
		wg        sync.WaitGroup
	)
	defer wg.Wait()
	signal := func(c chan struct{}) {
		select {
		case c <- struct{}{}:
		default:
		}
	}
	kinds := []dueFunc{s.duePayouts, s.dueRefunds, s.dueReturns}
	// While the database is out of reach, or full, the looks and the steps
	// back off together (job.Backoff) rather than fail at the poll's pace.
	outage := &job.Backoff{Name: "sender", Log: s.Log, Min: poll}
	t := time.NewTicker(poll)
	defer t.Stop()
	for ctx.Err() == nil {
		if !outage.Wait(ctx) {
			break
		}
		looked := time.Now()
		full := false
		healthy, launchedAny := true, false
		for _, due := range kinds {
			mu.Lock()
			free, reading := pspWorkers-len(inFlight), len(unclaimed)
			readingIDs := make([]string, 0, reading)
			for id := range unclaimed {
				readingIDs = append(readingIDs, id)
			}
			mu.Unlock()
			if free <= 0 {
				full = true
				break
			}
			// A step that only reads is not claimed, so its row is still
			// due while it runs: look past those in flight.
			items, err := due(ctx, s.now(), free+reading, readingIDs)
			if err != nil && s.db.Unavailable(err) {
				outage.Fail(ctx, err)
				healthy = false
				break
			}
			if err != nil {
				if ctx.Err() == nil {
					s.Log.WarnContext(ctx, "could not read the transfers due", "error", err.Error())
				}
				continue
			}
			full = full || len(items) == free+reading
			launched := 0
			for _, lane := range lanes(items) {
				if launched >= free {
					full = true // the rest waits for a free step
					break
				}
				mu.Lock()
				var mine []sendItem
				for _, it := range lane {
					if !inFlight[it.id] {
						inFlight[it.id] = true
						mine = append(mine, it)
						if it.state == store.SendSent {
							unclaimed[it.id] = true
						}
					}
				}
				mu.Unlock()
				launched += len(mine)
				if len(mine) == 0 {
					continue
				}
				launchedAny = true
				wg.Add(1)
				go func() {
					defer wg.Done()
					failed := false
					for _, it := range mine {
						if !failed && ctx.Err() == nil {
							_, err := s.step(ctx, it)
							switch {
							case err == nil:
								outage.Succeed(ctx)
							case s.db.Unavailable(err):
								failed = true
								outage.Fail(ctx, err)
							default:
								failed = true // the lane's later transfers wait for the next look
								if ctx.Err() == nil {
									s.Log.WarnContext(ctx, "a send step failed; it is taken up again", "id", it.id, "error", err.Error())
								}
							}
						}
						mu.Lock()
						delete(inFlight, it.id)
						if it.state == store.SendSent {
							delete(unclaimed, it.id)
						}
						mu.Unlock()
					}
					signal(freed)
				}()
			}
		}
		if healthy && !launchedAny {
			outage.Succeed(ctx)
		}
		if full {
			// More is due than there were free steps: look again as soon
			// as one ends.
			select {
			case <-ctx.Done():
			case <-freed:
			}
			// Steps ending at the same moment make room for one look.
			if wait := kickGap - time.Since(looked); wait > 0 {
				select {
				case <-ctx.Done():
				case <-time.After(wait):
				}
			}
			continue
		}
		select {
		case <-ctx.Done():
		case <-t.C:
		case <-s.kick:
			// Transfers committed at the same moment are taken up by one
			// look rather than one look each.
			if wait := kickGap - time.Since(looked); wait > 0 {
				select {
				case <-ctx.Done():
				case <-time.After(wait):
				}
			}
		}
	}
}

// kickGap is the least time between two looks for due transfers that
// commits wake: at thousands of payouts per second, one look takes up the
// few dozen committed meanwhile, for at most that much more latency.
const kickGap = 10 * time.Millisecond

// Kick tells this node's sender that a transfer was committed: its first
// step starts now rather than at the next look.
func (s *Service) Kick() {
	select {
	case s.kick <- struct{}{}:
	default:
	}
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

// Readings of a PSP's list of sent payouts (ReadSent).
const (
	// sentEvery spaces the readings.
	sentEvery = time.Second
	// sentOverlap re-reads the end of the previous window: the PSP lists
	// a payout by its own clock, and one may settle a few seconds after it
	// was requested.
	sentOverlap = 5 * time.Second
	// sentWindow bounds how far back a reading looks, however long ago the
	// last complete one was.
	sentWindow = time.Minute
	// listedFirstRead is when a payout the PSP accepted is first read on
	// its own, with a provider that lists: the list will usually have
	// settled it before.
	listedFirstRead = 3 * time.Second
)

// ReadSent reads, with a provider that lists the payouts sent from its
// account (provider.SentLister), those requested since the last complete
// reading (and sentOverlap before; at most sentWindow back), and finishes
// each one the PSP reports final that still waits for its reading: many
// payouts' statuses in a few calls instead of one each. The payouts the
// list names are matched to those still pending by one query per page,
// and finished many at once, each guarded by its row as read, so a reading
// of a payout on its own that finishes it meanwhile, on any node, makes
// this one change nothing. A payout the list does not settle is read on
// its own later, as always. One node reads at a time, at most once per
// sentEvery (store.DB.ClaimReading). It returns how many payouts it
// finished; limit is unused.
func (s *Service) ReadSent(ctx context.Context, _ int) (int, error) {
	lister, ok := s.Provider.(provider.SentLister)
	if !ok {
		return 0, nil
	}
	now := s.now()
	from, ok, err := s.db.ClaimReading(ctx, "sent", now, now.Add(sentEvery), now.Add(-sentOverlap))
	if err != nil || !ok {
		return 0, err
	}
	from = from.Add(-sentOverlap)
	if earliest := now.Add(-sentWindow); from.Before(earliest) {
		from = earliest // older payouts are read on their own
	}
	cctx, cancel := context.WithTimeout(ctx, pspCallTimeout)
	states, err := lister.SentBetween(cctx, from, now)
	cancel()
	if err != nil {
		return 0, fmt.Errorf("read sent payouts: %w", err)
	}
	final := make(map[string]provider.TransferState)
	var ids []string
	for _, st := range states {
		if st.Status == provider.Completed || st.Status == provider.Failed {
			final[st.ID] = st
			ids = append(ids, st.ID)
		}
	}
	var items []sendItem
	for len(ids) > 0 {
		page := ids[:min(len(ids), 500)]
		ids = ids[len(page):]
		rows, err := s.db.PendingPayouts(ctx, page)
		if err != nil {
			return 0, fmt.Errorf("read sent payouts: %w", err)
		}
		for _, t := range rows {
			items = append(items, sendItem{id: t.ID, state: t.SendState, settleAt: t.SettleAt, payout: t})
		}
	}
	n, err := eachN(ctx, pspWorkers, items, func(it sendItem) (int, error) {
		held := store.SendStep{ID: it.id, WasState: it.state, WasSettleAt: it.settleAt}
		return s.finishSend(ctx, it, held, final[it.id])
	})
	if err != nil {
		return n, fmt.Errorf("read sent payouts: %w", err)
	}
	return n, s.db.SetReadUntil(ctx, "sent", now)
}
