package e2e

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/client"
	"github.com/pixgate/pixgate/internal/testkit"
)

// eventLog keeps every event a receiver got, so that a test can wait for
// one without dropping the others (their order is not guaranteed).
type eventLog struct {
	mu     sync.Mutex
	events []client.Event
	added  chan struct{}
}

func newEventLog() *eventLog { return &eventLog{added: make(chan struct{}, 1)} }

func (l *eventLog) push(_ context.Context, e client.Event) error {
	l.mu.Lock()
	l.events = append(l.events, e)
	l.mu.Unlock()
	select {
	case l.added <- struct{}{}:
	default:
	}
	return nil
}

// wait returns the first event named name that match accepts, waiting
// for it to arrive.
func (l *eventLog) wait(t *testing.T, name string, match func(client.Event) bool) client.Event {
	t.Helper()
	timeout := time.After(15 * time.Second)
	for {
		l.mu.Lock()
		for _, e := range l.events {
			if e.Event == name && match(e) {
				l.mu.Unlock()
				return e
			}
		}
		l.mu.Unlock()
		select {
		case <-l.added:
		case <-timeout:
			t.Fatalf("no %s event", name)
		}
	}
}

// saoPauloDate is today's São Paulo date plus days, "YYYY-MM-DD".
func saoPauloDate(t *testing.T, days int) string {
	t.Helper()
	loc, err := time.LoadLocation("America/Sao_Paulo")
	require.NoError(t, err)
	return time.Now().In(loc).AddDate(0, 0, days).Format("2006-01-02")
}

