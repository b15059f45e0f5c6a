package gateway_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/internal/backoffice"
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
		ExternalID: &ext, CreditParty: &gateway.CreditParty{Name: "F", KeyType: "EMAIL", Key: "f@example.com"}}
}

// sandboxClient builds a sandbox gateway on db (payouts settle after
// payoutDelay) and one authenticated client with the given fees.
func sandboxClient(t *testing.T, db *store.DB, payoutDelay time.Duration, cashin, payout pix.FeeRule) (*gateway.Service, pix.Client) {
	t.Helper()
	ctx := context.Background()
	s, err := gateway.New(gateway.Config{DB: db, Env: "sandbox", ChargeTTL: time.Hour, Log: slog.New(slog.NewJSONHandler(io.Discard, nil)),
		Provider: sandbox.New(sandbox.Config{PixKey: "pix@pixgate.dev", MerchantName: "Loja", MerchantCity: "Recife", Delay: payoutDelay})})
	require.NoError(t, err)
	cred, err := backOffice(t, db, s).CreateClient(ctx, backoffice.ClientParams{Name: "m", CashinFee: cashin, PayoutFee: payout})
	require.NoError(t, err)
	c, err := s.Authenticate(ctx, cred.ClientID, cred.ClientSecret)
	require.NoError(t, err)
	return s, c
}

// backOffice is the back office beside gw on db, as serve builds it: in
// gw's environment, on its clock and random source, with its provider.
// Tests create their clients through it, as operators do.
func backOffice(t testing.TB, db *store.DB, gw *gateway.Service) *backoffice.Service {
	t.Helper()
	bo, err := backoffice.New(backoffice.Config{DB: db, Env: gw.Env, Now: func() time.Time { return gw.Now() }, Rand: gw.Rand, Provider: gw.Provider})
	require.NoError(t, err)
	return bo
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
