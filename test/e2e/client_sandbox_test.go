package e2e

import (
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/client"
)

// TestClientSandbox pays and expires charges through the sandbox tools of a real
// pixgate serve (SQLite).
func TestClientSandbox(t *testing.T) {
	t.Parallel()
	s := startClientServe(t, filepath.Join(t.TempDir(), "pixgate.db"))
	ctx := t.Context()
	events := make(chan client.Event, 16)
	push := func(_ context.Context, e client.Event) error { events <- e; return nil }
	wh, err := client.WebhookHandler(s.creds.WebhookSecret, client.EventHandlers{
		OnCashinPaid: push, OnCashinCancelled: push})
	require.NoError(t, err)
	recv := httptest.NewServer(wh)
	t.Cleanup(recv.Close)
	c := s.client(t)

	// Pay: PAID, and pix.cashin.paid arrives.
	charge, err := c.CreateCharge(ctx, chargeRequest("sbx-1", client.Reais("12.34"), recv.URL+"/pix"))
	require.NoError(t, err)
	paid, err := c.SandboxPay(ctx, charge.PaymentID)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, paid.StatusCode)
	require.Equal(t, 1, paid.Attempts)
	require.Equal(t, charge.PaymentID, paid.PaymentID)
	require.Equal(t, "sbx-1", paid.ExternalID)
	require.Equal(t, client.TypeCashin, paid.Type)
	require.Equal(t, client.StatusPaid, paid.Status)
	require.Equal(t, client.Reais("12.34"), paid.Amount)
	require.NotNil(t, paid.ConfirmedDate)
	e := waitEvent(t, events, client.EventCashinPaid)
	require.Equal(t, charge.PaymentID, e.PaymentID)

	// Paying twice answers the paid charge again and credits once; a paid
	// charge cannot be expired.
	before, err := c.Balance(ctx)
	require.NoError(t, err)
	again, err := c.SandboxPay(ctx, charge.PaymentID)
	require.NoError(t, err)
	require.Equal(t, client.StatusPaid, again.Status)
	require.Equal(t, paid.ConfirmedDate, again.ConfirmedDate)
	after, err := c.Balance(ctx)
	require.NoError(t, err)
	require.Equal(t, before.Available, after.Available, "credited once")
	_, err = c.SandboxExpire(ctx, charge.PaymentID)
	require.Equal(t, http.StatusUnprocessableEntity, client.AsError(err).StatusCode, "%v", err)

	// Expire: CANCELLED, and pix.cashin.cancelled arrives.
	other, err := c.CreateCharge(ctx, chargeRequest("sbx-2", client.Reais("5"), recv.URL+"/pix"))
	require.NoError(t, err)
	expired, err := c.SandboxExpire(ctx, other.PaymentID)
	require.NoError(t, err)
	require.Equal(t, client.StatusCancelled, expired.Status)
	require.Equal(t, other.PaymentID, expired.PaymentID)
	e = waitEvent(t, events, client.EventCashinCancelled)
	require.Equal(t, other.PaymentID, e.PaymentID)
	again, err = c.SandboxExpire(ctx, other.PaymentID)
	require.NoError(t, err)
	require.Equal(t, client.StatusCancelled, again.Status)
	select {
	case e := <-events:
		t.Fatalf("no second event expected, got %s %s", e.Event, e.PaymentID)
	case <-time.After(300 * time.Millisecond):
	}
	_, err = c.SandboxPay(ctx, other.PaymentID)
	require.Equal(t, http.StatusUnprocessableEntity, client.AsError(err).StatusCode, "%v", err)

	// An unknown charge: 404.
	_, err = c.SandboxPay(ctx, "3f1c2a9e-7b4d-4c21-9a6e-2d8f5b7c1e04")
	require.True(t, client.IsNotFound(err), "%v", err)
}
