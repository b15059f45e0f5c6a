package client_test

import (
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/client"
	"github.com/pixgate/pixgate/internal/testkit"
)

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

var pixgate testkit.Binary

func TestMain(m *testing.M) {
	code := m.Run()
	pixgate.Remove()
	os.Exit(code)
}

// buildPixgate builds cmd/pixgate once per test binary and returns its path.
func buildPixgate(t *testing.T) string { return pixgate.Path(t) }

// forEachDB runs f against a SQLite file and a fresh PostgreSQL database.
func forEachDB(t *testing.T, f func(t *testing.T, dbURL string)) {
	t.Helper()
	t.Run("sqlite", func(t *testing.T) {
		t.Parallel()
		f(t, filepath.Join(t.TempDir(), "pixgate.db"))
	})
	t.Run("postgres", func(t *testing.T) {
		t.Parallel()
		f(t, testkit.PostgresURL(t))
	})
}

// pixgateCmd is the binary with the caller's environment minus PIXGATE_*:
// flags only.
func pixgateCmd(t *testing.T, args ...string) *exec.Cmd {
	return testkit.Command(buildPixgate(t), args...)
}

// creds are what pixgate clients create prints.
type creds struct {
	ClientID      string `json:"client_id"`
	ClientSecret  string `json:"client_secret"`
	WebhookSecret string `json:"webhook_secret"`
}

type server struct {
	URL   string
	creds creds
}

// startServe runs pixgate serve on a free port and creates a sandbox client
// (cash-in fee R$ 0.10, payout fee R$ 0.50) with pixgate clients create.
func startServe(t *testing.T, dbURL string, flags ...string) *server {
	t.Helper()
	url, _ := testkit.ServeProcess(t, buildPixgate(t), append([]string{"--database-url", dbURL,
		"--sandbox-payout-delay", "100ms"}, flags...)...)
	out, err := pixgateCmd(t, "clients", "create", "--database-url", dbURL, "--name", "Client Test",
		"--cashin-fee-fixed", "0.10", "--payout-fee-fixed", "0.50").Output()
	require.NoError(t, err, "clients create: %s", out)
	s := &server{URL: url}
	require.NoError(t, json.Unmarshal(out, &s.creds), "%s", out)
	require.NotEmpty(t, s.creds.ClientSecret)
	return s
}

func (s *server) client(t *testing.T, opts ...client.Option) *client.Client {
	t.Helper()
	return s.clientAt(t, s.URL, opts...)
}

func (s *server) clientAt(t *testing.T, baseURL string, opts ...client.Option) *client.Client {
	t.Helper()
	c, err := client.New(baseURL, s.creds.ClientID, s.creds.ClientSecret, opts...)
	require.NoError(t, err)
	return c
}

// pay pays a charge through the sandbox, with plain HTTP.
func (s *server) pay(t *testing.T, paymentID string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, s.URL+"/api/v1/sandbox/charges/"+paymentID+"/pay", nil)
	require.NoError(t, err)
	req.Header.Set("stpi", s.creds.ClientID)
	req.Header.Set("stps", s.creds.ClientSecret)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
}

func chargeRequest(ext string, amount client.Amount, postback string) client.ChargeRequest {
	return client.ChargeRequest{
		Amount: amount, ExternalID: ext, PayerQuestion: "Pedido " + ext, PostbackURL: postback,
		Payer: client.Payer{Name: "Maria da Silva", Document: "52998224725", PhoneNumber: "11987654321",
			Email: "maria@example.com", Address: client.Address{Street: "Avenida Paulista", Number: "1000",
				Neighborhood: "Bela Vista", City: "São Paulo", State: "SP", ZipCode: "01310100"}},
		Products: []client.Product{{Name: "Camiseta", Quantity: "1", Price: amount}},
	}
}
