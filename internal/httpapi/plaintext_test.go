package httpapi_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/store"
)

// TestTextRefusesControlCharacters: C0 and C1 control characters and the
// bidirectional overrides and isolates in any text field a payer's bank app
// may show (names, address, question, products, descriptions, reasons,
// contract) are a 400 naming the field, on both databases, and create
// nothing; accents, right-to-left letters and marks stay accepted.
func TestTextRefusesControlCharacters(t *testing.T) {
	t.Parallel()
	databases(t, func(t *testing.T, open func(t *testing.T) *store.DB) {
		b := setup(t, open, options{start: spNoon(t, "2026-12-01")})
		b.fund("100")
		paid := b.paidCharge("plain-paid", "50")
		before := b.count(b.cred.ClientID)
		availBefore, pendingBefore := b.balance()

		charge := func(set func(c map[string]any)) map[string]any {
			c := validCharge("plain-charge", "10")
			set(c)
			return c
		}
		payer := func(c map[string]any) map[string]any { return c["payer"].(map[string]any) }
		address := func(c map[string]any) map[string]any { return payer(c)["address"].(map[string]any) }
		withPayout := func(set func(p map[string]any)) map[string]any {
			p := payout("10", "EMAIL", "dest@example.com")
			set(p)
			return p
		}
		recurrence := func(set func(r map[string]any)) map[string]any {
			r := validRecurrence("plain-rec")
			set(r)
			return r
		}
		for _, tc := range []struct {
			label, path string
			body        map[string]any
			field       string
		}{
			{"BEL in payer.name", "/api/v1/gateway/request-qrcode",
				charge(func(c map[string]any) { payer(c)["name"] = "João\a" }), "payer.name"},
			{"CR LF in street", "/api/v1/gateway/request-qrcode",
				charge(func(c map[string]any) { address(c)["street"] = "Rua A\r\nRua B" }), "payer.address.street"},
			{"TAB in number", "/api/v1/gateway/request-qrcode",
				charge(func(c map[string]any) { address(c)["number"] = "1\t2" }), "payer.address.number"},
			{"NEL in neighborhood", "/api/v1/gateway/request-qrcode",
				charge(func(c map[string]any) { address(c)["neighborhood"] = "Centro\u0085" }), "payer.address.neighborhood"},
			{"isolate in city", "/api/v1/gateway/request-qrcode",
				charge(func(c map[string]any) { address(c)["city"] = "\u2066São Paulo\u2069" }), "payer.address.city"},
			{"RLO in payerQuestion", "/api/v1/gateway/request-qrcode",
				charge(func(c map[string]any) { c["payerQuestion"] = "Pedido \u202e321" }), "payerQuestion"},
			{"ESC in a product name", "/api/v1/gateway/request-qrcode",
				charge(func(c map[string]any) {
					c["products"] = []any{map[string]any{"name": "\x1b[2JCamiseta", "quantity": "1", "price": 10}}
				}), "products[0].name"},
			{"DEL in payout description", "/api/v1/gateway/pix-payment",
				withPayout(func(p map[string]any) { p["description"] = "Pagamento\x7f" }), "description"},
			{"RLO in creditParty.name", "/api/v1/gateway/pix-payment",
				withPayout(func(p map[string]any) {
					p["creditParty"] = map[string]any{"name": "Fornecedor \u202eadtL", "keyType": "EMAIL", "key": "dest@example.com"}
				}), "creditParty.name"},
			{"LF in refund reason", "/api/v1/gateway/refund",
				map[string]any{"payment_id": paid, "reason": "devolução\nsegunda linha"}, "reason"},
			{"LRE in recurrence contract", "/api/v1/gateway/recurrences",
				recurrence(func(r map[string]any) { r["contract"] = "\u202aCTR-1" }), "contract"},
			{"C1 in recurrence description", "/api/v1/gateway/recurrences",
				recurrence(func(r map[string]any) { r["description"] = "Plano\u009b31m" }), "description"},
			{"PDI in recurrence payer.name", "/api/v1/gateway/recurrences",
				recurrence(func(r map[string]any) {
					r["payer"] = map[string]any{"name": "Maria\u2069", "document": "52998224725"}
				}), "payer.name"},
		} {
			r := b.do("POST", tc.path, tc.body)
			requireFieldError(t, r, tc.field, tc.label)
			issue := r.json["details"].([]any)[0].(map[string]any)["issue"]
			require.Equal(t, pix.IssuePlainText, issue, tc.label)
		}
		require.Equal(t, before, b.count(b.cred.ClientID), "no refused request created a transaction")
		avail, pending := b.balance()
		require.Equal(t, availBefore, avail)
		require.Equal(t, pendingBefore, pending)
		recs, _, err := b.db.RecurrenceHistory(context.Background(), store.RecurrenceFilter{ClientID: b.cred.ClientID, Limit: 10})
		require.NoError(t, err)
		require.Empty(t, recs, "no refused request created a recurrence")

		// Text that only looks unusual is accepted: accents, symbols,
		// right-to-left letters and the right-to-left mark (not an override).
		ok := validCharge("plain-ok", "10")
		payer(ok)["name"] = "Zoë Ñandú \u05e9\u05dc\u05d5\u05dd\u200f"
		ok["payerQuestion"] = "Pedido nº 12 — açaí ✓"
		r := b.do("POST", "/api/v1/gateway/request-qrcode", ok)
		require.Equal(t, http.StatusCreated, r.status, string(r.body))
		r = b.do("POST", "/api/v1/gateway/recurrences", recurrence(func(r map[string]any) { r["description"] = "Plano «anual» ★" }))
		require.Equal(t, http.StatusCreated, r.status, string(r.body))
	})
}
