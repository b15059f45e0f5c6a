package admin

import (
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"net/mail"
	"strings"
	"time"

	"github.com/google/uuid"
	"golang.org/x/crypto/bcrypt"

	"github.com/pixgate/pixgate/internal/pix"
)

// PasswordCost is the bcrypt cost of stored passwords (2^12 rounds, about
// a quarter of a second): slow enough to make a stolen hash expensive to
// guess, fast enough for a login.
const PasswordCost = 12

// SandboxAdminEmail is the operator the sandbox creates on its first start.
const SandboxAdminEmail = "admin@sandbox.local"

// UserParams describes a user to create.
type UserParams struct {
	Email    string
	Role     string // pix.RoleOperator or pix.RoleMerchant
	ClientID string // required for merchant users, refused for operators
	// Cost is the bcrypt cost; 0 means PasswordCost. Tests lower it.
	Cost int
}

// NewUser is a created user and its generated password, shown once.
type NewUser struct {
	User     pix.User
	Password string
}

// normalizeEmail trims and lower-cases an e-mail address.
func normalizeEmail(s string) string { return strings.ToLower(strings.TrimSpace(s)) }

func validEmail(s string) bool {
	if s == "" || len(s) > 254 || strings.ContainsAny(s, " \t\r\n<>\"") {
		return false
	}
	a, err := mail.ParseAddress(s)
	if err != nil || a.Address != s {
		return false
	}
	local, domain, ok := strings.Cut(s, "@")
	return ok && local != "" && domain != "" && !strings.Contains(domain, "@")
}

// generatePassword returns 18 random bytes as 24 URL-safe Base64 characters
// (144 bits).
func generatePassword(r io.Reader) (string, error) {
	b := make([]byte, 18)
	if _, err := io.ReadFull(r, b); err != nil {
		return "", fmt.Errorf("generate password: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// prepareUser validates p and builds the user with a fresh password, without
// storing it. Errors: EInvalid.
func prepareUser(rnd io.Reader, now time.Time, p UserParams) (NewUser, error) {
	email := normalizeEmail(p.Email)
	if !validEmail(email) {
		return NewUser{}, pix.Errorf(pix.EInvalid, "invalid e-mail address %q", p.Email)
	}
	switch p.Role {
	case pix.RoleOperator:
		if p.ClientID != "" {
			return NewUser{}, pix.Errorf(pix.EInvalid, "operators see every client: --client is only for merchant users")
		}
	case pix.RoleMerchant:
		if p.ClientID == "" {
			return NewUser{}, pix.Errorf(pix.EInvalid, "merchant users need --client")
		}
	default:
		return NewUser{}, pix.Errorf(pix.EInvalid, "invalid role %q: operator or merchant", p.Role)
	}
	password, err := generatePassword(rnd)
	if err != nil {
		return NewUser{}, err
	}
	cost := p.Cost
	if cost == 0 {
		cost = PasswordCost
	}
	hash, err := bcrypt.GenerateFromPassword([]byte(password), cost)
	if err != nil {
		return NewUser{}, fmt.Errorf("hash password: %w", err)
	}
	id, err := uuid.NewRandomFromReader(rnd)
	if err != nil {
		return NewUser{}, fmt.Errorf("user id: %w", err)
	}
	u := pix.User{ID: id.String(), Email: email, PasswordHash: string(hash), Role: p.Role, ClientID: p.ClientID,
		CreatedAt: now.UTC().Truncate(time.Millisecond)}
	return NewUser{User: u, Password: password}, nil
}

// CreateUser creates a panel user with a generated password, which it
// returns once; only its bcrypt hash is stored. Errors: EInvalid (e-mail,
// role or client flag), ENotFound (no such client), EConflict (e-mail taken).
func CreateUser(ctx context.Context, users Users, p UserParams) (NewUser, error) {
	nu, err := prepareUser(users.Rand(), users.Now(), p)
	if err != nil {
		return NewUser{}, err
	}
	if err := users.CreateUser(ctx, nu.User); err != nil {
		return NewUser{}, err
	}
	return nu, nil
}

// ResetPassword gives the user with e-mail address email a new generated
// password, returned once; the old password stops working and every
// session of the user ends, in one transaction. It returns how many
// sessions ended. Errors: ENotFound.
func ResetPassword(ctx context.Context, users Users, email string) (nu NewUser, sessionsEnded int64, err error) {
	notFound := pix.Errorf(pix.ENotFound, "no user with e-mail %q", email)
	user, err := users.UserByEmail(ctx, normalizeEmail(email))
	if pix.ErrorCode(err) == pix.ENotFound {
		return NewUser{}, 0, notFound
	} else if err != nil {
		return NewUser{}, 0, fmt.Errorf("reset password: %w", err)
	}
	password, err := generatePassword(users.Rand())
	if err != nil {
		return NewUser{}, 0, err
	}
	hash, err := bcrypt.GenerateFromPassword([]byte(password), PasswordCost)
	if err != nil {
		return NewUser{}, 0, fmt.Errorf("hash password: %w", err)
	}
	sessionsEnded, err = users.SetUserPassword(ctx, user.ID, string(hash))
	if pix.ErrorCode(err) == pix.ENotFound { // deleted meanwhile
		return NewUser{}, 0, notFound
	} else if err != nil {
		return NewUser{}, 0, fmt.Errorf("reset password: %w", err)
	}
	return NewUser{User: user, Password: password}, sessionsEnded, nil
}

// BootstrapSandbox creates the operator admin@sandbox.local when the
// database has no user yet and returns it with its password; created is
// false when it did nothing. Across nodes starting together at most one is
// created. Only the sandbox's first start calls it: production's operators
// are created with pixgate users create.
func BootstrapSandbox(ctx context.Context, users Users) (nu NewUser, created bool, err error) {
	// Hashing the password is slow: skip it when users exist.
	if exist, err := users.HasUsers(ctx); err != nil || exist {
		return NewUser{}, false, err
	}
	nu, err = prepareUser(users.Rand(), users.Now(), UserParams{Email: SandboxAdminEmail, Role: pix.RoleOperator})
	if err != nil {
		return NewUser{}, false, err
	}
	created, err = users.CreateFirstUser(ctx, nu.User)
	if err != nil {
		return NewUser{}, false, fmt.Errorf("create sandbox admin: %w", err)
	}
	return nu, created, nil
}
