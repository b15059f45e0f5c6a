package pix

import (
	"crypto/sha256"
	"encoding/hex"
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
