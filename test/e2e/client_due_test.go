package e2e

import (
	"context"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/client"
)

// TestClientDueCharge creates a charge with a due date through the Go
// client against a real pixgate serve (SQLite), reads its terms back, and
// pays it in the sandbox on the day after its due date: R$ 100.00 with a
// 2% fine and a day of 1% a month (R$ 0.0333, rounded to 0.03) is
// R$ 102.03, credited less the R$ 0.10 fee, and pix.cashin.paid carries it.
func TestClientDueCharge(t *testing.T) {
	t.Parallel()
	s := startClientServe(t, filepath.Join(t.TempDir(), "pixgate.db"))
	ctx := t.Context()
	events := make(chan client.Event, 16)
	push := func(_ context.Context, e client.Event) error { events <- e; return nil }
	wh, err := client.WebhookHandler(s.creds.WebhookSecret, client.EventHandlers{OnCashinPaid: push})
	require.NoError(t, err)
	recv := httptest.NewServer(wh)
	t.Cleanup(recv.Close)
	c := s.client(t)

	loc, err := time.LoadLocation("America/Sao_Paulo")
	require.NoError(t, err)
	due := time.Now().In(loc).AddDate(0, 0, 2)
	req := chargeRequest("bill-1", client.Reais("100"), recv.URL+"/pix")
	req.Due = &client.Due{Date: due.Format("2006-01-02"), DaysAfter: client.Ptr(10),
		Fine: &client.DueFine{Percent: client.Ptr(client.Percents("2"))}, Interest: &client.DueInterest{PercentPerMonth: client.Percents("1")}}
	charge, err := c.CreateCharge(ctx, req)
	require.NoError(t, err)
	require.Equal(t, req.Due.Date, charge.Due.Date)
	require.Equal(t, 10, *charge.Due.DaysAfter)
	require.Equal(t, client.Reais("100"), *charge.AmountDueToday)
	last := time.Date(due.Year(), due.Month(), due.Day()+11, 0, 0, 0, 0, loc)
	require.True(t, charge.ExpiresAt.Equal(last), "expires at the end of the last day in São Paulo: %s", charge.ExpiresAt)

	found, err := c.Lookup(ctx, client.LookupQuery{PaymentID: charge.PaymentID})
	require.NoError(t, err)
	require.Equal(t, client.Percents("1"), found.Due.Interest.PercentPerMonth)

	paid, err := c.SandboxPayOn(ctx, charge.PaymentID, due.AddDate(0, 0, 1).Format("2006-01-02"))
	require.NoError(t, err)
	require.Equal(t, client.StatusPaid, paid.Status)
	require.Equal(t, client.Reais("102.03"), *paid.PaidAmount)
	require.Equal(t, client.Reais("100"), paid.Amount)
	require.False(t, paid.AmountMismatch)
	require.Nil(t, paid.AmountDueToday)
	e := waitEvent(t, events, client.EventCashinPaid)
	require.Equal(t, client.Reais("102.03"), e.Value)
	require.Equal(t, client.Reais("0.10"), e.Tax)
	bal, err := c.Balance(ctx)
	require.NoError(t, err)
	require.Equal(t, client.Reais("101.93"), bal.Available)
}
