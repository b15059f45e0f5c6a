package httpapi_test

import (
	"context"
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/pspsim"
	"github.com/pixgate/pixgate/internal/store"
)

// bacenE2E is BACEN's form of an end-to-end id: E, the ISPB, the UTC
// minute (yyyyMMddHHmm) and 11 alphanumerics.
var bacenE2E = regexp.MustCompile(`^E[0-9]{8}([0-9]{12})[A-Za-z0-9]{11}$`)

// reconciliation is what lookup, history and pix.cashin.paid say of the
// Pix that paid a charge.
type reconciliation struct {
	EndToEndID    *string `json:"end_to_end_id"`
	TxID          *string `json:"txid"`
	PayerName     *string `json:"payer_name"`
	PayerDocument *string `json:"payer_document"`
}

// reconciled returns the reconciliation fields of a JSON object, requiring
// that all four are present (null or not).
func reconciled(t *testing.T, obj map[string]any) reconciliation {
	t.Helper()
	for _, k := range []string{"end_to_end_id", "txid", "payer_name", "payer_document"} {
		require.Contains(t, obj, k)
	}
	raw, err := json.Marshal(obj)
	require.NoError(t, err)
	var r reconciliation
	require.NoError(t, json.Unmarshal(raw, &r))
	return r
}

func (b *bundle) historyItem(id string) map[string]any {
	b.t.Helper()
	r := b.do("GET", "/api/v1/wallet/transactions?limit=100", nil)
	require.Equal(b.t, http.StatusOK, r.status, string(r.body))
	for _, it := range r.json["data"].([]any) {
		if m := it.(map[string]any); m["payment_id"] == id {
			return m
		}
	}
	b.t.Fatalf("%s is not in the history", id)
	return nil
}

// paidEvent returns the body of the pix.cashin.paid event of charge id.
func (b *bundle) paidEvent(id string) map[string]any {
	b.t.Helper()
	evs, err := b.db.Events(context.Background(), id)
	require.NoError(b.t, err)
	for _, e := range evs {
		if e.Type == pix.EventCashinPaid {
			var body map[string]any
			require.NoError(b.t, json.Unmarshal([]byte(e.Payload), &body))
			return body
		}
	}
	b.t.Fatalf("no pix.cashin.paid for %s", id)
	return nil
}

func str(s string) *string { return &s }

// requireReconciled checks that lookup, history and pix.cashin.paid all
// show want for charge id.
func requireReconciled(t *testing.T, b *bundle, id string, want reconciliation) {
	t.Helper()
	require.Equal(t, want, reconciled(t, b.lookup(id)), "lookup")
	require.Equal(t, want, reconciled(t, b.historyItem(id)), "history")
	require.Equal(t, want, reconciled(t, b.paidEvent(id)), "pix.cashin.paid")
}

