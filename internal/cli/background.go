package cli

import (
	"context"
	"time"

	"github.com/pixgate/pixgate/internal/cashin"
	"github.com/pixgate/pixgate/internal/gateway"
	"github.com/pixgate/pixgate/internal/job"
	"github.com/pixgate/pixgate/internal/provider"
	"github.com/pixgate/pixgate/internal/recurrence"
	"github.com/pixgate/pixgate/internal/store"
	"github.com/pixgate/pixgate/internal/transfer"
	"github.com/pixgate/pixgate/internal/webhook"
)

// background is the work serve runs beside the requests, on every node:
// the periodic tasks and the long-running loops, each until shutdown: the
// cash-in side's (in), recurrences' (rec), the send engine's (tr) and the
// batches' of payouts (po).
func (a *app) background(db *store.DB, psp provider.Provider, in *cashin.Service, rec *recurrence.Service, tr *transfer.Engine,
	po *gateway.Payouts, dispatcher *webhook.Dispatcher) *job.Runner {
	interval := jobInterval(a.settings.PayoutDelay)
	tasks := []job.Task{
		{Name: "expire-charges", Run: in.ExpireDue},
		// Webhooks get lost: the PSP's list of received Pix is read too
		// (the gateway spaces the readings and runs them on one node).
		{Name: "psp-reconcile", Run: in.ReconcileReceived},
		// MED returns nobody announced are found in the PSP's list of
		// received Pix with a devolução.
		{Name: "psp-returns-reading", Run: in.ReadReturns},
		// A PSP that reports its infractions (MED contests) has them read,
		// so that the contested money is blocked before any return.
		{Name: "psp-infractions-reading", Run: in.ReadInfractions},
		// A PSP that lists its sent payouts settles many of them per call.
		{Name: "psp-sent-reading", Run: tr.ReadSent},
		// Cobs left behind by a crash are withdrawn.
		{Name: "psp-orphan-cobs", Run: in.SweepOrphanCobs},
		// Recurrences: each cycle's charge, retries, approvals left
		// unanswered; and the PSP's changes, read without waiting on webhooks.
		{Name: "recurrence-cycles", Run: rec.RunCycles},
		{Name: "psp-recurrences-reading", Run: rec.Read},
		// Scheduled payouts are reserved and handed to the sender as their
		// day begins; a batch whose items are all final is reported.
		{Name: "scheduled-payouts", Run: tr.RunScheduled},
		{Name: "batches-completed", Run: po.CompleteBatches},
	}
	loops := []job.Loop{
		// Payouts, refunds and the returns of money that matched no open
		// charge go to the PSP as they are committed, many at once.
		{Name: "sender", Run: func(ctx context.Context) { tr.Run(ctx, interval) }},
		{Name: "webhook-dispatch", Run: dispatcher.Run},
		{Name: "psp", Run: func(ctx context.Context) { a.runPSP(ctx, psp) }},
	}
	if !a.settings.CertNotAfter.IsZero() {
		loops = append(loops, job.Loop{Name: "certificate", Run: func(ctx context.Context) { a.watchCertificate(ctx, certCheckEvery) }})
	}
	if a.settings.Postgres {
		// PostgreSQL tells every process of the changes of clients
		// (store.ClientChanges), so they are authenticated from memory.
		loops = append(loops, job.Loop{Name: "client-changes", Run: func(ctx context.Context) { db.WatchClients(ctx, a.log) }})
	}
	return &job.Runner{Log: a.log, Interval: interval, Tasks: tasks, Loops: loops, Unavailable: db.Unavailable}
}

// runPSP starts psp, then reads back the webhook registration Start made
// and watches it (another deployment on the same PSP account may take it
// over); with a PSP that has no registration to watch it waits for ctx,
// so that, like every job.Loop, it lasts until shutdown.
func (a *app) runPSP(ctx context.Context, psp provider.Provider) {
	a.startPSP(ctx, psp, pspStartRetry)
	if w, ok := psp.(provider.WebhookChecker); ok {
		a.watchWebhook(ctx, w, webhookCheckEvery)
		return
	}
	<-ctx.Done()
}

// pspStartRetry is how long serve waits before it tries again to start a
// PSP provider (register its webhook URL) that failed to start.
const pspStartRetry = 30 * time.Second

// startPSP starts psp (apipix and efi register pixgate's webhook URL with
// the PSP), trying again every retry until it succeeds or ctx ends. serve
// does not wait for it: until the webhook is registered, the reading of
// the PSP's received Pix (psp-reconcile) still credits every payment.
func (a *app) startPSP(ctx context.Context, psp provider.Provider, retry time.Duration) {
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		err := psp.Start(ctx)
		if rec, ok := psp.(provider.Recurrer); ok && err == nil {
			err = rec.StartRecurrences(ctx)
		}
		if err == nil || ctx.Err() != nil {
			return
		}
		// The provider's errors carry the PSP's own text, never its
		// credentials or tokens (provider/apipix scrubs them).
		a.log.Error("PSP start failed (webhook not registered); retrying in the background",
			"provider", psp.Name(), "retry_in", retry.String(), "error", err.Error())
		t.Reset(retry)
	}
}

// jobInterval polls often enough that a sandbox payout settles close to its
// delay and a charge expires within 5 s of expires_at: 100 ms at the default
// 2 s delay, so that each tick's settlements and webhooks are too small to
// stall the requests behind them (docs/decisions.md).
func jobInterval(payoutDelay time.Duration) time.Duration {
	return min(time.Second, max(50*time.Millisecond, payoutDelay/20))
}
