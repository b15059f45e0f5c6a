package backoffice_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/internal/backoffice"
	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/store"
	"github.com/pixgate/pixgate/internal/testkit"
)

// at is the back office's time in these tests, finer than the millisecond
// the clients' rows keep.
var at = time.Date(2026, time.March, 2, 12, 0, 0, 123456789, time.UTC)

// newBackoffice returns a back office in env on a fresh database, whose
// clock reads at.
func newBackoffice(t *testing.T, open testkit.Opener, env string) (*backoffice.Service, *store.DB) {
	t.Helper()
	db := open(t)
	bo, err := backoffice.New(backoffice.Config{DB: db, Env: env, Now: func() time.Time { return at }})
	require.NoError(t, err)
	return bo, db
}

// A client is created in the back office's environment with fresh
// credentials of that environment's form, and only its secret's hash is
// kept; names and fees out of range are refused.
func TestCreateClient(t *testing.T) {
	t.Parallel()
	testkit.Databases(t, func(t *testing.T, open testkit.Opener) {
		ctx := context.Background()
		for env, prefix := range map[string]string{pix.EnvSandbox: "test", pix.EnvProduction: "live"} {
			bo, db := newBackoffice(t, open, env)
			fee := pix.FeeRule{PercentBP: 150, Fixed: 25}
			cred, err := bo.CreateClient(ctx, backoffice.ClientParams{Name: "  Loja  ", CashinFee: fee})
			require.NoError(t, err)
			require.True(t, strings.HasPrefix(cred.ClientID, "cli_"+prefix+"_"), cred.ClientID)
			require.True(t, strings.HasPrefix(cred.ClientSecret, "sk_"+prefix+"_"), cred.ClientSecret)
			require.True(t, strings.HasPrefix(cred.WebhookSecret, "whsec_"), cred.WebhookSecret)
			require.Equal(t, backoffice.Credentials{ClientID: cred.ClientID, ClientSecret: cred.ClientSecret,
				WebhookSecret: cred.WebhookSecret, Name: "Loja", Environment: env}, cred)

			c, err := db.Client(ctx, cred.ClientID)
			require.NoError(t, err)
			require.Equal(t, pix.HashSecret(cred.ClientSecret), c.SecretHash, "only the hash is stored")
			require.Equal(t, env, c.Environment)
			require.Equal(t, fee, c.CashinFee)
			require.Equal(t, pix.ClientActive, c.Status)
			require.Equal(t, at.Truncate(time.Millisecond), c.CreatedAt.UTC())

			list, err := bo.Clients(ctx)
			require.NoError(t, err)
			require.Len(t, list, 1)
			require.Equal(t, cred.ClientID, list[0].ID)
		}

		bo, _ := newBackoffice(t, open, pix.EnvSandbox)
		for _, p := range []backoffice.ClientParams{
			{Name: "   "},
			{Name: strings.Repeat("x", 101)},
			{Name: "x", CashinFee: pix.FeeRule{PercentBP: 10001}},
			{Name: "x", PayoutFee: pix.FeeRule{Fixed: -1}},
			{Name: "x", PayoutFee: pix.FeeRule{Fixed: pix.MaxAmount + 1}},
		} {
			_, err := bo.CreateClient(ctx, p)
			require.Equal(t, pix.EInvalid, pix.ErrorCode(err), "%+v: %v", p, err)
		}
		list, err := bo.Clients(ctx)
		require.NoError(t, err)
		require.Empty(t, list, "nothing refused is stored")
	})
}

// The operators' changes to a client: a new secret replaces the old one, a
// new webhook secret keeps the old one for the overlap, fees and the
// status change; an unknown client is ENotFound for each.
func TestClientChanges(t *testing.T) {
	t.Parallel()
	testkit.Databases(t, func(t *testing.T, open testkit.Opener) {
		ctx := context.Background()
		bo, db := newBackoffice(t, open, pix.EnvSandbox)
		cred, err := bo.CreateClient(ctx, backoffice.ClientParams{Name: "Loja"})
		require.NoError(t, err)

		rotated, err := bo.RotateSecret(ctx, cred.ClientID)
		require.NoError(t, err)
		require.Equal(t, cred.ClientID, rotated.ClientID)
		require.NotEqual(t, cred.ClientSecret, rotated.ClientSecret)
		c, err := db.Client(ctx, cred.ClientID)
		require.NoError(t, err)
		require.Equal(t, pix.HashSecret(rotated.ClientSecret), c.SecretHash)

		hook, err := bo.RotateWebhookSecret(ctx, cred.ClientID)
		require.NoError(t, err)
		require.True(t, strings.HasPrefix(hook.WebhookSecret, "whsec_"))
		c, err = db.Client(ctx, cred.ClientID)
		require.NoError(t, err)
		require.Equal(t, hook.WebhookSecret, c.WebhookSecret)
		require.Equal(t, cred.WebhookSecret, c.PrevWebhookSecret)
		require.Equal(t, at.Truncate(time.Millisecond).Add(backoffice.WebhookRotationOverlap), c.PrevWebhookUntil.UTC())

		cashin, payout := pix.FeeRule{PercentBP: 200}, pix.FeeRule{Fixed: 50}
		require.NoError(t, bo.SetFees(ctx, cred.ClientID, cashin, payout))
		require.NoError(t, bo.DisableClient(ctx, cred.ClientID))
		c, err = db.Client(ctx, cred.ClientID)
		require.NoError(t, err)
		require.Equal(t, cashin, c.CashinFee)
		require.Equal(t, payout, c.PayoutFee)
		require.Equal(t, pix.ClientDisabled, c.Status)

		const missing = "cli_test_missing"
		_, err = bo.RotateSecret(ctx, missing)
		require.Equal(t, pix.ENotFound, pix.ErrorCode(err), "%v", err)
		_, err = bo.RotateWebhookSecret(ctx, missing)
		require.Equal(t, pix.ENotFound, pix.ErrorCode(err), "%v", err)
		require.Equal(t, pix.ENotFound, pix.ErrorCode(bo.SetFees(ctx, missing, cashin, payout)))
		require.Equal(t, pix.ENotFound, pix.ErrorCode(bo.DisableClient(ctx, missing)))
	})
}

// The sandbox's first start creates the client "sandbox" once, and only
// when no client exists; production never does.
func TestBootstrapSandbox(t *testing.T) {
	t.Parallel()
	testkit.Databases(t, func(t *testing.T, open testkit.Opener) {
		ctx := context.Background()
		prod, _ := newBackoffice(t, open, pix.EnvProduction)
		_, created, err := prod.BootstrapSandbox(ctx)
		require.NoError(t, err)
		require.False(t, created, "production")

		bo, _ := newBackoffice(t, open, pix.EnvSandbox)
		cred, created, err := bo.BootstrapSandbox(ctx)
		require.NoError(t, err)
		require.True(t, created)
		require.Equal(t, "sandbox", cred.Name)
		require.Equal(t, pix.EnvSandbox, cred.Environment)
		_, created, err = bo.BootstrapSandbox(ctx)
		require.NoError(t, err)
		require.False(t, created, "a second start")
		list, err := bo.Clients(ctx)
		require.NoError(t, err)
		require.Len(t, list, 1)

		other, _ := newBackoffice(t, open, pix.EnvSandbox)
		_, err = other.CreateClient(ctx, backoffice.ClientParams{Name: "Loja"})
		require.NoError(t, err)
		_, created, err = other.BootstrapSandbox(ctx)
		require.NoError(t, err)
		require.False(t, created, "a database that has a client")
	})
}
