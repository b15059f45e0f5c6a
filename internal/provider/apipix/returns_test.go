package apipix

import (
	"context"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/internal/provider"
	"github.com/pixgate/pixgate/internal/pspsim"
)

// The Pix having a devolução are listed with devolucaoPresente=true, every
// page, each devolução with its valor, natureza and the PSP's id: a
// refund pixgate asked for (ORIGINAL, its hex id) beside MED returns
// nobody announced; a Pix without one is not listed. The simulator's
// answers and the requests are checked against BACEN's OpenAPI.
func TestReturnsAgainstTheSimulator(t *testing.T) {
	sim, c, v := startSim(t)
	ctx := context.Background()
	var e2es []string
	for _, valor := range []int64{1000, 2000, 3000} {
		e2e, err := sim.Receive(ctx, "", valor)
		require.NoError(t, err)
		e2es = append(e2es, e2e)
	}
	refund := provider.Transfer{ID: "0b7c3a52-2222-4222-8222-222222222222", Amount: 300, Refund: true, PaymentE2E: e2es[0]}
	_, err := c.SendRefund(ctx, refund)
	require.NoError(t, err)
	sim.Settle(ctx) // the simulator settles a devolução at its next look: now, for a stable answer
	fraud, err := sim.MEDReturn(e2es[0], 0, "")
	require.NoError(t, err)
	operational, err := sim.MEDReturn(e2es[2], 1250, pspsim.NatureMEDOperational)
	require.NoError(t, err)

	got, err := c.ReceivedWithReturns(ctx, simNow.Add(-time.Hour), simNow.Add(time.Hour))
	require.NoError(t, err)
	require.Len(t, got, 2, "the Pix without a devolução is not listed")
	assert.Equal(t, e2es[0], got[0].EndToEndID)
	require.Len(t, got[0].Refunds, 2)
	assert.Equal(t, provider.TransferState{ID: provider.HexID(refund.ID), Status: provider.Completed, EndToEndID: got[0].Refunds[0].EndToEndID,
		Amount: 300, Nature: provider.NatureOriginal}, got[0].Refunds[0])
	assert.Equal(t, provider.TransferState{ID: fraud, Status: provider.Completed, EndToEndID: got[0].Refunds[1].EndToEndID,
		Amount: 700, Nature: provider.NatureMEDFraud}, got[0].Refunds[1], "what was left, not refunded yet")
	assert.True(t, provider.ValidEndToEnd(got[0].Refunds[1].EndToEndID))
	assert.Equal(t, e2es[2], got[1].EndToEndID)
	assert.Equal(t, []provider.TransferState{{ID: operational, Status: provider.Completed, EndToEndID: got[1].Refunds[0].EndToEndID,
		Amount: 1250, Nature: provider.NatureMEDOperational}}, got[1].Refunds)
	var lists int
	for _, r := range sim.Requests() {
		if r.Method == http.MethodGet && r.Path == "/v2/pix" {
			lists++
			q, err := url.ParseQuery(r.Query)
			require.NoError(t, err)
			assert.Equal(t, "true", q.Get("devolucaoPresente"))
		}
	}
	assert.Equal(t, 1, lists)
	none, err := c.ReceivedWithReturns(ctx, simNow.Add(-3*time.Hour), simNow.Add(-2*time.Hour))
	require.NoError(t, err)
	assert.Empty(t, none)
	v.Check(t)
}
