package efi_test

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/provider"
	"github.com/pixgate/pixgate/internal/provider/apipix"
	"github.com/pixgate/pixgate/internal/provider/efi"
	"github.com/pixgate/pixgate/internal/pspsim"
	"github.com/pixgate/pixgate/internal/testkit"
)

// Efí runs recurrences through the API Pix client it embeds.
var _ provider.Recurrer = (*efi.Client)(nil)

// TestRecurrencesWithEfi registers the webhooks, creates a recurrence the
// payer approves and a cycle debited, through the efi provider at the
// simulator, every exchange checked against BACEN's OpenAPI.
func TestRecurrencesWithEfi(t *testing.T) {
	t.Parallel()
	v := testkit.BACENValidator(t)
	ctx := context.Background()
	now := time.Date(2026, 12, 1, 15, 0, 0, 0, time.UTC)
	sim := pspsim.New(pspsim.Options{Wrap: v.Wrap, PixKey: "loja@example.com", Now: func() time.Time { return now }})
	require.NoError(t, sim.Start(ctx))
	t.Cleanup(sim.Close)
	o := sim.Options()
	p, err := efi.New(apipix.Config{APIURL: sim.URL(), ClientID: o.ClientID, ClientSecret: o.ClientSecret,
		CertPEM: o.PKI.ClientCertPEM, KeyPEM: o.PKI.ClientKeyPEM, CAPEM: o.PKI.CAPEM, PixKey: o.PixKey,
		WebhookURL: "https://pixgate.example/psp/webhook/secret", Account: apipix.Account{Number: "998877", Type: "PAGAMENTO"},
		Log: slog.New(slog.NewJSONHandler(io.Discard, nil))})
	require.NoError(t, err)
	var rr provider.Recurrer = p
	require.NoError(t, rr.StartRecurrences(ctx))

	start, err := pix.ParseDate("2026-12-08")
	require.NoError(t, err)
	created, err := rr.CreateRecurrence(ctx, provider.Recurrence{
		Payer: pix.RecurrencePayer{Name: "Maria", Document: "52998224725"}, Contract: "C-1", Description: "Academia",
		Schedule: pix.Schedule{Frequency: pix.Weekly, Start: start}, Amount: 9900, Retry: pix.RetryNone})
	require.NoError(t, err)
	_, err = sim.ApproveRec(ctx, created.ID)
	require.NoError(t, err)
	require.NoError(t, rr.CreateCycleCharge(ctx, provider.CycleCharge{TxID: "pixgateEfiCycle00000000000000001",
		RecurrenceID: created.ID, DueDate: start, Amount: 9900, Payer: provider.DuePayer{Name: "Maria", Document: "52998224725"}}))
	e2e, err := sim.DebitCobR(ctx, "pixgateEfiCycle00000000000000001")
	require.NoError(t, err)
	cs, err := rr.CycleCharge(ctx, "pixgateEfiCycle00000000000000001")
	require.NoError(t, err)
	require.Equal(t, provider.CyclePaid, cs.Status)
	require.Equal(t, e2e, cs.Payments[0].EndToEndID)
	v.Check(t)
}
