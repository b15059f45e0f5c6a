package cli

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/internal/gateway"
	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/provider/sandbox"
	"github.com/pixgate/pixgate/internal/testkit"
)

// statementBody is the JSON statement, decoded strictly.
type statementBody struct {
	StatusCode int    `json:"statusCode"`
	Message    string `json:"message"`
	Data       struct {
		From      string `json:"from"`
		To        string `json:"to"`
		Opening   int64  `json:"opening_balance_cents"`
		Closing   int64  `json:"closing_balance_cents"`
		Movements []struct {
			At            string `json:"at"`
			TransactionID string `json:"transaction_id"`
			Type          string `json:"type"`
			Description   string `json:"description"`
			Amount        int64  `json:"amount_cents"`
			Balance       int64  `json:"balance_cents"`
		} `json:"movements"`
	} `json:"data"`
}

func decodeStatement(t *testing.T, out string) statementBody {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(out))
	dec.DisallowUnknownFields()
	var b statementBody
	require.NoError(t, dec.Decode(&b), "stdout: %q", out)
	_, err := dec.Token()
	require.ErrorIs(t, err, io.EOF, "stdout holds more than one JSON value: %q", out)
	return b
}

// TestStatement: pixgate statement prints, on both databases, the body the
// API answers with — JSON by default, CSV with --format csv — for a client
// with a paid sandbox charge and a payout; an unknown client, bad dates, a
// bad window or format exit 1 with the gateway's message and print nothing.
func TestStatement(t *testing.T) {
	t.Parallel()
	testkit.ForEachDatabaseURL(t, func(t *testing.T, db string) {
		ctx := t.Context()
		code, out, errOut := run(t, "clients", "create", "--database-url", db, "--name", "Loja Extrato",
			"--cashin-fee-fixed", "0.25", "--payout-fee-fixed", "0.10")
		require.Equal(t, 0, code, "stderr: %s", errOut)
		cred := testkit.DecodeOne(t, out, testkit.CredKeys...)

		// The movements are made through the gateway on the same database.
		gw, err := gateway.New(gateway.Config{DB: testkit.OpenURL(t, db), Env: gateway.EnvSandbox,
			ChargeTTL: time.Hour, Log: slog.New(slog.NewJSONHandler(io.Discard, nil)),
			Provider: sandbox.New(sandbox.Config{PixKey: "pix@pixgate.dev", MerchantName: "Loja", MerchantCity: "Recife", Delay: time.Hour})})
		require.NoError(t, err)
		c, err := gw.Authenticate(ctx, cred.ClientID, cred.ClientSecret)
		require.NoError(t, err)
		from := time.Now().Add(-time.Minute)
		ch, _, err := gw.CreateCharge(ctx, c, gateway.Keyed(&gateway.ChargeRequest{
			Amount: json.RawMessage("10.50"), ExternalID: "st-1", PayerQuestion: "Pedido", PostbackURL: "https://merchant.example.com/h",
			Payer: &gateway.Payer{Name: "Maria", Document: "52998224725", PhoneNumber: "11987654321", Email: "m@example.com",
				Address: &gateway.Address{Street: "Rua A", Number: "1", Neighborhood: "Centro", City: "Recife", State: "PE", ZipCode: "50000000"}},
			Products: []gateway.Product{{Name: "X", Quantity: "1", Price: json.RawMessage("10.50")}},
		}, "",

			[]byte(`{}`)))

		require.NoError(t, err)
		tr, err := gw.Charge(ctx, c, ch.PaymentID)
		require.NoError(t, err)
		_, err = gw.Sandbox().Pay(ctx, tr)
		require.NoError(t, err)
		ext := "st-p"
		po, _, err := gw.CreatePayout(ctx, c, gateway.Keyed(&gateway.PayoutRequest{Amount: json.RawMessage("1.00"), Description: "x",
			CallbackURL: "https://merchant.example.com/p", ExternalID: &ext,
			CreditParty: &pix.CreditParty{Name: "F", KeyType: "EMAIL", Key: "f@example.com"}}, "k1", []byte(`{}`)))

		require.NoError(t, err)
		to := time.Now().Add(time.Minute)
		fromS, toS := from.Format(time.RFC3339Nano), to.Format(time.RFC3339Nano)
		args := []string{"statement", "--database-url", db, "--client", cred.ClientID, "--from", fromS, "--to", toS}

		// JSON, the default: the API's body, byte for byte.
		code, out, errOut = run(t, args...)
		require.Equal(t, 0, code, "stderr: %s", errOut)
		st, err := gw.Statement(ctx, c, gateway.StatementQuery{From: fromS, To: toS})
		require.NoError(t, err)
		var want bytes.Buffer
		require.NoError(t, st.Write(ctx, &want))
		require.Equal(t, want.String(), out)
		code, explicit, errOut := run(t, append(args, "--format", "json")...)
		require.Equal(t, 0, code, "stderr: %s", errOut)
		require.Equal(t, out, explicit)

		body := decodeStatement(t, out)
		require.Equal(t, 200, body.StatusCode)
		require.Equal(t, gateway.MsgStatementOK, body.Message)
		require.Equal(t, pix.FormatTime(from), body.Data.From)
		require.Equal(t, pix.FormatTime(to), body.Data.To)
		require.Equal(t, int64(0), body.Data.Opening)
		require.Equal(t, int64(1050-25-100-10), body.Data.Closing)
		type line struct {
			id, typ         string
			amount, balance int64
		}
		var got []line
		sum := body.Data.Opening
		for _, m := range body.Data.Movements {
			sum += m.Amount
			require.Equal(t, sum, m.Balance, "running balance at %+v", m)
			at, err := time.Parse(time.RFC3339Nano, m.At)
			require.NoError(t, err)
			require.False(t, at.Before(from.Truncate(time.Millisecond)) || !at.Before(to), "at %s outside the window", m.At)
			require.NotEmpty(t, m.Description)
			got = append(got, line{m.TransactionID, m.Type, m.Amount, m.Balance})
		}
		require.Equal(t, body.Data.Closing, sum, "opening + Σ amounts = closing")
		require.Equal(t, []line{
			{ch.PaymentID, "charge", 1050, 1050}, {ch.PaymentID, "charge_fee", -25, 1025},
			{po.TransactionID, "payout", -100, 925}, {po.TransactionID, "payout_fee", -10, 915},
		}, got)

		// CSV: a header row, then the same movements.
		code, out, errOut = run(t, append(args, "--format", "csv")...)
		require.Equal(t, 0, code, "stderr: %s", errOut)
		require.True(t, strings.HasSuffix(out, "\r\n"), "RFC 4180 line ends: %q", out)
		recs, err := csv.NewReader(strings.NewReader(out)).ReadAll()
		require.NoError(t, err, out)
		require.Equal(t, gateway.CSVHeader, recs[0])
		require.Len(t, recs, 1+len(body.Data.Movements))
		for i, m := range body.Data.Movements {
			require.Equal(t, []string{m.At, m.TransactionID, m.Type, m.Description,
				strconv.FormatInt(m.Amount, 10), strconv.FormatInt(m.Balance, 10)}, recs[i+1])
		}

		// The next window opens where this one closed and has no movement.
		code, out, errOut = run(t, "statement", "--database-url", db, "--client", cred.ClientID,
			"--from", toS, "--to", to.Add(time.Hour).Format(time.RFC3339))
		require.Equal(t, 0, code, "stderr: %s", errOut)
		next := decodeStatement(t, out)
		require.Equal(t, body.Data.Closing, next.Data.Opening)
		require.Equal(t, body.Data.Closing, next.Data.Closing)
		require.NotNil(t, next.Data.Movements)
		require.Empty(t, next.Data.Movements)
		require.Contains(t, out, `"movements":[]`)

		// Errors: exit 1, the gateway's message on stderr, nothing on stdout.
		for _, tc := range []struct {
			name           string
			client         string
			from, to, frmt string
			stderr         string
		}{
			{"unknown client", "cli_test_000000000000000000000000", fromS, toS, "json",
				"pixgate: client \"cli_test_000000000000000000000000\" not found\n"},
			{"bad from", cred.ClientID, "2026-11-01", toS, "json",
				"pixgate: Invalid request parameters: 'from' must be an RFC 3339 date-time such as 2026-01-02T15:04:05Z.\n"},
			{"to before from", cred.ClientID, toS, fromS, "csv",
				"pixgate: Invalid request parameters: 'to' must be after 'from'.\n"},
			{"window too long", cred.ClientID, "2025-01-01T00:00:00Z", "2026-01-02T00:00:01Z", "json",
				"pixgate: Invalid request parameters: 'to' must be at most 366 days after 'from'.\n"},
			{"format", cred.ClientID, fromS, toS, "xml",
				"pixgate: Invalid request parameters: 'format' must be one of json, csv (default json).\n"},
		} {
			code, out, errOut := run(t, "statement", "--database-url", db, "--client", tc.client,
				"--from", tc.from, "--to", tc.to, "--format", tc.frmt)
			require.Equal(t, 1, code, "%s: stderr: %s", tc.name, errOut)
			require.Empty(t, out, tc.name)
			require.Equal(t, tc.stderr, errOut, tc.name)
		}
	})
}

// TestStatementUsage: the window and the client are required flags (exit 2).
func TestStatementUsage(t *testing.T) {
	t.Parallel()
	db := testkit.SQLiteURL(t)
	for _, args := range [][]string{
		{"--from", "2026-01-01T00:00:00Z", "--to", "2026-02-01T00:00:00Z"},
		{"--client", "cli_test_x", "--to", "2026-02-01T00:00:00Z"},
		{"--client", "cli_test_x", "--from", "2026-01-01T00:00:00Z"},
	} {
		code, out, errOut := run(t, append([]string{"statement", "--database-url", db}, args...)...)
		require.Equal(t, 2, code, "%v: stderr: %s", args, errOut)
		require.Empty(t, out)
		require.True(t, strings.HasPrefix(errOut, "pixgate: "), errOut)
	}
	code, out, _ := run(t, "statement", "--help")
	require.Equal(t, 0, code)
	require.Contains(t, out, "--format")
}
