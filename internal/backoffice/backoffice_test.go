package backoffice_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/internal/backoffice"
	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/testkit"
)

func TestNewNeedsDBAndEnv(t *testing.T) {
	t.Parallel()
	_, err := backoffice.New(backoffice.Config{})
	require.ErrorContains(t, err, "DB is required")
	require.ErrorContains(t, err, `Env must be sandbox or production, not ""`)
}

// The panel's users: the rules the store's constraints enforce come back
// as the domain's error codes, and the sandbox's first operator is created
// at most once.
func TestUsers(t *testing.T) {
	t.Parallel()
	testkit.Databases(t, func(t *testing.T, open testkit.Opener) {
		ctx := context.Background()
		clk := &testkit.Clock{}
		bo, err := backoffice.New(backoffice.Config{DB: open(t), Env: pix.EnvSandbox, Now: clk.Now})
		require.NoError(t, err)
		now := clk.Now().UTC().Truncate(time.Millisecond)
		user := func(id, email string) pix.User {
			return pix.User{ID: id, Email: email, PasswordHash: "x", Role: pix.RoleOperator, CreatedAt: now}
		}

		has, err := bo.HasUsers(ctx)
		require.NoError(t, err)
		require.False(t, has)
		created, err := bo.CreateFirstUser(ctx, user("u1", "a@example.com"))
		require.NoError(t, err)
		require.True(t, created)
		created, err = bo.CreateFirstUser(ctx, user("u2", "b@example.com"))
		require.NoError(t, err)
		require.False(t, created, "a second first user")

		err = bo.CreateUser(ctx, user("u3", "a@example.com"))
		require.Equal(t, pix.EConflict, pix.ErrorCode(err), "%v", err)
		m := user("u4", "m@example.com")
		m.Role, m.ClientID = pix.RoleMerchant, "cli_test_missing"
		err = bo.CreateUser(ctx, m)
		require.Equal(t, pix.ENotFound, pix.ErrorCode(err), "%v", err)

		got, err := bo.UserByEmail(ctx, "a@example.com")
		require.NoError(t, err)
		require.Equal(t, "u1", got.ID)
		_, err = bo.UserByEmail(ctx, "nobody@example.com")
		require.Equal(t, pix.ENotFound, pix.ErrorCode(err), "%v", err)
		_, err = bo.SetUserPassword(ctx, "missing", "y")
		require.Equal(t, pix.ENotFound, pix.ErrorCode(err), "%v", err)
	})
}

// A login's session lives until it expires or ends, and the attempts of an
// address are limited per e-mail and in all.
func TestSessionsAndLoginAttempts(t *testing.T) {
	t.Parallel()
	testkit.Databases(t, func(t *testing.T, open testkit.Opener) {
		ctx := context.Background()
		clk := &testkit.Clock{}
		bo, err := backoffice.New(backoffice.Config{DB: open(t), Env: pix.EnvSandbox, Now: clk.Now})
		require.NoError(t, err)
		now := clk.Now().UTC().Truncate(time.Millisecond)
		u := pix.User{ID: "u1", Email: "a@example.com", PasswordHash: "x", Role: pix.RoleOperator, CreatedAt: now}
		require.NoError(t, bo.CreateUser(ctx, u))

		limit := backoffice.LoginLimit{PerPair: 2, PerIP: 3, Window: time.Minute}
		for i, want := range []bool{false, false, true} {
			limited, err := bo.NoteLoginAttempt(ctx, u.Email, "192.0.2.1", now, limit)
			require.NoError(t, err)
			require.Equal(t, want, limited, "attempt %d", i+1)
		}
		limited, err := bo.NoteLoginAttempt(ctx, "other@example.com", "192.0.2.1", now, limit)
		require.NoError(t, err)
		require.False(t, limited, "the address's third attempt")
		limited, err = bo.NoteLoginAttempt(ctx, "third@example.com", "192.0.2.1", now, limit)
		require.NoError(t, err)
		require.True(t, limited, "the address's fourth attempt")

		sess := pix.Session{ID: "s1", UserID: u.ID, CSRFToken: "c", CreatedAt: now, ExpiresAt: now.Add(time.Hour)}
		require.NoError(t, bo.StartSession(ctx, sess, "", u.Email, "192.0.2.1", limit.Window))
		limited, err = bo.NoteLoginAttempt(ctx, u.Email, "192.0.2.1", now, limit)
		require.NoError(t, err)
		require.False(t, limited, "a login clears its pair's attempts")

		got, gotUser, err := bo.SessionUser(ctx, "s1", now)
		require.NoError(t, err)
		require.Equal(t, sess.CSRFToken, got.CSRFToken)
		require.Equal(t, u.ID, gotUser.ID)
		_, _, err = bo.SessionUser(ctx, "s1", now.Add(time.Hour))
		require.Equal(t, pix.ENotFound, pix.ErrorCode(err), "expired")

		require.NoError(t, bo.EndSession(ctx, "s1"))
		_, _, err = bo.SessionUser(ctx, "s1", now)
		require.Equal(t, pix.ENotFound, pix.ErrorCode(err), "ended")
		require.NoError(t, bo.EndSession(ctx, "s1"), "ending a missing session")
	})
}
