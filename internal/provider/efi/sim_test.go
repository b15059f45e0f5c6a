package efi_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/internal/brcode"
	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/provider"
	"github.com/pixgate/pixgate/internal/provider/apipix"
	"github.com/pixgate/pixgate/internal/provider/efi"
	"github.com/pixgate/pixgate/internal/pspsim"
	"github.com/pixgate/pixgate/internal/testkit"
)

// TestAgainstTheSimulator drives every operation of the efi provider (and
// so of apipix, which it extends) against the PSP simulator over mutual TLS
// and OAuth 2.0, with every API Pix request the provider sends and every
// answer the simulator gives validated against BACEN's OpenAPI.
func TestAgainstTheSimulator(t *testing.T) {
	t.Parallel()
	v := testkit.BACENValidator(t)
	ctx := context.Background()
	hooks := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) }))
	t.Cleanup(hooks.Close)
	sim := pspsim.New(pspsim.Options{Wrap: v.Wrap, SettleDelay: -1, PixKey: "loja@example.com"})
	require.NoError(t, sim.Start(ctx))
	t.Cleanup(sim.Close)
	o := sim.Options()
	p, err := efi.New(apipix.Config{APIURL: sim.URL(), ClientID: o.ClientID, ClientSecret: o.ClientSecret,
		CertPEM: o.PKI.ClientCertPEM, KeyPEM: o.PKI.ClientKeyPEM, CAPEM: o.PKI.CAPEM, PixKey: o.PixKey,
		WebhookURL: hooks.URL + "/psp/webhook/abcdefghijklmnopqrstuvwxyz0123456789",
		Log:        slog.New(slog.NewJSONHandler(io.Discard, nil))})
	require.NoError(t, err)
	require.Equal(t, provider.NameEfi, p.Name())
	require.True(t, p.Capabilities().Payouts)
	require.NoError(t, p.Start(ctx))

	// Charges: created with the PSP's dynamic BR Code, read, paid, listed, removed.
	txids := []string{"pixgateTest0000000000000000000001", "pixgateTest0000000000000000000002", "pixgateTest0000000000000000000003"}
	for i, txid := range txids {
		code, err := p.CreateCharge(ctx, provider.Charge{TxID: txid, Amount: pix.Amount(1000 + i), TTL: time.Hour,
			PayerName: "Maria", PayerDocument: "52998224725", Question: "Pedido 1"})
		require.NoError(t, err)
		parsed, err := brcode.Parse(code)
		require.NoError(t, err, code)
		require.NotEmpty(t, parsed)
	}
	pays, err := p.ChargePayments(ctx, txids[0])
	require.NoError(t, err)
	require.Empty(t, pays)
	e2e, err := sim.Pay(ctx, txids[0])
	require.NoError(t, err)
	_, err = sim.Pay(ctx, txids[1])
	require.NoError(t, err)
	pays, err = p.ChargePayments(ctx, txids[0])
	require.NoError(t, err)
	require.Len(t, pays, 1)
	require.Equal(t, provider.Payment{TxID: txids[0], Amount: 1000, EndToEndID: e2e, PaidAt: pays[0].PaidAt,
		PayerName: "Maria", PayerDocument: "52998224725"}, pays[0], "with the pagador Efí reports: the cob's debtor")
	got, err := p.ConfirmPayment(ctx, e2e)
	require.NoError(t, err)
	require.Equal(t, pix.Amount(1000), got.Amount)
	_, err = p.ConfirmPayment(ctx, "E0000000020261126120000000000000")
	require.ErrorIs(t, err, provider.ErrNotFound)
	listed, err := p.Received(ctx, time.Now().Add(-time.Hour), time.Now().Add(time.Minute))
	require.NoError(t, err)
	require.Len(t, listed, 2)
	require.NoError(t, p.CancelCharge(ctx, txids[2]))
	require.NoError(t, p.CancelCharge(ctx, txids[2]), "a cob removed already (an earlier PATCH whose answer was lost) is removed")
	require.ErrorIs(t, p.CancelCharge(ctx, txids[0]), provider.ErrRejected, "a paid cob cannot be removed")

	// A refund (devolução) and a payout (Efí's send): sent once, read until final.
	refund := provider.Transfer{ID: "0b7c3a52-2222-4222-8222-222222222222", Amount: 400, Description: "devolução", Refund: true, PaymentE2E: e2e}
	_, err = p.Status(ctx, refund)
	require.ErrorIs(t, err, provider.ErrNotFound)
	st, err := p.Send(ctx, refund)
	require.NoError(t, err)
	require.Equal(t, provider.Processing, st.Status)
	_, err = p.Send(ctx, refund)
	require.ErrorIs(t, err, provider.ErrRejected, "a reused devolução id is refused")
	payout := provider.Transfer{ID: "1c8d4b63-3333-4333-8333-333333333333", Amount: 250, KeyType: pix.KeyEmail,
		Key: "fornecedor@example.com", Description: "NF 42"}
	_, err = p.Status(ctx, payout)
	require.ErrorIs(t, err, provider.ErrNotFound)
	st, err = p.Send(ctx, payout)
	require.NoError(t, err)
	require.Equal(t, provider.Processing, st.Status)
	sim.Settle(ctx)
	st, err = p.Status(ctx, refund)
	require.NoError(t, err)
	require.Equal(t, provider.Completed, st.Status)
	require.Len(t, st.EndToEndID, 32)
	st, err = p.Status(ctx, payout)
	require.NoError(t, err)
	require.Equal(t, provider.Completed, st.Status)
	require.Len(t, st.EndToEndID, 32)
	require.Equal(t, pspsim.Count{Puts: 1, Accepted: 1}, sim.SendCount(provider.HexID(payout.ID)))
	require.Equal(t, pspsim.Count{Puts: 2, Accepted: 1}, sim.RefundCount(provider.HexID(refund.ID)))
	got, err = p.ConfirmPayment(ctx, e2e)
	require.NoError(t, err)
	require.Equal(t, []provider.TransferState{{ID: provider.HexID(refund.ID), Status: provider.Completed, EndToEndID: got.Refunds[0].EndToEndID,
		Amount: 400, Nature: provider.NatureOriginal}}, got.Refunds)

	// The token expires at the PSP: the next call refreshes it and succeeds.
	sim.ExpireTokens()
	_, err = p.ChargePayments(ctx, txids[1])
	require.NoError(t, err)
	tokens := 0
	for _, r := range sim.Requests() {
		if r.Path == "/oauth/token" {
			tokens++
		}
	}
	require.Equal(t, 2, tokens, "one token until it expired, then one more")

	v.Check(t)
}

