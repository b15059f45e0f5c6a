package e2e

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/client"
	"github.com/pixgate/pixgate/internal/testkit"
)

// TestClientAccounts: through the Go client against a real pixgate, a
// parent creates a seller account (a replay gives its secrets empty), lists
// and reads it, transfers to it; the seller reads its balance and history
// with its own credentials and transfers back; a rotated secret stops the
// old one.
func TestClientAccounts(t *testing.T) {
	t.Parallel()
	testkit.ForEachDatabaseURL(t, func(t *testing.T, dbURL string) {
		s := startClientServe(t, dbURL)
		ctx := t.Context()
		c := s.client(t)
		ch, err := c.CreateCharge(ctx, chargeRequest("acct-fund", client.Reais("100.00"), "https://merchant.example.com/pix"))
		require.NoError(t, err)
		_, err = c.SandboxPay(ctx, ch.PaymentID)
		require.NoError(t, err)

		me, err := c.Accounts().Me(ctx)
		require.NoError(t, err)
		require.Empty(t, me.ParentID)
		req := client.AccountRequest{Name: "Loja do João", Document: "52998224725", ExternalID: "seller-1"}
		seller, err := c.Accounts().Create(ctx, req)
		require.NoError(t, err)
		require.Equal(t, 201, seller.StatusCode)
		require.NotEmpty(t, seller.ClientSecret)
		require.Equal(t, me.AccountID, seller.ParentID)
		again, err := c.Accounts().Create(ctx, req)
		require.NoError(t, err)
		require.True(t, again.IdempotentReplayed)
		require.Empty(t, again.ClientSecret)
		require.Equal(t, seller.AccountID, again.AccountID)
		_, err = c.Accounts().Create(ctx, client.AccountRequest{Name: "Outra", Document: "52998224725"})
		require.NoError(t, err)

		var listed []string
		for a, err := range c.Accounts().List(ctx, client.AccountQuery{Limit: 1}) {
			require.NoError(t, err)
			listed = append(listed, a.AccountID)
		}
		require.Len(t, listed, 2)
		require.Equal(t, seller.AccountID, listed[1], "newest first")

		tr, err := c.Transfer(ctx, client.TransferRequest{ToAccountID: seller.AccountID, Amount: client.Reais("40.00"), ExternalID: "tr-1"})
		require.NoError(t, err)
		require.Equal(t, "COMPLETED", tr.Status)
		require.Equal(t, me.AccountID, tr.FromAccountID)
		got, err := c.Accounts().Get(ctx, seller.AccountID)
		require.NoError(t, err)
		require.Equal(t, client.Reais("40.00"), got.Available)

		sc, err := client.New(s.URL, seller.ClientID, seller.ClientSecret)
		require.NoError(t, err)
		sb, err := sc.Balance(ctx)
		require.NoError(t, err)
		require.Equal(t, client.Reais("40.00"), sb.Available)
		sme, err := sc.Accounts().Me(ctx)
		require.NoError(t, err)
		require.Equal(t, me.AccountID, sme.ParentID)
		page, err := sc.HistoryPage(ctx, client.HistoryQuery{})
		require.NoError(t, err)
		require.Len(t, page.Transactions, 1)
		require.Equal(t, client.TypeTransfer, page.Transactions[0].Type)
		require.Equal(t, "in", page.Transactions[0].Direction)
		_, err = sc.Transfer(ctx, client.TransferRequest{ToAccountID: me.AccountID, Amount: client.Reais("15.00")})
		require.NoError(t, err)
		_, err = sc.Transfer(ctx, client.TransferRequest{ToAccountID: me.AccountID, Amount: client.Reais("25.01")})
		require.Equal(t, 422, client.AsError(err).StatusCode, "%v", err)
		b, err := c.Balance(ctx)
		require.NoError(t, err)
		require.Equal(t, client.Reais("99.90")-client.Reais("40.00")+client.Reais("15.00"), b.Available)

		rot, err := c.Accounts().RotateSecret(ctx, seller.AccountID)
		require.NoError(t, err)
		_, err = sc.Balance(ctx)
		require.Equal(t, 401, client.AsError(err).StatusCode, "%v", err)
		fresh, err := client.New(s.URL, seller.ClientID, rot.ClientSecret)
		require.NoError(t, err)
		_, err = fresh.Balance(ctx)
		require.NoError(t, err)
	})
}
