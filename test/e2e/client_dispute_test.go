package e2e

import (
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/client"
	"github.com/pixgate/pixgate/internal/testkit"
)

// TestClientDispute drives MED through the Go client against a real
// pixgate serve, on both databases: a contest that blocks money, the
// merchant's defense, the return out of the block, a return nobody
// announced, the list and the charge's lookup, and the events.
func TestClientDispute(t *testing.T) {
	t.Parallel()
	testkit.ForEachDatabaseURL(t, func(t *testing.T, dbURL string) {
		s := startClientServe(t, dbURL)
		ctx := t.Context()
		events := newEventLog()
		wh, err := client.WebhookHandler(s.creds.WebhookSecret, client.EventHandlers{
			OnDisputeOpened: events.push, OnDisputeClosed: events.push})
		require.NoError(t, err)
		recv := httptest.NewServer(wh)
		t.Cleanup(recv.Close)
		c := s.client(t)
		pay := func(ext, amount string) string {
			ch, err := c.CreateCharge(ctx, chargeRequest(ext, client.Reais(amount), recv.URL+"/pix"))
			require.NoError(t, err)
			_, err = c.SandboxPay(ctx, ch.PaymentID)
			require.NoError(t, err)
			return ch.PaymentID
		}
		id := pay("med-1", "100.00")

		d, err := c.SandboxDispute(ctx, id, nil, client.DisputeReasonFraud)
		require.NoError(t, err)
		require.Equal(t, client.DisputeOpen, d.Status)
		require.Equal(t, client.Reais("100.00"), d.Amount)
		opened := events.wait(t, client.EventDisputeOpened, func(e client.Event) bool { return e.DisputeID == d.DisputeID })
		require.Equal(t, id, opened.PaymentID)
		require.NotNil(t, opened.RespondBy)
		b, err := c.Balance(ctx)
		require.NoError(t, err)
		require.Equal(t, client.Centavos(9990), b.Blocked, "all that is available of it: 100.00 less the 0.10 fee")
		require.Equal(t, client.Centavos(0), b.Available)

		def, err := c.DefendDispute(ctx, d.DisputeID, false, "Pedido entregue com comprovante")
		require.NoError(t, err)
		require.NotNil(t, def.Defense)
		_, err = c.DefendDispute(ctx, d.DisputeID, true, "outra")
		require.Equal(t, 422, client.AsError(err).StatusCode, "%v", err)

		// The PSP returns it all: the block, and a debt of the 0.10 fee.
		more := client.Reais("100.00")
		got, err := c.SandboxResolveDispute(ctx, d.DisputeID, client.OutcomeReturned, &more)
		require.NoError(t, err)
		require.Equal(t, client.OutcomeReturned, *got.Outcome)
		closed := events.wait(t, client.EventDisputeClosed, func(e client.Event) bool { return e.DisputeID == d.DisputeID })
		require.Equal(t, client.OutcomeReturned, closed.Outcome)
		require.Equal(t, client.Reais("100.00"), *closed.ReturnedAmount)

		b, err = c.Balance(ctx)
		require.NoError(t, err)
		require.Equal(t, [3]client.Amount{0, 0, 10}, [3]client.Amount{b.Available, b.Blocked, b.Debt})

		pay("med-2", "30.00") // pays the debt first
		partial := client.Reais("10.00")
		_, err = c.SandboxMedReturn(ctx, pay("med-3", "20.00"), &partial, "MED_OPERACIONAL")
		require.NoError(t, err)
		b, err = c.Balance(ctx)
		require.NoError(t, err)
		require.Equal(t, client.Centavos(3970), b.Available, "29.90 − 0.10 owed + 19.90 − 10.00 returned")
		require.Equal(t, client.Centavos(0), b.Blocked)
		require.Equal(t, client.Centavos(0), b.Debt)

		var all []client.Dispute
		for d, err := range c.Disputes(ctx, client.DisputeQuery{Limit: 1}) {
			require.NoError(t, err)
			all = append(all, d)
		}
		require.Len(t, all, 2)
		require.Equal(t, client.DisputeReasonOperationalFailure, all[0].Reason, "newest first")
		look, err := c.Lookup(ctx, client.LookupQuery{PaymentID: id})
		require.NoError(t, err)
		require.Len(t, look.Disputes, 1)
		require.Equal(t, "REFUNDED", look.Status)
	})
}
