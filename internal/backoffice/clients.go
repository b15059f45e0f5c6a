package backoffice

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/store"
)

// This file holds the operators' tools over the API clients: creating
// them, their secrets, fees and status. Authenticating a client stays with
// the API's use cases (gateway.Service.Authenticate), which hash a secret
// the same way (pix.HashSecret).

// ClientParams describes a client to create.
type ClientParams struct {
	Name      string
	CashinFee pix.FeeRule
	PayoutFee pix.FeeRule
}

// Credentials are shown once, when a client is created or its secret rotated.
type Credentials struct {
	ClientID      string `json:"client_id"`
	ClientSecret  string `json:"client_secret"`
	WebhookSecret string `json:"webhook_secret,omitempty"`
	Name          string `json:"name,omitempty"`
	Environment   string `json:"environment,omitempty"`
}

// WebhookRotationOverlap is how long the previous webhook secret keeps
// signing beside the new one.
const WebhookRotationOverlap = 24 * time.Hour

func (s *Service) randomBytes(n int) []byte {
	b := make([]byte, n)
	if _, err := io.ReadFull(s.rand, b); err != nil {
		panic("backoffice: random source failed: " + err.Error())
	}
	return b
}

func (s *Service) newClientSecret() string {
	secret, err := pix.NewClientSecret(s.rand, s.env)
	if err != nil {
		panic("backoffice: random source failed: " + err.Error())
	}
	return secret
}

// NewWebhookSecret returns whsec_ + Base64 of 32 random bytes.
func (s *Service) NewWebhookSecret() string {
	return "whsec_" + base64.StdEncoding.EncodeToString(s.randomBytes(32))
}

func validateClientParams(p ClientParams) error {
	name := strings.TrimSpace(p.Name)
	if name == "" || len(name) > 100 {
		return pix.Errorf(pix.EInvalid, "client name must be 1 to 100 characters")
	}
	for _, f := range []pix.FeeRule{p.CashinFee, p.PayoutFee} {
		if f.PercentBP < 0 || f.PercentBP > 10000 || f.Fixed < 0 || f.Fixed > pix.MaxAmount {
			return pix.Errorf(pix.EInvalid, "fees must be 0–100%% plus 0–1,000,000.00")
		}
	}
	return nil
}

// CreateClient creates a client in this service's environment and returns
// its credentials; only the secret's hash is stored. Errors: EInvalid.
func (s *Service) CreateClient(ctx context.Context, p ClientParams) (Credentials, error) {
	if err := validateClientParams(p); err != nil {
		return Credentials{}, err
	}
	var cred Credentials
	err := s.db.Write(ctx, func(tx *store.Tx) error {
		var err error
		cred, err = s.insertClient(ctx, tx, p)
		return err
	})
	return cred, err
}

func (s *Service) insertClient(ctx context.Context, tx *store.Tx, p ClientParams) (Credentials, error) {
	cr, err := pix.NewCredentials(s.rand, s.env)
	if err != nil {
		return Credentials{}, fmt.Errorf("create client: %w", err)
	}
	c := pix.Client{
		ID: cr.ClientID, AccountID: cr.AccountID, Name: strings.TrimSpace(p.Name), Environment: s.env,
		WebhookSecret: cr.WebhookSecret, CashinFee: p.CashinFee, PayoutFee: p.PayoutFee,
		Status: pix.ClientActive, CreatedAt: s.stamp(), SecretHash: pix.HashSecret(cr.ClientSecret),
	}
	if err := tx.InsertClient(ctx, c); err != nil {
		return Credentials{}, fmt.Errorf("create client: %w", err)
	}
	return Credentials{ClientID: c.ID, ClientSecret: cr.ClientSecret, WebhookSecret: c.WebhookSecret, Name: c.Name, Environment: c.Environment}, nil
}

// BootstrapSandbox creates the client named "sandbox" when the database has
// no client yet, in sandbox only. It returns the credentials and true when it
// created one; across nodes starting together at most one is created.
func (s *Service) BootstrapSandbox(ctx context.Context) (Credentials, bool, error) {
	if s.env != pix.EnvSandbox {
		return Credentials{}, false, nil
	}
	n, err := s.db.CountClients(ctx)
	if err != nil || n > 0 {
		return Credentials{}, false, err
	}
	var cred Credentials
	created := false
	err = s.db.Write(ctx, func(tx *store.Tx) error {
		created = false
		ok, err := tx.ClaimBootstrap(ctx, "sandbox-client", s.stamp())
		if err != nil || !ok {
			return err
		}
		if n, err := tx.CountClients(ctx); err != nil || n > 0 {
			return err
		}
		cred, err = s.insertClient(ctx, tx, ClientParams{Name: "sandbox"})
		created = err == nil
		return err
	})
	return cred, created, err
}

// RotateSecret replaces a client's secret; the old one stops working at once.
// Returns ENotFound for an unknown client.
func (s *Service) RotateSecret(ctx context.Context, clientID string) (Credentials, error) {
	secret := s.newClientSecret()
	err := s.db.Write(ctx, func(tx *store.Tx) error { return tx.SetClientSecret(ctx, clientID, pix.HashSecret(secret)) })
	if errors.Is(err, store.ErrNotFound) {
		return Credentials{}, pix.Errorf(pix.ENotFound, "client %q not found", clientID)
	}
	if err != nil {
		return Credentials{}, fmt.Errorf("rotate secret: %w", err)
	}
	return Credentials{ClientID: clientID, ClientSecret: secret}, nil
}

// RotateWebhookSecret gives client clientID a new webhook secret; for 24 h
// webhooks carry signatures by both. Errors: ENotFound.
func (s *Service) RotateWebhookSecret(ctx context.Context, clientID string) (Credentials, error) {
	secret := s.NewWebhookSecret()
	err := s.db.Write(ctx, func(tx *store.Tx) error {
		return tx.SetWebhookSecret(ctx, clientID, secret, s.stamp().Add(WebhookRotationOverlap))
	})
	if errors.Is(err, store.ErrNotFound) {
		return Credentials{}, pix.Errorf(pix.ENotFound, "client %q not found", clientID)
	}
	if err != nil {
		return Credentials{}, fmt.Errorf("rotate webhook secret: %w", err)
	}
	return Credentials{ClientID: clientID, WebhookSecret: secret}, nil
}

// DisableClient stops a client's credentials from working. Returns ENotFound.
func (s *Service) DisableClient(ctx context.Context, clientID string) error {
	err := s.db.Write(ctx, func(tx *store.Tx) error { return tx.SetClientStatus(ctx, clientID, pix.ClientDisabled) })
	if errors.Is(err, store.ErrNotFound) {
		return pix.Errorf(pix.ENotFound, "client %q not found", clientID)
	}
	if err != nil {
		return fmt.Errorf("disable client: %w", err)
	}
	return nil
}

// SetFees replaces a client's fee rules; they apply to the operations
// created from then on. Errors: ENotFound.
func (s *Service) SetFees(ctx context.Context, clientID string, cashin, payout pix.FeeRule) error {
	err := s.db.Write(ctx, func(tx *store.Tx) error { return tx.SetClientFees(ctx, clientID, cashin, payout) })
	if errors.Is(err, store.ErrNotFound) {
		return pix.Errorf(pix.ENotFound, "client %q not found", clientID)
	}
	if err != nil {
		return fmt.Errorf("set fees: %w", err)
	}
	return nil
}

// Clients lists every client.
func (s *Service) Clients(ctx context.Context) ([]pix.Client, error) {
	return s.db.Clients(ctx)
}
