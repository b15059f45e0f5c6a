package pix

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io"

	"github.com/google/uuid"
)

// HashSecret returns the stored form of a client secret (and of the
// panel's session tokens): hex SHA-256. These secrets are 32 random bytes,
// so a fast hash is enough; it lives here because the API authenticates
// with it (gateway) and the back office mints with it, and neither imports
// the other.
func HashSecret(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:])
}

// Credentials minted for a new client (NewCredentials).
type Credentials struct {
	ClientID, ClientSecret, WebhookSecret, AccountID string
}

// NewCredentials mints a new client's id (cli_test_/cli_live_ + 24 hex
// digits), secret (sk_test_/sk_live_ + Base64 of 32 bytes), webhook
// secret (whsec_ + Base64 of 32 bytes) and account_id (UUID v4) from r,
// for a client of environment env. It lives here because both the
// operators' tools (backoffice) and the parents' API (account) make
// clients, and neither imports the other.
func NewCredentials(r io.Reader, env string) (Credentials, error) {
	idPrefix, secretPrefix := "cli_test_", "sk_test_"
	if env == EnvProduction {
		idPrefix, secretPrefix = "cli_live_", "sk_live_"
	}
	b := make([]byte, 12+32+32)
	if _, err := io.ReadFull(r, b); err != nil {
		return Credentials{}, fmt.Errorf("new credentials: %w", err)
	}
	acct, err := uuid.NewRandomFromReader(r)
	if err != nil {
		return Credentials{}, fmt.Errorf("new account id: %w", err)
	}
	return Credentials{ClientID: idPrefix + hex.EncodeToString(b[:12]),
		ClientSecret:  secretPrefix + base64.RawURLEncoding.EncodeToString(b[12:44]),
		WebhookSecret: "whsec_" + base64.StdEncoding.EncodeToString(b[44:]), AccountID: acct.String()}, nil
}

// NewClientSecret mints a client secret of environment env from r, as
// NewCredentials does (a rotation).
func NewClientSecret(r io.Reader, env string) (string, error) {
	prefix := "sk_test_"
	if env == EnvProduction {
		prefix = "sk_live_"
	}
	b := make([]byte, 32)
	if _, err := io.ReadFull(r, b); err != nil {
		return "", fmt.Errorf("new client secret: %w", err)
	}
	return prefix + base64.RawURLEncoding.EncodeToString(b), nil
}
