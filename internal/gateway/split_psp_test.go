package gateway_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/internal/account"
	"github.com/pixgate/pixgate/internal/cashin"
	"github.com/pixgate/pixgate/internal/gateway"
	"github.com/pixgate/pixgate/internal/ledger"
	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/provider"
	"github.com/pixgate/pixgate/internal/testkit"
)

// A split charge paid at the PSP (the simulator's payer, read back by
// pixgate) shares its net with the seller in the credit's transaction;
// a refund sent to the PSP takes the seller's share pro rata and, once
// the PSP completes it, both shares leave; an infraction the PSP accepts
// returns the rest pro rata, the seller's part from its own balance.
func TestSplitChargeAtThePSP(t *testing.T) {
	t.Parallel()
	testkit.Databases(t, func(t *testing.T, open testkit.Opener) {
		f := newMEDPSP(t, open, provider.NameEfi)
		ctx := context.Background()
		ext := "seller-1"
		created, _, err := f.gw.Accounts().Create(ctx, f.c, pix.Keyed("account", &account.CreateRequest{Name: "Loja do João",
			Document: "52998224725", ExternalID: &ext}, "", body("seller-1")))
		require.NoError(t, err)
		seller, err := f.gw.Authenticate(ctx, created.ClientID, *created.ClientSecret)
		require.NoError(t, err)
		sellerBalance := func() gateway.Balance {
			b, err := f.gw.Balance(ctx, seller)
			require.NoError(t, err)
			return b
		}

		req := chargeRequestAmount("split-psp", "80.00")
		req.Splits = []pix.SplitRequest{{AccountID: created.AccountID, Percent: json.RawMessage("25")}}
		resp, _, err := f.gw.CreateCharge(ctx, f.c, gateway.Keyed(req, "", body("split-psp")))
		require.NoError(t, err)
		ch, err := f.gw.Charge(ctx, f.c, resp.PaymentID)
		require.NoError(t, err)
		e2e, err := f.sim.Pay(ctx, ch.TxID)
		require.NoError(t, err)
		require.NoError(t, f.gw.Cashin().PSPReported(ctx, []cashin.ReportedPix{{EndToEndID: e2e, TxID: ch.TxID}}))
		require.NoError(t, f.gw.Cashin().PSPReported(ctx, []cashin.ReportedPix{{EndToEndID: e2e, TxID: ch.TxID}}), "reported twice, credited once")
		require.Equal(t, pix.Amount(2000), sellerBalance().Available)
		require.Equal(t, pix.Amount(6000), f.balance(t).Available)
		looked := f.status(t, ch.ID)
		require.NotNil(t, looked.Splits)
		require.Equal(t, pix.Amount(2000), *(*looked.Splits)[0].Amount)

		_, _, err = f.gw.CreateRefund(ctx, f.c, gateway.Keyed(&gateway.RefundRequest{PaymentID: ch.ID, Amount: json.RawMessage("8.00")}, "", body("r1")))
		require.NoError(t, err)
		require.Equal(t, pix.Amount(200), sellerBalance().Pending)
		f.settle(t)
		f.sim.Settle(ctx)
		f.clock.Advance(time.Minute)
		f.settle(t)
		require.Equal(t, gateway.Balance{Available: 1800}, sellerBalance())
		require.Equal(t, pix.Amount(5400), f.balance(t).Available)
		require.Equal(t, pix.Amount(800), f.status(t, ch.ID).RefundedAmount)

		inf, err := f.sim.OpenInfraction(e2e, 0, "", f.clock.Now().Add(72*time.Hour))
		require.NoError(t, err)
		f.readInfractions(t, f.gw)
		_, err = f.sim.AcceptInfraction(inf, 0)
		require.NoError(t, err)
		f.readInfractions(t, f.gw)
		require.Equal(t, 1, f.readReturns(t, f.gw))
		// R$ 72.00 left: the seller's 25 % (18.00), the parent 54.00.
		require.Zero(t, sellerBalance().Available)
		require.Zero(t, f.balance(t).Available)
		b, err := f.db.Balances(ctx, seller.ID)
		require.NoError(t, err)
		require.Zero(t, b[ledger.Debt])
		require.NoError(t, f.db.CheckLedger(ctx))
	})
}
