package httpapi_test

import (
	"bufio"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/internal/backoffice"
	"github.com/pixgate/pixgate/internal/store"
)

// TestLogsHoldNoSecretsOrPersonalData plants a client secret, a CPF, a CNPJ,
// an e-mail and PIX keys in requests — valid and invalid ones, through
// every endpoint — and proves none of them appears in the logs, while every
// request line carries a request_id.
func TestLogsHoldNoSecretsOrPersonalData(t *testing.T) {
	t.Parallel()
	databases(t, func(t *testing.T, open func(t *testing.T) *store.DB) {
		b := setup(t, open, options{})
		const cpf, cnpj, email, phoneKey, evp = "52998224725", "11222333000181", "maria.secreta@example.com", "+5511987654321", "123e4567-e89b-42d3-a456-426614174000"
		charge := validCharge("log-1", "10")
		charge["payer"].(map[string]any)["document"] = cpf
		charge["payer"].(map[string]any)["email"] = email
		b.createCharge("log-0", "10")
		require.Equal(t, http.StatusCreated, b.do("POST", "/api/v1/gateway/request-qrcode", charge).status)
		bad := validCharge("log-2", "10")
		bad["payer"].(map[string]any)["document"] = cnpj + "9" // invalid: echoed nowhere
		require.Equal(t, http.StatusBadRequest, b.do("POST", "/api/v1/gateway/request-qrcode", bad).status)
		b.fund("100")
		created := map[string]bool{} // payouts' transaction ids
		for _, k := range []struct{ typ, key string }{{"CPF", cpf}, {"CNPJ", cnpj}, {"EMAIL", email}, {"PHONE", phoneKey}, {"EVP", evp}, {"CPF", cpf + "0"}} {
			if r := b.do("POST", "/api/v1/gateway/pix-payment", payout("1", k.typ, k.key)); r.status == http.StatusOK {
				created[r.json["transaction_id"].(string)] = true
			}
		}
		require.Len(t, created, 5)
		leaked := backoffice.Credentials{ClientID: b.cred.ClientID, ClientSecret: "sk_test_PLANTEDSECRETvalue1234567890"}
		require.Equal(t, http.StatusUnauthorized, b.do("GET", "/api/v1/wallet/balance", nil, leaked).status)
		b.do("POST", "/api/v1/wallet/transaction", map[string]any{"external_id": "log-1"})
		b.settle()

		logs := b.logs.String()
		require.NotEmpty(t, logs)
		for _, secret := range []string{b.cred.ClientSecret, leaked.ClientSecret, b.cred.WebhookSecret, cpf, cnpj, email, phoneKey, evp, "52998224"} {
			require.NotContains(t, logs, secret)
		}
		requests := 0
		logged := map[string]bool{}
		sc := bufio.NewScanner(strings.NewReader(logs))
		for sc.Scan() {
			var line map[string]any
			require.NoError(t, json.Unmarshal(sc.Bytes(), &line), "every log line is JSON")
			if line["msg"] == "request" {
				requests++
				require.Regexp(t, `^[0-9a-f]{24}$`, line["request_id"], "%v", line)
				// One line per request says what it did: the client it
				// authenticated, the transaction it created.
				if line["route"] == "POST /api/v1/gateway/pix-payment" && line["status"] == float64(http.StatusOK) {
					require.Equal(t, b.cred.ClientID, line["client_id"], "%v", line)
					logged[line["transaction_id"].(string)] = true
				}
			}
		}
		require.Greater(t, requests, 10)
		require.Equal(t, created, logged, "every payout's request line names it")
	})
}
