package e2e

import (
	"encoding/json"
	"net/http"
	"os/exec"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/client"
	"github.com/pixgate/pixgate/internal/testkit"
)

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// pixgateCmd is the binary with the caller's environment minus PIXGATE_*:
// flags only.
func pixgateCmd(t *testing.T, args ...string) *exec.Cmd {
	return testkit.Command(buildPixgate(t), args...)
}

// clientServer is a `pixgate serve` process and the credentials of one
// client on it, for the tests of the Go client.
type clientServer struct {
	URL   string
	creds testkit.Creds
}

// startClientServe runs pixgate serve on a free port and creates a sandbox client
// (cash-in fee R$ 0.10, payout fee R$ 0.50) with pixgate clients create.
func startClientServe(t *testing.T, dbURL string, flags ...string) *clientServer {
	t.Helper()
	url, _ := testkit.ServeProcess(t, buildPixgate(t), append([]string{"--database-url", dbURL,
		"--sandbox-payout-delay", "100ms"}, flags...)...)
	out, err := pixgateCmd(t, "clients", "create", "--database-url", dbURL, "--name", "Client Test",
		"--cashin-fee-fixed", "0.10", "--payout-fee-fixed", "0.50").Output()
	require.NoError(t, err, "clients create: %s", out)
	s := &clientServer{URL: url}
	require.NoError(t, json.Unmarshal(out, &s.creds), "%s", out)
	require.NotEmpty(t, s.creds.ClientSecret)
	return s
}

func (s *clientServer) client(t *testing.T, opts ...client.Option) *client.Client {
	t.Helper()
	return s.clientAt(t, s.URL, opts...)
}

func (s *clientServer) clientAt(t *testing.T, baseURL string, opts ...client.Option) *client.Client {
	t.Helper()
	c, err := client.New(baseURL, s.creds.ClientID, s.creds.ClientSecret, opts...)
	require.NoError(t, err)
	return c
}

// pay pays a charge through the sandbox, with plain HTTP.
func (s *clientServer) pay(t *testing.T, paymentID string) {
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