// Efí's list of sent Pix gives many payouts' states in few calls, across
// pages, each by its pixgate UUID; a period with none lists none.
func TestSentListAgainstTheSimulator(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	sim := pspsim.New(pspsim.Options{SettleDelay: -1, PixKey: "loja@example.com"})
	require.NoError(t, sim.Start(ctx))
	t.Cleanup(sim.Close)
	o := sim.Options()
	p, err := efi.New(apipix.Config{APIURL: sim.URL(), ClientID: o.ClientID, ClientSecret: o.ClientSecret,
		CertPEM: o.PKI.ClientCertPEM, KeyPEM: o.PKI.ClientKeyPEM, CAPEM: o.PKI.CAPEM, PixKey: o.PixKey,
		WebhookURL: "https://pixgate.example.com/psp/webhook/abcdefghijklmnopqrstuvwxyz0123456789",
		Log:        slog.New(slog.NewJSONHandler(io.Discard, nil))})
	require.NoError(t, err)
	start := time.Now()
	const n = 1205 // two pages of 1,000 and one more
	want := map[string]provider.Status{}
	for i := range n {
		key := "fornecedor@example.com"
		if i%100 == 7 {
			key = "x" + pspsim.FailKeySuffix
		}
		tr := provider.Transfer{ID: fmt.Sprintf("1c8d4b63-3333-4333-8333-%012d", i), Amount: 100, KeyType: pix.KeyEmail, Key: key}
		_, err := p.Send(ctx, tr)
		require.NoError(t, err)
		want[tr.ID] = provider.Completed
		if i%100 == 7 {
			want[tr.ID] = provider.Failed
		}
	}
	listed, err := p.SentBetween(ctx, start.Add(-time.Second), time.Now())
	require.NoError(t, err)
	require.Len(t, listed, n)
	for _, st := range listed {
		require.Equal(t, provider.Processing, st.Status, st.ID)
	}
	sim.Settle(ctx)
	listed, err = p.SentBetween(ctx, start.Add(-time.Second), time.Now())
	require.NoError(t, err)
	got := map[string]provider.Status{}
	for _, st := range listed {
		got[st.ID] = st.Status
		if st.Status == provider.Completed {
			require.True(t, provider.ValidEndToEnd(st.EndToEndID), st.ID)
		}
	}
	require.Equal(t, want, got)
	none, err := p.SentBetween(ctx, start.Add(-time.Hour), start.Add(-30*time.Minute))
	require.NoError(t, err)
	require.Empty(t, none)
}

