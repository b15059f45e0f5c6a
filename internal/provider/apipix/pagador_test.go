package apipix

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestPaymentPayer: the payer of a Pix is read from pagador (API Pix 2.0's
// field, which PSPs still send) or Efí's gnExtras.pagador, CPF or CNPJ;
// a Pix without either (BACEN's 2.x schema) has no payer.
func TestPaymentPayer(t *testing.T) {
	t.Parallel()
	const head = `{"endToEndId":"E12345678202601011200ABCDEFGHIJK","txid":"t1","valor":"1.00","horario":"2026-01-01T12:00:00Z"`
	for _, tc := range []struct {
		label, body, name, doc string
	}{
		{"none", head + `}`, "", ""},
		{"pagador with a CPF", head + `,"pagador":{"cpf":"12345678909","nome":"Fulano"}}`, "Fulano", "12345678909"},
		{"pagador with a CNPJ", head + `,"pagador":{"cnpj":"12345678000195","nome":"Empresa"}}`, "Empresa", "12345678000195"},
		{"Efí's gnExtras", head + `,"gnExtras":{"pagador":{"cpf":"52998224725","nome":"Maria"}}}`, "Maria", "52998224725"},
		{"pagador first", head + `,"pagador":{"cpf":"12345678909","nome":"A"},"gnExtras":{"pagador":{"cpf":"52998224725","nome":"B"}}}`, "A", "12345678909"},
	} {
		var w pixWire
		require.NoError(t, json.Unmarshal([]byte(tc.body), &w), tc.label)
		p, err := toPayment(w)
		require.NoError(t, err, tc.label)
		require.Equal(t, tc.name, p.PayerName, tc.label)
		require.Equal(t, tc.doc, p.PayerDocument, tc.label)
	}
}
