package transfer

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/provider"
	"github.com/pixgate/pixgate/internal/store"
)

// listedFirstRead is when a payout the PSP accepted is first read on its
// own, with a provider that lists: the list will usually have settled it
// before.
const listedFirstRead = 3 * time.Second

// step takes one step of it: advance, or unschedule a stray row.
func (e *Engine) step(ctx context.Context, it item) (int, error) {
	ctx = e.clocks.For(ctx, it.clientID)
	if it.stray {
		return 0, e.unschedule(ctx, it.held())
	}
	switch it.kind {
	case pix.TransferPayout:
		if it.transfer.ID == "" {
			t, err := payoutTransfer(it.payout)
			if err != nil {
				return 0, err
			}
			it.transfer = t
		}
	case pix.TransferRefund:
		charge, err := e.db.TransactionByID(ctx, it.chargeID)
		if err != nil {
			return 0, fmt.Errorf("refund %s: %w", it.id, err)
		}
		it.transfer.PaymentE2E = charge.EndToEndID
	}
	return e.advance(ctx, it)
}

// payoutTransfer is the transfer payout t asks the PSP for.
func payoutTransfer(t pix.Transaction) (provider.Transfer, error) {
	d, err := pix.ParsePayoutDetails(t)
	if err != nil {
		return provider.Transfer{}, err
	}
	return transferOf(t, d), nil
}

// transferOf is the transfer of payout t with its details d.
func transferOf(t pix.Transaction, d pix.PayoutDetails) provider.Transfer {
	return provider.Transfer{ID: t.ID, Amount: t.Amount, KeyType: pix.KeyType(strings.ToUpper(d.CreditParty.KeyType)),
		Key: d.CreditParty.Key, Description: d.Description, AcceptedAt: t.CreatedAt}
}

// unschedule stops the transfer of st (ID, Kind, WasState, WasSettleAt),
// which has no send state (a version before every provider shared the
// send path settled it in its own way), from being due again: it is left
// for an operator rather than sent to whatever PSP runs now.
func (e *Engine) unschedule(ctx context.Context, st store.SendStep) error {
	e.log.WarnContext(ctx, "a transfer not sent through this PSP is left as it is", "id", st.ID, "refund", st.Kind == pix.TransferRefund)
	st.State, st.Next = st.WasState, time.Time{}
	_, err := e.stepSend(ctx, st)
	return err
}

// claim holds a step of it that may send: a committed update that also
// moves a never-sent transfer to "unknown", so that whatever happens to
// this process during the send, the next step reads the PSP before it
// sends again. The claims of the same moment are one statement
// (store.DB.StepSendGrouped). It holds the row rather than moving its
// settle_at, which the due-work index covers: on PostgreSQL it is then a
// HOT update. It returns the step held, or false if another node took it.
func (e *Engine) claim(ctx context.Context, it item) (store.SendStep, bool, error) {
	held := it.held()
	held.Attempt = true
	if it.state == pix.SendSent {
		// A step that only reads a transfer the PSP accepted is not
		// claimed: two nodes reading it at once cost a call, and its
		// outcome is written guarded by the row as read, so only one of
		// them writes it.
		return held, true, nil
	}
	claimed := it.state
	if claimed == pix.SendToSend {
		claimed = pix.SendUnknown
	}
	// The hold outlasts the step's calls (twice their bound), so that no
	// other node reads "unknown to the PSP" while a send is in flight.
	now := e.clocks.Now()
	lease := now.Add(2 * e.stepTimeout)
	claim := it.held()
	claim.State, claim.Hold, claim.Now = claimed, lease, now
	ok, err := e.stepSend(ctx, claim)
	if err != nil || !ok {
		return held, false, err
	}
	held.WasState, held.Held = claimed, lease
	return held, true, nil
}

