package gateway_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/internal/gateway"
	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/provider/sandbox"
	"github.com/pixgate/pixgate/internal/testkit"
)

// TestStatelessSendsStoreThePayoutSent: with a provider whose sends change
// nothing (the sandbox), a payout is sent as it is accepted and stored
// already sent, due to be read when the provider says it settles: no claim
// and no step to sent are written. It is then read and finished as any.
func TestStatelessSendsStoreThePayoutSent(t *testing.T) {
	t.Parallel()
	testkit.Databases(t, func(t *testing.T, open testkit.Opener) {
		db := open(t)
		clock := &testkit.Clock{}
		gw, err := gateway.New(gateway.Config{DB: db, Env: "sandbox", ChargeTTL: time.Hour, Log: slog.New(slog.NewJSONHandler(io.Discard, nil)),
			Provider: sandbox.New(sandbox.Config{PixKey: "pix@pixgate.dev", MerchantName: "Loja", MerchantCity: "Recife",
				Delay: 2 * time.Second, Now: clock.Now}), Now: clock.Now})
		require.NoError(t, err)
		ctx := context.Background()
		cred, err := createClient(ctx, db, gw, clientParams{Name: "m"})
		require.NoError(t, err)
		c, err := gw.Authenticate(ctx, cred.ClientID, cred.ClientSecret)
		require.NoError(t, err)
		ch, _, err := gw.CreateCharge(ctx, c, gateway.Keyed(chargeRequestAmount("fund", "100.00"), "", body("fund")))
		require.NoError(t, err)
		charge, err := gw.Charge(ctx, c, ch.PaymentID)
		require.NoError(t, err)
		_, err = gw.Sandbox().Pay(ctx, charge)
		require.NoError(t, err)

		req := payoutRequest("p1")
		req.Amount = json.RawMessage("5.00")
		resp, _, err := gw.CreatePayout(ctx, c, gateway.Keyed(req, "", body("p1")))
		require.NoError(t, err)
		p, err := db.TransactionByID(ctx, resp.TransactionID)
		require.NoError(t, err)
		require.Equal(t, pix.SendSent, p.SendState)
		require.Equal(t, p.CreatedAt.Add(2*time.Second), p.SettleAt)
		require.Zero(t, p.SendAttempts)

		// Nothing to do before the delay; then read and PAID.
		n, err := gw.Transfers().StepDue(ctx, pix.TransferPayout, 100)
		require.NoError(t, err)
		require.Zero(t, n)
		clock.Advance(2 * time.Second)
		n, err = gw.Transfers().StepDue(ctx, pix.TransferPayout, 100)
		require.NoError(t, err)
		require.Equal(t, 1, n)
		p, err = db.TransactionByID(ctx, resp.TransactionID)
		require.NoError(t, err)
		require.Equal(t, pix.StatusPaid, p.Status)
		require.Equal(t, pix.SendDone, p.SendState)
		require.NoError(t, db.CheckLedger(ctx))
	})
}