// The MED at Efí, against the simulator: infractions read in Efí's shape
// and mapped, defenses sent once, releases and acceptances read back, and
// the MED devoluções found both on the Pix and by the list of Pix having
// a devolução, every API Pix exchange checked against BACEN's OpenAPI.
func TestDisputesAgainstTheSimulator(t *testing.T) {
	t.Parallel()
	v := testkit.BACENValidator(t)
	ctx := context.Background()
	hooks := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) }))
	t.Cleanup(hooks.Close)
	sim := pspsim.New(pspsim.Options{Wrap: v.Wrap, SettleDelay: -1, PixKey: "loja@example.com"})
	require.NoError(t, sim.Start(ctx))
	t.Cleanup(sim.Close)
	o := sim.Options()
	p, err := efi.New(apipix.Config{APIURL: sim.URL(), ClientID: o.ClientID, ClientSecret: o.ClientSecret,
		CertPEM: o.PKI.ClientCertPEM, KeyPEM: o.PKI.ClientKeyPEM, CAPEM: o.PKI.CAPEM, PixKey: o.PixKey,
		WebhookURL: hooks.URL + "/psp/webhook/abcdefghijklmnopqrstuvwxyz0123456789",
		Log:        slog.New(slog.NewJSONHandler(io.Discard, nil))})
	require.NoError(t, err)
	require.NoError(t, p.Start(ctx))
	var _ provider.Disputer = p

	start := time.Now()
	var e2es []string
	for i, valor := range []pix.Amount{1000, 2000, 3000} {
		txid := fmt.Sprintf("pixgateMED000000000000000000000%d", i)
		_, err := p.CreateCharge(ctx, provider.Charge{TxID: txid, Amount: valor, TTL: time.Hour, PayerName: "Maria", PayerDocument: "52998224725"})
		require.NoError(t, err)
		e2e, err := sim.Pay(ctx, txid)
		require.NoError(t, err)
		e2es = append(e2es, e2e)
	}
	due := time.Now().Add(72 * time.Hour).Truncate(time.Millisecond)
	fraud, err := sim.OpenInfraction(e2es[0], 0, "", due)
	require.NoError(t, err)
	operational, err := sim.OpenInfraction(e2es[1], 500, pspsim.NatureMEDOperational, time.Time{})
	require.NoError(t, err)

	got, err := p.Infractions(ctx, start.Add(-time.Minute), time.Now())
	require.NoError(t, err)
	require.Len(t, got, 2)
	assert.Equal(t, provider.Infraction{ID: fraud, EndToEndID: e2es[0], Amount: 1000, Reason: pix.ReasonFraud,
		Status: provider.InfractionOpen, RespondBy: got[0].RespondBy, OpenedAt: got[0].OpenedAt}, got[0])
	assert.True(t, due.Equal(got[0].RespondBy), "%s != %s", due, got[0].RespondBy)
	assert.WithinDuration(t, start, got[0].OpenedAt, time.Minute)
	assert.Equal(t, pix.Amount(500), got[1].Amount)
	assert.Equal(t, pix.ReasonOperationalFailure, got[1].Reason)
	assert.Equal(t, provider.InfractionOpen, got[1].Status)

	require.NoError(t, p.Defend(ctx, fraud, false, "Produto entregue, rastreio BR123"))
	require.ErrorIs(t, p.Defend(ctx, fraud, true, "De novo"), provider.ErrRejected, "one defense")
	require.ErrorIs(t, p.Defend(ctx, "00000000-0000-4000-8000-000000000000", true, "x"), provider.ErrNotFound)
	require.NoError(t, p.Defend(ctx, operational, true, "Concordo com a devolução"))
	facts := sim.State().Infractions
	assert.Equal(t, &pspsim.InfractionDefense{Analise: "rejeitado", Justificativa: "Produto entregue, rastreio BR123"}, facts[0].Defense)
	assert.Equal(t, &pspsim.InfractionDefense{Analise: "aceito", Justificativa: "Concordo com a devolução"}, facts[1].Defense)
	got, err = p.Infractions(ctx, start.Add(-time.Minute), time.Now())
	require.NoError(t, err)
	assert.Equal(t, provider.InfractionOpen, got[0].Status, "defended, still under analysis")

	require.NoError(t, sim.ReleaseInfraction(fraud))
	devolucao, err := sim.AcceptInfraction(operational, 0)
	require.NoError(t, err)
	got, err = p.Infractions(ctx, start.Add(-time.Minute), time.Now())
	require.NoError(t, err)
	require.Len(t, got, 2)
	assert.Equal(t, provider.InfractionReleased, got[0].Status)
	assert.Equal(t, provider.InfractionAccepted, got[1].Status)

	// A return nobody announced, and the accepted infraction's: on the Pix,
	// and in the list of Pix having a devolução (the third has none).
	unannounced, err := sim.MEDReturn(e2es[0], 250, "")
	require.NoError(t, err)
	confirmed, err := p.ConfirmPayment(ctx, e2es[1])
	require.NoError(t, err)
	require.Len(t, confirmed.Refunds, 1)
	assert.Equal(t, provider.TransferState{ID: devolucao, Status: provider.Completed, EndToEndID: confirmed.Refunds[0].EndToEndID,
		Amount: 500, Nature: provider.NatureMEDOperational}, confirmed.Refunds[0])
	assert.True(t, provider.ValidEndToEnd(confirmed.Refunds[0].EndToEndID))
	listed, err := p.ReceivedWithReturns(ctx, start.Add(-time.Minute), time.Now().Add(time.Minute))
	require.NoError(t, err)
	require.Len(t, listed, 2)
	assert.Equal(t, e2es[0], listed[0].EndToEndID)
	require.Len(t, listed[0].Refunds, 1)
	assert.Equal(t, provider.TransferState{ID: unannounced, Status: provider.Completed, EndToEndID: listed[0].Refunds[0].EndToEndID,
		Amount: 250, Nature: provider.NatureMEDFraud}, listed[0].Refunds[0])
	assert.Equal(t, e2es[1], listed[1].EndToEndID)
	assert.Equal(t, confirmed.Refunds, listed[1].Refunds)
	all, err := p.Received(ctx, start.Add(-time.Minute), time.Now().Add(time.Minute))
	require.NoError(t, err)
	assert.Len(t, all, 3, "Received still lists every Pix")

	old, err := p.Infractions(ctx, start.Add(-96*time.Hour), start.Add(-72*time.Hour))
	require.NoError(t, err)
	assert.Empty(t, old, "nothing created or changed then")
	v.Check(t)
}