// TestReconciliationFields: in the sandbox a charge's lookup and history
// carry end_to_end_id, txid, payer_name and payer_document, null until
// it is paid; once paid, the end-to-end id is in BACEN's form (its minute
// the payment's), the txid the BR Code's, and the payer the charge's with
// the document masked; pix.cashin.paid carries the same. A payout carries
// them as null. The document never reaches the log. On both databases.
func TestReconciliationFields(t *testing.T) {
	t.Parallel()
	databases(t, func(t *testing.T, open func(t *testing.T) *store.DB) {
		b := setup(t, open, options{})
		created := b.createCharge("rec-1", "25.90")
		id := created.json["payment_id"].(string)
		require.Equal(t, reconciliation{}, reconciled(t, b.lookup(id)), "null until paid")
		require.Equal(t, reconciliation{}, reconciled(t, b.historyItem(id)))

		r := b.do("POST", "/api/v1/sandbox/charges/"+id+"/pay", nil)
		require.Equal(t, http.StatusOK, r.status, string(r.body))
		got := reconciled(t, b.lookup(id))
		require.NotNil(t, got.EndToEndID)
		m := bacenE2E.FindStringSubmatch(*got.EndToEndID)
		require.NotNil(t, m, "BACEN's form: %s", *got.EndToEndID)
		paidAt, err := time.Parse(pix.TimeFormat, b.lookup(id)["confirmed_date"].(string))
		require.NoError(t, err)
		require.Equal(t, paidAt.UTC().Format("200601021504"), m[1], "the minute of the payment, UTC")
		qr := created.json["qrcode"].(string)
		require.NotNil(t, got.TxID)
		require.Len(t, *got.TxID, 25)
		require.Contains(t, qr, "0525"+*got.TxID, "the txid of the BR Code's field 62/05")
		want := reconciliation{EndToEndID: got.EndToEndID, TxID: got.TxID, PayerName: str("João da Silva"), PayerDocument: str("***.982.247-**")}
		requireReconciled(t, b, id, want)
		require.Equal(t, reconciled(t, r.json["data"].(map[string]any)), want, "the pay action's answer")

		// Paying again answers the same payment.
		again := b.do("POST", "/api/v1/sandbox/charges/"+id+"/pay", nil)
		require.Equal(t, http.StatusOK, again.status, string(again.body))
		require.Equal(t, want, reconciled(t, again.json["data"].(map[string]any)))

		// A CNPJ payer.
		cnpj := validCharge("rec-2", "10")
		cnpj["payer"].(map[string]any)["name"] = "Empresa Exemplo Ltda"
		cnpj["payer"].(map[string]any)["document"] = "11222333000181"
		r = b.do("POST", "/api/v1/gateway/request-qrcode", cnpj)
		require.Equal(t, http.StatusCreated, r.status, string(r.body))
		id2 := r.json["payment_id"].(string)
		require.Equal(t, http.StatusOK, b.do("POST", "/api/v1/sandbox/charges/"+id2+"/pay", nil).status)
		got = reconciled(t, b.lookup(id2))
		require.Equal(t, "Empresa Exemplo Ltda", *got.PayerName)
		require.Equal(t, "**.222.333/0001-**", *got.PayerDocument)
		require.NotEqual(t, *want.EndToEndID, *got.EndToEndID)

		// A payout: none of them.
		p := b.do("POST", "/api/v1/gateway/pix-payment", payout("5", "EMAIL", "dest@example.com"))
		require.Equal(t, http.StatusOK, p.status, string(p.body))
		require.Equal(t, reconciliation{}, reconciled(t, b.lookup(p.json["transaction_id"].(string))))

		logs := b.logs.String()
		require.NotContains(t, logs, "52998224725")
		require.NotContains(t, logs, "11222333000181")
	})
}

// TestReconciliationFieldsFromThePSP: with a PSP (the simulator, which
// reports the pagador of each Pix), lookup, history and pix.cashin.paid
// carry the Pix's end-to-end id and txid as the PSP reported them, and
// whoever actually paid: the cob's debtor, or someone else, with the
// document masked; the document never reaches the log. On both databases.
func TestReconciliationFieldsFromThePSP(t *testing.T) {
	t.Parallel()
	databases(t, func(t *testing.T, open func(t *testing.T) *store.DB) {
		b, sim := setupPSP(t, open)
		ctx := context.Background()
		c, err := b.gw.Authenticate(ctx, b.cred.ClientID, b.cred.ClientSecret)
		require.NoError(t, err)
		txidOf := func(id string) string {
			ch, err := b.gw.Charge(ctx, c, id)
			require.NoError(t, err)
			return ch.TxID
		}

		id := b.createCharge("psp-rec-1", "25.90").json["payment_id"].(string)
		require.Equal(t, reconciliation{}, reconciled(t, b.lookup(id)))
		txid := txidOf(id)
		e2e, err := sim.Pay(ctx, txid)
		require.NoError(t, err)
		require.Equal(t, "PAID", b.lookup(id)["status"])
		requireReconciled(t, b, id, reconciliation{EndToEndID: &e2e, TxID: &txid,
			PayerName: str("João da Silva"), PayerDocument: str("***.982.247-**")})

		// Someone other than the debtor pays, with a CNPJ.
		id = b.createCharge("psp-rec-2", "10").json["payment_id"].(string)
		txid = txidOf(id)
		e2e, err = sim.PayWith(ctx, txid, pspsim.PayOptions{PayerName: "Empresa Pagadora Ltda", PayerDocument: "12345678000195"})
		require.NoError(t, err)
		require.Equal(t, "PAID", b.lookup(id)["status"])
		requireReconciled(t, b, id, reconciliation{EndToEndID: &e2e, TxID: &txid,
			PayerName: str("Empresa Pagadora Ltda"), PayerDocument: str("**.345.678/0001-**")})

		logs := b.logs.String()
		require.NotContains(t, logs, "52998224725")
		require.NotContains(t, logs, "12345678000195")
		require.False(t, strings.Contains(logs, "Empresa Pagadora"), "nor the payer's name")
	})
}
