package gateway

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"

	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/store"
)

// This file holds what the API asks of its clients: who is calling
// (Authenticate) and a client's settings. Creating clients and changing
// their credentials and fees are the operators' tools, in
// internal/backoffice.

// Client returns the client with that id. Errors: ENotFound.
func (s *Service) Client(ctx context.Context, clientID string) (pix.Client, error) {
	c, err := s.db.Client(ctx, clientID)
	if errors.Is(err, store.ErrNotFound) {
		return pix.Client{}, pix.Errorf(pix.ENotFound, "client %q not found", clientID)
	}
	if err != nil {
		return pix.Client{}, fmt.Errorf("client: %w", err)
	}
	return c, nil
}

// Authenticate returns the active client of this environment whose id and
// secret match, comparing the secret's hash in constant time. Every failure
// is EUnauthorized, without saying which part was wrong.
func (s *Service) Authenticate(ctx context.Context, clientID, secret string) (pix.Client, error) {
	unauthorized := pix.Errorf(pix.EUnauthorized, "Invalid credentials")
	if clientID == "" || secret == "" || len(clientID) > 128 || len(secret) > 256 ||
		!pix.ValidText(clientID) {
		return pix.Client{}, unauthorized
	}
	c, err := s.db.Client(ctx, clientID)
	if errors.Is(err, store.ErrNotFound) {
		// Spend the same work as a real comparison.
		subtle.ConstantTimeCompare([]byte(pix.HashSecret(secret)), []byte(pix.HashSecret("")))
		return pix.Client{}, unauthorized
	}
	if err != nil {
		return pix.Client{}, fmt.Errorf("authenticate: %w", err)
	}
	match := subtle.ConstantTimeCompare([]byte(pix.HashSecret(secret)), []byte(c.SecretHash)) == 1
	if !match || c.Status != pix.ClientActive || c.Environment != s.Env {
		return pix.Client{}, unauthorized
	}
	return c, nil
}