// advance takes one step of a transfer with the PSP, claimed first
// (claim). It returns 1 if the transfer reached its final state. A step
// the PSP refused for its rate (429) did nothing at the PSP: the transfer
// goes back to the state it was claimed from, due after the PSP's wait,
// and the step is not counted among the attempts that polling backs off
// on.
func (e *Engine) advance(ctx context.Context, it item) (int, error) {
	held, ok, err := e.claim(ctx, it)
	if err != nil || !ok {
		return 0, err // another node took this step
	}
	cctx, cancel := context.WithTimeout(ctx, e.stepTimeout)
	st, err := e.exchange(cctx, it.state, it.transfer)
	cancel()
	k := e.kinds[it.kind]
	name := it.kind.String()
	switch {
	case errors.Is(err, provider.ErrRateLimited):
		// Every call of the step before the 429 was a read or a refused
		// PUT, so the claimed-from state is still true; a never-sent
		// transfer is then sent without a GET first.
		wait := rateLimitWait(err)
		e.log.InfoContext(ctx, "the PSP limited its rate; the "+k.noun+" waits and is taken up again", name, it.id, "retry_after", wait.String())
		held.State, held.Next, held.Attempt = it.state, e.clocks.At(ctx).Add(wait), false
		_, err := e.stepSend(ctx, held)
		return 0, err
	case errors.Is(err, errSendRefused):
		e.log.WarnContext(ctx, "the PSP refused a "+k.noun+"; "+k.refusal, name, it.id, "error", err.Error())
		return e.finishSend(ctx, it, held, provider.TransferState{ID: it.id, Status: provider.Failed})
	case errors.Is(err, errStillSent):
		e.log.WarnContext(ctx, "the PSP does not find a "+k.noun+" it accepted; reading it again later", name, it.id)
		held.State, held.Next = pix.SendSent, e.clocks.At(ctx).Add(pollMax)
		_, err := e.stepSend(ctx, held)
		return 0, err
	case err != nil:
		e.log.WarnContext(ctx, "the outcome of a "+k.noun+" at the PSP is unknown; its status is read before any resend",
			name, it.id, "error", err.Error())
		// A transfer the PSP accepted stays accepted: it is read again,
		// never sent.
		held.State, held.Next = pix.SendUnknown, e.clocks.At(ctx).Add(backoff(it.attempts+1))
		if it.state == pix.SendSent {
			held.State = pix.SendSent
		}
		_, err := e.stepSend(ctx, held)
		return 0, err
	case final(st):
		return e.finishSend(ctx, it, held, st)
	}
	delay := backoff(it.attempts + 1)
	if e.lister != nil && it.kind == pix.TransferPayout {
		// The list of sent payouts (ReadSent) will usually settle it first.
		delay = max(delay, listedFirstRead)
	}
	held.State, held.Next, held.EndToEndID = pix.SendSent, e.nextRead(ctx, st, delay), st.EndToEndID
	_, err = e.stepSend(ctx, held)
	return 0, err
}

// final reports whether st is the PSP's final word on a transfer.
func final(st provider.TransferState) bool {
	return st.Status == provider.Completed || st.Status == provider.Failed || st.Status == provider.Returned
}

// exchange is the PSP side of one step from state: send a transfer never
// sent; read one whose send's outcome is unknown, and send it only if the
// PSP does not know it; read one the PSP accepted.
func (e *Engine) exchange(ctx context.Context, state string, t provider.Transfer) (provider.TransferState, error) {
	switch state {
	case pix.SendToSend:
		return e.send(ctx, t)
	case pix.SendUnknown:
		st, err := e.psp.Status(ctx, t)
		if errors.Is(err, provider.ErrNotFound) {
			return e.send(ctx, t)
		}
		return st, err
	}
	st, err := e.psp.Status(ctx, t)
	if errors.Is(err, provider.ErrNotFound) {
		return st, errStillSent
	}
	return st, err
}

// send sends t. A refusal is final only if the PSP does not know t: the
// API Pix also refuses a reused devolução id, which a resend after a lost
// answer would be.
func (e *Engine) send(ctx context.Context, t provider.Transfer) (provider.TransferState, error) {
	st, err := e.psp.Send(ctx, t)
	if !errors.Is(err, provider.ErrRejected) && !errors.Is(err, provider.ErrUnsupported) {
		return st, err
	}
	known, serr := e.psp.Status(ctx, t)
	if errors.Is(serr, provider.ErrNotFound) {
		return provider.TransferState{}, fmt.Errorf("%w: %w", errSendRefused, err)
	}
	return known, serr
}

// nextRead is when a transfer the PSP left st is read again: when the
// PSP expects it to change, if it said, else after wait.
func (e *Engine) nextRead(ctx context.Context, st provider.TransferState, wait time.Duration) time.Time {
	now := e.clocks.At(ctx)
	if st.ReadAt.IsZero() {
		return now.Add(wait)
	}
	at := st.ReadAt.UTC().Truncate(time.Millisecond)
	if at.Before(now) {
		return now
	}
	return at
}

// rateLimitWait is how long a transfer waits after the PSP's 429 err: the
// PSP's Retry-After (pollFirst when it gave none), at most maxRateWait.
func rateLimitWait(err error) time.Duration {
	d, _ := provider.RetryAfter(err)
	if d <= 0 {
		d = pollFirst
	}
	return min(d, maxRateWait)
}

// backoff is the wait before the n-th reading of a transfer (n ≥ 1):
// pollFirst, doubling, at most pollMax.
func backoff(n int) time.Duration {
	d := pollFirst
	for i := 1; i < n && d < pollMax; i++ {
		d *= 2
	}
	return min(d, pollMax)
}
