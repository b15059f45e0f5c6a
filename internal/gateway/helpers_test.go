package gateway_test

import (
	"context"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/internal/gateway"
	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/provider/sandbox"
	"github.com/pixgate/pixgate/internal/store"
)

func chargeRequest(ext string) *gateway.ChargeRequest { return chargeRequestAmount(ext, "10.50") }

func chargeRequestAmount(ext, amount string) *gateway.ChargeRequest {
	return &gateway.ChargeRequest{
		Amount: json.RawMessage(amount), ExternalID: ext, PayerQuestion: "Pedido", PostbackURL: "https://merchant.example.com/h",
		Payer: &gateway.Payer{Name: "Maria", Document: "52998224725", PhoneNumber: "11987654321", Email: "m@example.com",
			Address: &gateway.Address{Street: "Rua A", Number: "1", Neighborhood: "Centro", City: "Recife", State: "PE", ZipCode: "50000000"}},
		Products: []gateway.Product{{Name: "X", Quantity: "1", Price: json.RawMessage(amount)}},
	}
}

func payoutRequest(ext string) *gateway.PayoutRequest {
	return &gateway.PayoutRequest{Amount: json.RawMessage("1.00"), Description: "x", CallbackURL: "https://merchant.example.com/p",
		ExternalID: &ext, CreditParty: &pix.CreditParty{Name: "F", KeyType: "EMAIL", Key: "f@example.com"}}
}

// sandboxClient builds a sandbox gateway on db (payouts settle after
// payoutDelay) and one authenticated client with the given fees.
func sandboxClient(t *testing.T, db *store.DB, payoutDelay time.Duration, cashin, payout pix.FeeRule) (*gateway.Service, pix.Client) {
	t.Helper()
	ctx := context.Background()
	s, err := gateway.New(gateway.Config{DB: db, Env: "sandbox", ChargeTTL: time.Hour, Log: slog.New(slog.NewJSONHandler(io.Discard, nil)),
		Provider: sandbox.New(sandbox.Config{PixKey: "pix@pixgate.dev", MerchantName: "Loja", MerchantCity: "Recife", Delay: payoutDelay})})
	require.NoError(t, err)
	cred, err := createClient(ctx, db, s, clientParams{Name: "m", CashinFee: cashin, PayoutFee: payout})
	require.NoError(t, err)
	c, err := s.Authenticate(ctx, cred.ClientID, cred.ClientSecret)
	require.NoError(t, err)
	return s, c
}

// clientParams describes a test client: its name and fees.
type clientParams struct {
	Name      string
	CashinFee pix.FeeRule
	PayoutFee pix.FeeRule
}

// credentials are a test client's id and secrets.
type credentials struct {
	ClientID, ClientSecret, WebhookSecret string
}

// createClient stores an active client of gw's environment on db, with
// credentials of the form the back office gives (gateway may not import
// it, as the panel's tools are not the use cases'), stamped by gw's clock.
func createClient(ctx context.Context, db *store.DB, gw *gateway.Service, p clientParams) (credentials, error) {
	r := make([]byte, 12+32+32) // id, secret, webhook secret
	if _, err := io.ReadFull(gw.Rand, r); err != nil {
		return credentials{}, fmt.Errorf("create client: %w", err)
	}
	env := "test"
	if gw.Env == gateway.EnvProduction {
		env = "live"
	}
	cred := credentials{ClientID: "cli_" + env + "_" + hex.EncodeToString(r[:12]),
		ClientSecret:  "sk_" + env + "_" + base64.RawURLEncoding.EncodeToString(r[12:44]),
		WebhookSecret: "whsec_" + base64.StdEncoding.EncodeToString(r[44:])}
	c := pix.Client{ID: cred.ClientID, Name: p.Name, Environment: gw.Env, SecretHash: pix.HashSecret(cred.ClientSecret),
		WebhookSecret: cred.WebhookSecret, CashinFee: p.CashinFee, PayoutFee: p.PayoutFee, Status: pix.ClientActive,
		CreatedAt: gw.Now().UTC().Truncate(time.Millisecond)}
	if err := db.Write(ctx, func(tx *store.Tx) error { return tx.InsertClient(ctx, c) }); err != nil {
		return credentials{}, fmt.Errorf("create client: %w", err)
	}
	return cred, nil
}

// statementJSON is the JSON statement as a merchant reads it.
type statementJSON struct {
	StatusCode int    `json:"statusCode"`
	Message    string `json:"message"`
	Data       struct {
		Opening   int64 `json:"opening_balance_cents"`
		Closing   int64 `json:"closing_balance_cents"`
		Movements []struct {
			TransactionID string `json:"transaction_id"`
			Type          string `json:"type"`
			Amount        int64  `json:"amount_cents"`
			Balance       int64  `json:"balance_cents"`
		} `json:"movements"`
	} `json:"data"`
}