// TestClientRecurrence drives Pix Automático through the Go client against
// a real pixgate serve, on both databases: creation and its replay, the
// payer's answers, cycle charges paid and failed for good, the merchant's
// and the payer's cancellations, and the events of each.
func TestClientRecurrence(t *testing.T) {
	t.Parallel()
	testkit.ForEachDatabaseURL(t, func(t *testing.T, dbURL string) {
		s := startClientServe(t, dbURL)
		ctx := t.Context()
		events := newEventLog()
		wh, err := client.WebhookHandler(s.creds.WebhookSecret, client.EventHandlers{
			OnCashinPaid: events.push, OnCashinCancelled: events.push,
			OnRecurrenceApproved: events.push, OnRecurrenceRejected: events.push, OnRecurrenceExpired: events.push,
			OnRecurrenceCancelled: events.push, OnRecurrenceChargeFailed: events.push})
		require.NoError(t, err)
		recv := httptest.NewServer(wh)
		t.Cleanup(recv.Close)
		c := s.client(t)
		start := saoPauloDate(t, 3)
		req := client.RecurrenceRequest{ExternalID: "sub-1",
			Payer:    client.RecurrencePayer{Name: "Maria Souza", Document: "52998224725"},
			Contract: "CTR-1", Description: "Plano mensal", Frequency: client.FrequencyMonthly,
			StartDate: start, Amount: client.Reais("49.90"), Retry: client.RetryThreeInSevenDays,
			PostbackURL: recv.URL + "/pix", IdempotencyKey: "sub-1-key"}

		// Created, and replayed for the same body.
		rec, err := c.CreateRecurrence(ctx, req)
		require.NoError(t, err)
		require.Equal(t, http.StatusCreated, rec.StatusCode)
		require.False(t, rec.IdempotentReplayed)
		require.Equal(t, client.RecurrenceCreated, rec.Status)
		require.Equal(t, "sub-1", rec.ExternalID)
		require.Regexp(t, `^000201.*6304[0-9A-F]{4}$`, rec.QRCode)
		require.NotEmpty(t, rec.QRCodeImage)
		require.Equal(t, client.Reais("49.90"), rec.Amount)
		require.Equal(t, start, rec.StartDate)
		require.Equal(t, start, rec.NextDueDate)
		require.Empty(t, rec.EndDate)
		require.Nil(t, rec.FirstPayment)
		require.Empty(t, rec.FirstPaymentID)
		again, err := c.CreateRecurrence(ctx, req)
		require.NoError(t, err)
		require.True(t, again.IdempotentReplayed)
		require.Equal(t, rec.RecurrenceID, again.RecurrenceID)
		other := req
		other.Amount, other.IdempotencyKey = client.Reais("59.90"), ""
		_, err = c.CreateRecurrence(ctx, other)
		require.True(t, client.IsIdempotencyMismatch(err), "%v", err)

		// Bad input names its field and creates nothing.
		bad := req
		bad.ExternalID, bad.IdempotencyKey, bad.StartDate = "sub-bad", "", saoPauloDate(t, 1)
		_, err = c.CreateRecurrence(ctx, bad)
		require.True(t, client.IsBadRequest(err), "%v", err)
		require.Equal(t, "start_date", client.AsError(err).Details[0].Field)

		read, err := c.Recurrence(ctx, rec.RecurrenceID)
		require.NoError(t, err)
		require.Equal(t, client.RecurrenceCreated, read.Status)
		require.Empty(t, read.CancelledBy)
		require.Equal(t, req.Payer, read.Payer)
		require.Equal(t, "CTR-1", read.Contract)
		require.Equal(t, client.RetryThreeInSevenDays, read.Retry)
		require.Empty(t, read.Charges)
		_, err = c.SandboxNextCycle(ctx, rec.RecurrenceID)
		require.Equal(t, http.StatusUnprocessableEntity, client.AsError(err).StatusCode, "no cycle before approval: %v", err)
		_, err = c.Recurrence(ctx, "0b7c3a52-2222-4222-8222-222222222222")
		require.True(t, client.IsNotFound(err), "%v", err)

		// The payer authorizes it.
		approved, err := c.SandboxApproveRecurrence(ctx, rec.RecurrenceID)
		require.NoError(t, err)
		require.Equal(t, client.RecurrenceApproved, approved.Status)
		e := events.wait(t, client.EventRecurrenceApproved, func(e client.Event) bool { return e.RecurrenceID == rec.RecurrenceID })
		require.Equal(t, client.RecurrenceApproved, e.Status)
		require.Equal(t, "sub-1", e.ExternalID)
		_, err = c.SandboxApproveRecurrence(ctx, rec.RecurrenceID)
		require.Equal(t, http.StatusUnprocessableEntity, client.AsError(err).StatusCode, "%v", err)

		// The first cycle is debited: an ordinary cash-in charge with the
		// recurrence_id, credited less the fee.
		first, err := c.SandboxNextCycle(ctx, rec.RecurrenceID)
		require.NoError(t, err)
		require.Equal(t, start, first.DueDate)
		require.Equal(t, client.Reais("49.90"), first.Amount)
		found, err := c.Lookup(ctx, client.LookupQuery{PaymentID: first.PaymentID})
		require.NoError(t, err)
		require.Equal(t, client.TypeCashin, found.Type)
		require.Equal(t, client.StatusPending, found.Status)
		require.Equal(t, rec.RecurrenceID, found.RecurrenceID)
		paid, err := c.SandboxPay(ctx, first.PaymentID)
		require.NoError(t, err)
		require.Equal(t, client.StatusPaid, paid.Status)
		e = events.wait(t, client.EventCashinPaid, func(e client.Event) bool { return e.PaymentID == first.PaymentID })
		require.Equal(t, rec.RecurrenceID, e.RecurrenceID)

		// The second fails on every attempt: three retries, then cancelled
		// and reported.
		second, err := c.SandboxNextCycle(ctx, rec.RecurrenceID)
		require.NoError(t, err)
		require.Greater(t, second.DueDate, first.DueDate)
		for i := range 3 {
			res, err := c.SandboxFailCharge(ctx, second.PaymentID)
			require.NoError(t, err)
			require.Equal(t, client.StatusPending, res.Status, "attempt %d: a retry is left", i+1)
		}
		res, err := c.SandboxFailCharge(ctx, second.PaymentID)
		require.NoError(t, err)
		require.Equal(t, client.StatusCancelled, res.Status)
		e = events.wait(t, client.EventRecurrenceChargeFailed, func(e client.Event) bool { return e.RecurrenceID == rec.RecurrenceID })
		require.Equal(t, second.PaymentID, e.PaymentID)
		require.Equal(t, 4, e.Attempts)
		e = events.wait(t, client.EventCashinCancelled, func(e client.Event) bool { return e.PaymentID == second.PaymentID })
		require.Equal(t, rec.RecurrenceID, e.RecurrenceID)
		_, err = c.SandboxFailCharge(ctx, second.PaymentID)
		require.Equal(t, http.StatusUnprocessableEntity, client.AsError(err).StatusCode, "%v", err)

		// The merchant cancels it: the pending third cycle goes with it.
		third, err := c.SandboxNextCycle(ctx, rec.RecurrenceID)
		require.NoError(t, err)
		cancelled, err := c.CancelRecurrence(ctx, rec.RecurrenceID)
		require.NoError(t, err)
		require.Equal(t, client.RecurrenceCancelled, cancelled.Status)
		require.Equal(t, client.CancelledByMerchant, cancelled.CancelledBy)
		require.Empty(t, cancelled.NextDueDate)
		require.Len(t, cancelled.Charges, 3)
		for i, want := range []struct {
			id, status string
			attempts   int
		}{{first.PaymentID, client.StatusPaid, 1}, {second.PaymentID, client.StatusCancelled, 4}, {third.PaymentID, client.StatusCancelled, 0}} {
			got := cancelled.Charges[i]
			require.Equal(t, want.id, got.PaymentID, "cycle %d", i)
			require.Equal(t, want.status, got.Status, "cycle %d", i)
			require.Equal(t, want.attempts, got.Attempts, "cycle %d", i)
			require.Equal(t, client.Reais("49.90"), got.Amount)
		}
		e = events.wait(t, client.EventRecurrenceCancelled, func(e client.Event) bool { return e.RecurrenceID == rec.RecurrenceID })
		require.Equal(t, client.CancelledByMerchant, e.CancelledBy)
		_, err = c.CancelRecurrence(ctx, rec.RecurrenceID)
		require.Equal(t, http.StatusUnprocessableEntity, client.AsError(err).StatusCode, "already final: %v", err)
		_, err = c.SandboxNextCycle(ctx, rec.RecurrenceID)
		require.Equal(t, http.StatusUnprocessableEntity, client.AsError(err).StatusCode, "no cycle after cancelling: %v", err)

		// Journey 3: the approval pays the first payment; then the payer
		// cancels at their bank.
		j3 := req
		j3.ExternalID, j3.IdempotencyKey, j3.EndDate, j3.FirstPayment = "sub-2", "", saoPauloDate(t, 60), client.Reais("19.90")
		rec3, err := c.CreateRecurrence(ctx, j3)
		require.NoError(t, err)
		require.Equal(t, client.Reais("19.90"), *rec3.FirstPayment)
		require.Equal(t, j3.EndDate, rec3.EndDate)
		require.NotEmpty(t, rec3.FirstPaymentID)
		fp, err := c.Lookup(ctx, client.LookupQuery{PaymentID: rec3.FirstPaymentID})
		require.NoError(t, err)
		require.Equal(t, client.StatusPending, fp.Status)
		require.Equal(t, rec3.RecurrenceID, fp.RecurrenceID)
		_, err = c.SandboxApproveRecurrence(ctx, rec3.RecurrenceID)
		require.NoError(t, err)
		fp, err = c.Lookup(ctx, client.LookupQuery{PaymentID: rec3.FirstPaymentID})
		require.NoError(t, err)
		require.Equal(t, client.StatusPaid, fp.Status)
		e = events.wait(t, client.EventCashinPaid, func(e client.Event) bool { return e.PaymentID == rec3.FirstPaymentID })
		require.Equal(t, rec3.RecurrenceID, e.RecurrenceID)
		byPayer, err := c.SandboxCancelRecurrenceByPayer(ctx, rec3.RecurrenceID)
		require.NoError(t, err)
		require.Equal(t, client.CancelledByPayer, byPayer.CancelledBy)
		e = events.wait(t, client.EventRecurrenceCancelled, func(e client.Event) bool { return e.RecurrenceID == rec3.RecurrenceID })
		require.Equal(t, client.CancelledByPayer, e.CancelledBy)
		_, err = c.CancelRecurrence(ctx, rec3.RecurrenceID)
		require.Equal(t, http.StatusUnprocessableEntity, client.AsError(err).StatusCode, "%v", err)

		// The payer refuses one.
		rj := req
		rj.ExternalID, rj.IdempotencyKey = "sub-3", ""
		rec4, err := c.CreateRecurrence(ctx, rj)
		require.NoError(t, err)
		rejected, err := c.SandboxRejectRecurrence(ctx, rec4.RecurrenceID)
		require.NoError(t, err)
		require.Equal(t, client.RecurrenceRejected, rejected.Status)
		require.Empty(t, rejected.NextDueDate)
		events.wait(t, client.EventRecurrenceRejected, func(e client.Event) bool { return e.RecurrenceID == rec4.RecurrenceID })
		_, err = c.SandboxApproveRecurrence(ctx, rec4.RecurrenceID)
		require.Equal(t, http.StatusUnprocessableEntity, client.AsError(err).StatusCode, "%v", err)

		// Two paid charges, each credited less the R$ 0.10 fee.
		bal, err := c.Balance(ctx)
		require.NoError(t, err)
		require.Equal(t, client.Reais("69.60"), bal.Available)
	})
}
