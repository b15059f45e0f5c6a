package cli

import (
	"context"

	"github.com/pixgate/pixgate/internal/admin"
	"github.com/pixgate/pixgate/internal/backoffice"
	"github.com/pixgate/pixgate/internal/pix"
)

type usersCreate struct {
	Email  string `required:"" help:"The user's e-mail address, used to log in."`
	Role   string `required:"" enum:"operator,merchant" help:"operator (sees every client) or merchant (sees only --client)."`
	Client string `name:"client" help:"Merchant users: the id of their client."`
}

// userJSON is what users create prints, once: the password is not stored.
type userJSON struct {
	Email    string  `json:"email"`
	Password string  `json:"password"`
	Role     string  `json:"role"`
	ClientID *string `json:"client_id"`
}

func (a *app) usersCreate(ctx context.Context, u usersCreate) error {
	return a.runBackoffice(ctx, func(bo *backoffice.Service) (any, error) {
		nu, err := admin.CreateUser(ctx, bo, admin.UserParams{Email: u.Email, Role: u.Role, ClientID: u.Client})
		if err != nil {
			return nil, err
		}
		out := userJSON{Email: nu.User.Email, Password: nu.Password, Role: nu.User.Role}
		if nu.User.Role == pix.RoleMerchant {
			out.ClientID = &nu.User.ClientID
		}
		return out, nil
	})
}

type usersResetPassword struct {
	Email string `required:"" help:"The user's e-mail address."`
}

// usersResetPassword gives the user a new generated password, printed once
// as users create prints it; the old password stops working and every
// session of the user ends, in one transaction.
func (a *app) usersResetPassword(ctx context.Context, u usersResetPassword) error {
	return a.runBackoffice(ctx, func(bo *backoffice.Service) (any, error) {
		nu, ended, err := admin.ResetPassword(ctx, bo, u.Email)
		if err != nil {
			return nil, err
		}
		a.log.InfoContext(ctx, "user password reset", "user_id", nu.User.ID, "sessions_ended", ended)
		out := userJSON{Email: nu.User.Email, Password: nu.Password, Role: nu.User.Role}
		if nu.User.Role == pix.RoleMerchant {
			out.ClientID = &nu.User.ClientID
		}
		return out, nil
	})
}

// sandboxBootstrap is what the first sandbox start prints: the sandbox
// client's credentials and the panel's operator, in one JSON object.
type sandboxBootstrap struct {
	backoffice.Credentials
	AdminEmail    string `json:"admin_email,omitempty"`
	AdminPassword string `json:"admin_password,omitempty"`
}

// printSandboxBootstrap creates the sandbox operator admin@sandbox.local
// (when no user exists yet) and prints it with the new sandbox client.
func (a *app) printSandboxBootstrap(ctx context.Context, bo *backoffice.Service, cred backoffice.Credentials) error {
	out := sandboxBootstrap{Credentials: cred}
	nu, created, err := admin.BootstrapSandbox(ctx, bo)
	if err != nil {
		return err
	}
	if created {
		out.AdminEmail, out.AdminPassword = nu.User.Email, nu.Password
	}
	return a.printJSON(out)
}

// runBackoffice opens the database, runs one command of the panel's users
// or of the clients on the back office and prints the result as one JSON
// value.
func (a *app) runBackoffice(ctx context.Context, fn func(bo *backoffice.Service) (any, error)) error {
	db, err := a.open(ctx)
	if err != nil {
		return err
	}
	defer db.Close()
	bo, err := backoffice.New(backoffice.Config{DB: db, Env: a.settings.Env})
	if err != nil {
		return err
	}
	out, err := fn(bo)
	if err != nil {
		return err
	}
	return a.printJSON(out)
}
