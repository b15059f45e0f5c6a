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

// Efí takes due-date charges through the API Pix client it embeds.
var _ provider.DueCharger = (*efi.Client)(nil)

// TestDueChargesWithEfi creates, pays and removes cobvs through the efi
// provider at the simulator, every exchange checked against BACEN's
// OpenAPI.
func TestDueChargesWithEfi(t *testing.T) {
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
		Log: slog.New(slog.NewJSONHandler(io.Discard, nil))})
	require.NoError(t, err)
	var dc provider.DueCharger = p

	due, err := pix.ParseDate("2026-12-10")
	require.NoError(t, err)
	ch := provider.DueCharge{TxID: "pixgateEfiDue0000000000000000001", Amount: 25000,
		Due:   pix.Due{Date: due, DaysAfter: 10, Fine: pix.DueFine{Amount: 500}, InterestBP: 200},
		Payer: provider.DuePayer{Name: "Maria", Document: "52998224725", Street: "Rua A", Number: "1", City: "Recife", State: "PE", ZipCode: "50000000"}}
	_, err = dc.CreateDueCharge(ctx, ch)
	require.NoError(t, err)
	e2e, valor, err := sim.PayCobV(ctx, ch.TxID, "2026-12-14")
	require.NoError(t, err)
	want, ok := ch.Due.AmountOn(ch.Amount, pix.DateOf(time.Date(2026, 12, 14, 0, 0, 0, 0, time.UTC)))
	require.True(t, ok)
	require.Equal(t, int64(want), valor, "R$ 250.00 + 5.00 + four days at 2% a month")
	pays, err := dc.DueChargePayments(ctx, ch.TxID)
	require.NoError(t, err)
	// Dated the day paid for, at the simulator's time of day.
	require.Equal(t, []provider.Payment{{TxID: ch.TxID, Amount: want, EndToEndID: e2e, PaidAt: now.AddDate(0, 0, 13),
		PayerName: "Maria", PayerDocument: "52998224725"}}, pays, "the pagador Efí reports: the cobv's debtor")

	ch.TxID = "pixgateEfiDue0000000000000000002"
	_, err = dc.CreateDueCharge(ctx, ch)
	require.NoError(t, err)
	require.NoError(t, dc.CancelDueCharge(ctx, ch.TxID))
	v.Check(t)
}
