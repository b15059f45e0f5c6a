package transfer

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/provider"
)

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
func (e *Engine) ReadSent(ctx context.Context, _ int) (int, error) {
	if e.lister == nil {
		return 0, nil
	}
	now := e.clocks.Now()
	from, ok, err := e.db.ClaimReading(ctx, "sent", now, now.Add(sentEvery), now.Add(-sentOverlap))
	if err != nil || !ok {
		return 0, err
	}
	from = from.Add(-sentOverlap)
	if earliest := now.Add(-sentWindow); from.Before(earliest) {
		from = earliest // older payouts are read on their own
	}
	cctx, cancel := context.WithTimeout(ctx, provider.DefaultCallTimeout)
	states, err := e.lister.SentBetween(cctx, from, now)
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
	items, err := e.pendingPayouts(ctx, ids)
	if err != nil {
		return 0, fmt.Errorf("read sent payouts: %w", err)
	}
	n, err := eachN(ctx, Workers, items, func(it item) (int, error) {
		return e.finishSend(ctx, it, it.held(), final[it.id])
	})
	if err != nil {
		return n, fmt.Errorf("read sent payouts: %w", err)
	}
	return n, e.db.SetReadUntil(ctx, "sent", now)
}

// pendingPayouts reads the payouts of ids still waiting on the PSP, a
// page at a time.
func (e *Engine) pendingPayouts(ctx context.Context, ids []string) ([]item, error) {
	var items []item
	for len(ids) > 0 {
		page := ids[:min(len(ids), 500)]
		ids = ids[len(page):]
		rows, err := e.db.PendingPayouts(ctx, page)
		if err != nil {
			return nil, err
		}
		for _, t := range rows {
			items = append(items, payoutItem(t))
		}
	}
	return items, nil
}

// SendsReported reads back the payouts whose sends (their ids at the PSP,
// the payout's UUID without dashes) a webhook reported, and finishes each
// one the PSP itself reports final, as a reading of the payout on its own
// would: a payout finishes as soon as the PSP says so rather than at its
// next reading. The report says nothing by itself: an id that names no
// payout still waiting on the PSP is ignored, and what the PSP answers is
// all that is written, guarded by the row as read.
func (e *Engine) SendsReported(ctx context.Context, sendIDs []string) error {
	var ids []string
	seen := make(map[string]bool, len(sendIDs))
	for _, h := range sendIDs {
		// A payout is sent under its UUID's 32 hex digits (provider.HexID),
		// which uuid.Parse reads back.
		u, err := uuid.Parse(h)
		id, ok := u.String(), err == nil && len(h) == 32
		if !ok {
			e.log.WarnContext(ctx, "a PSP webhook reported a send that is no payout's; ignored")
			continue
		}
		if !seen[id] {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	rows, err := e.db.PendingPayouts(ctx, ids)
	if err != nil {
		return fmt.Errorf("reported sends: %w", err)
	}
	_, err = eachN(ctx, Workers, rows, func(t pix.Transaction) (int, error) {
		return e.readReported(ctx, t)
	})
	return err
}

// readReported reads payout t at the PSP and finishes it if the PSP says
// it is final.
func (e *Engine) readReported(ctx context.Context, t pix.Transaction) (int, error) {
	tr, err := payoutTransfer(t)
	if err != nil {
		return 0, err
	}
	cctx, cancel := context.WithTimeout(ctx, provider.DefaultCallTimeout)
	st, err := e.psp.Status(cctx, tr)
	cancel()
	if errors.Is(err, provider.ErrNotFound) {
		e.log.WarnContext(ctx, "a PSP webhook reported a send the PSP does not find; left to its readings", "payout", t.ID)
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("read reported payout %s: %w", t.ID, err)
	}
	if !final(st) {
		return 0, nil // still processing: read again on its schedule
	}
	it := payoutItem(t)
	it.transfer = tr
	return e.finishSend(ctx, it, it.held(), st)
}
