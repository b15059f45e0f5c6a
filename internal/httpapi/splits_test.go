package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/internal/backoffice"
	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/store"
)

// seller is a sub-account as the split tests use it: its account_id,
// client id and credentials.
type seller struct {
	account, client string
	cred            backoffice.Credentials
}

// sellers creates n sub-accounts of the bundle's client.
func (b *bundle) sellers(n int) []seller {
	b.t.Helper()
	out := make([]seller, n)
	for i := range out {
		d, cred := b.subAccount(fmt.Sprintf("Vendedor %d", i), "")
		out[i] = seller{account: d["account_id"].(string), client: d["client_id"].(string), cred: cred}
	}
	return out
}

// splitCharge creates a charge of amount split as splits and returns its
// payment_id.
func (b *bundle) splitCharge(ext, amount string, splits []any) string {
	b.t.Helper()
	body := validCharge(ext, amount)
	body["splits"] = splits
	r := b.do("POST", "/api/v1/gateway/request-qrcode", body)
	require.Equal(b.t, http.StatusCreated, r.status, string(r.body))
	return r.json["payment_id"].(string)
}

// pay pays charge id with the sandbox's pay action.
func (b *bundle) pay(id string) map[string]any {
	b.t.Helper()
	r := b.do("POST", "/api/v1/sandbox/charges/"+id+"/pay", nil)
	require.Equal(b.t, http.StatusOK, r.status, string(r.body))
	return r.json["data"].(map[string]any)
}

func percent(account, p string) map[string]any {
	return map[string]any{"account_id": account, "percent": json.Number(p)}
}

func fixed(account, a string) map[string]any {
	return map[string]any{"account_id": account, "amount": json.Number(a)}
}

// cents is an account's available balance in centavos.
func (b *bundle) cents(cred ...backoffice.Credentials) string {
	b.t.Helper()
	a, _ := b.balance(cred...)
	return a.String()
}

// TestSplitChargePaid: a charge split by percent among two sellers, paid
// by the sandbox, credits each seller its share of the net (received less
// the parent's 1 % fee, half up), the parent the rest, in the ledger and
// the balances; lookup and pix.cashin.paid list the amounts credited; each
// seller has a split transaction (history, statement) and gets
// pix.split.received at its postbackUrl; the parent's statement shows the
// shares leaving.
func TestSplitChargePaid(t *testing.T) {
	t.Parallel()
	databases(t, func(t *testing.T, open func(t *testing.T) *store.DB) {
		b := setup(t, open, options{fee: pix.FeeRule{PercentBP: 100}})
		s := b.sellers(2)
		id := b.splitCharge("split-1", "100.00", []any{percent(s[0].account, "30"), percent(s[1].account, "20.5")})
		data := b.pay(id)
		require.Equal(t, "PAID", data["status"])
		// net 99.00: 29.70 and 20.295 → 20.30; the parent keeps 49.00.
		require.Equal(t, "2970", b.cents(s[0].cred))
		require.Equal(t, "2030", b.cents(s[1].cred))
		require.Equal(t, "4900", b.cents())
		require.NoError(t, b.db.CheckLedger(context.Background()))

		want := []any{map[string]any{"account_id": s[0].account, "amount": json.Number("29.7")},
			map[string]any{"account_id": s[1].account, "amount": json.Number("20.3")}}
		require.Equal(t, want, b.lookup(id)["splits"])
		paid := b.eventPayloads(id, pix.EventCashinPaid)
		require.Len(t, paid, 1)
		require.Equal(t, []any{map[string]any{"account_id": s[0].account, "amount": 29.7},
			map[string]any{"account_id": s[1].account, "amount": 20.3}}, paid[0]["splits"])

		for i, sel := range s {
			h := b.historyOf(sel.cred)
			require.Len(t, h, 1)
			require.Equal(t, "split", h[0]["type"])
			require.Equal(t, "PAID", h[0]["status"])
			require.Equal(t, id, h[0]["source_payment_id"])
			require.Equal(t, b.me()["account_id"], h[0]["counterparty_account_id"])
			ev := b.eventPayloads(h[0]["payment_id"].(string), pix.EventSplitReceived)
			require.Len(t, ev, 1, "seller %d", i)
			require.Equal(t, id, ev[0]["source_payment_id"])
			require.Equal(t, h[0]["payment_id"], ev[0]["payment_id"])
			require.Equal(t, []float64{29.7, 20.3}[i], ev[0]["value"])
			evs, err := b.db.Events(context.Background(), h[0]["payment_id"].(string))
			require.NoError(t, err)
			require.Equal(t, "https://seller.example.com/webhooks/pix", evs[0].URL)
			require.Equal(t, sel.client, evs[0].ClientID)
			require.Equal(t, []string{[]string{"split 2970", "split 2030"}[i]}, b.movementTypes(sel.cred))
		}
		require.Equal(t, []string{"charge 10000", "charge_fee -100", "split -2970", "split -2030"}, b.movementTypes())
	})
}

// movementTypes lists the types of the caller's statement movements of
// the last day, each with its signed amount in centavos.
func (b *bundle) movementTypes(cred ...backoffice.Credentials) []string {
	b.t.Helper()
	now := b.gw.Now()
	var out []string
	for _, m := range b.statement(now.Add(-24*time.Hour), now.Add(time.Minute), cred...).Data.Movements {
		out = append(out, fmt.Sprintf("%s %d", m.Type, m.AmountCents))
	}
	return out
}

// TestSplitAmountsCapped: amount entries are paid in order, each capped
// at what is left of net; an entry capped to 0 is listed with 0 and gets
// no transaction or event.
func TestSplitAmountsCapped(t *testing.T) {
	t.Parallel()
	databases(t, func(t *testing.T, open func(t *testing.T) *store.DB) {
		b := setup(t, open, options{fee: pix.FeeRule{Fixed: 100}})
		s := b.sellers(3)
		id := b.splitCharge("cap-1", "10.00", []any{fixed(s[0].account, "6"), fixed(s[1].account, "3.99"), fixed(s[2].account, "0.01")})
		b.pay(id)
		// net 9.00: 6.00, then 3.00 of 3.99, then nothing.
		require.Equal(t, "600", b.cents(s[0].cred))
		require.Equal(t, "300", b.cents(s[1].cred))
		require.Equal(t, "0", b.cents(s[2].cred))
		require.Equal(t, "0", b.cents())
		splits := b.lookup(id)["splits"].([]any)
		require.Equal(t, json.Number("0"), splits[2].(map[string]any)["amount"])
		require.Empty(t, b.historyOf(s[2].cred))
		require.NoError(t, b.db.CheckLedger(context.Background()))
	})
}

// TestSplitValidation: bad splits are 400 naming the field and create
// nothing; an account that is not the caller's sub-account is refused as
// such; a replay with the same splits replays, another splits is the idempotency mismatch's 422.
func TestSplitValidation(t *testing.T) {
	t.Parallel()
	databases(t, func(t *testing.T, open func(t *testing.T) *store.DB) {
		b := setup(t, open, options{})
		s := b.sellers(2)
		a, c := s[0].account, s[1].account
		other, err := b.bo.CreateClient(context.Background(), backoffice.ClientParams{Name: "other"})
		require.NoError(t, err)
		foreign := b.me(other)["account_id"].(string)
		eleven := make([]any, 11)
		for i := range eleven {
			eleven[i] = percent(a, "1")
		}
		cases := []struct {
			name   string
			splits any
			field  string
		}{
			{"empty", []any{}, "splits"},
			{"eleven", eleven, "splits"},
			{"not a uuid", []any{percent("seller-1", "10")}, "splits[0].account_id"},
			{"unknown", []any{percent("5d7e1c2a-3b4f-4a6e-9c8d-7e6f5a4b3c2d", "10")}, "splits[0].account_id"},
			{"another client", []any{percent(foreign, "10")}, "splits[0].account_id"},
			{"the caller itself", []any{percent(b.me()["account_id"].(string), "10")}, "splits[0].account_id"},
			{"twice", []any{percent(a, "10"), percent(a, "10")}, "splits[1].account_id"},
			{"both", []any{map[string]any{"account_id": a, "percent": json.Number("1"), "amount": json.Number("1")}}, "splits[0].percent"},
			{"neither", []any{map[string]any{"account_id": a}}, "splits[0].percent"},
			{"mixed", []any{percent(a, "10"), fixed(c, "1")}, "splits"},
			{"percent over 100", []any{percent(a, "100.01")}, "splits[0].percent"},
			{"percent zero", []any{percent(a, "0")}, "splits[0].percent"},
			{"percent three decimals", []any{percent(a, "10.005")}, "splits[0].percent"},
			{"percent as text", []any{map[string]any{"account_id": a, "percent": "10"}}, "splits[0].percent"},
			{"percents over 100", []any{percent(a, "50.01"), percent(c, "50")}, "splits"},
			{"amounts over the charge", []any{fixed(a, "60"), fixed(c, "40.01")}, "splits"},
			{"amount zero", []any{fixed(a, "0")}, "splits[0].amount"},
		}
		before := b.count(b.cred.ClientID)
		for i, tc := range cases {
			body := validCharge(fmt.Sprint("bad-", i), "100.00")
			body["splits"] = tc.splits
			r := b.do("POST", "/api/v1/gateway/request-qrcode", body)
			require.Equal(t, http.StatusBadRequest, r.status, "%s: %s", tc.name, r.body)
			require.Equal(t, "Invalid request parameters", r.json["message"], tc.name)
			var fields []string
			for _, d := range r.json["details"].([]any) {
				fields = append(fields, d.(map[string]any)["field"].(string))
			}
			require.Contains(t, fields, tc.field, "%s: %s", tc.name, r.body)
		}
		require.Equal(t, before, b.count(b.cred.ClientID), "a refused split charge created nothing")
		// Exactly at the limits: 100 % in all, amounts summing to the charge.
		b.splitCharge("ok-1", "100.00", []any{percent(a, "99.99"), percent(c, "0.01")})
		b.splitCharge("ok-2", "100.00", []any{fixed(a, "99.99"), fixed(c, "0.01")})

		body := validCharge("replay-1", "100.00")
		body["splits"] = []any{percent(a, "10")}
		first := b.do("POST", "/api/v1/gateway/request-qrcode", body)
		require.Equal(t, http.StatusCreated, first.status, string(first.body))
		again := b.do("POST", "/api/v1/gateway/request-qrcode", body)
		require.Equal(t, "true", again.header.Get("Idempotent-Replayed"))
		require.Equal(t, first.json["payment_id"], again.json["payment_id"])
		body["splits"] = []any{percent(a, "11")}
		require.Equal(t, http.StatusUnprocessableEntity, b.do("POST", "/api/v1/gateway/request-qrcode", body).status)
		// A sub-account has no sub-accounts: it cannot split at all.
		sub := validCharge("sub-split", "10.00")
		sub["splits"] = []any{percent(c, "10")}
		require.Equal(t, http.StatusBadRequest, b.do("POST", "/api/v1/gateway/request-qrcode", sub, s[0].cred).status)
	})
}

// TestSplitDueCharge: a charge with a due date splits what was paid on
// the day, net of the fee.
func TestSplitDueCharge(t *testing.T) {
	t.Parallel()
	databases(t, func(t *testing.T, open func(t *testing.T) *store.DB) {
		b := setup(t, open, options{})
		s := b.sellers(1)
		body := validCharge("due-split", "100.00")
		body["due"] = map[string]any{"date": "2099-12-10"}
		body["splits"] = []any{percent(s[0].account, "25")}
		r := b.do("POST", "/api/v1/gateway/request-qrcode", body)
		require.Equal(t, http.StatusCreated, r.status, string(r.body))
		b.pay(r.json["payment_id"].(string))
		require.Equal(t, "2500", b.cents(s[0].cred))
		require.Equal(t, "7500", b.cents())
	})
}

// TestSplitRecurrence: a recurrence's splits are checked as a charge's and
// inherited by its cycle charges, whose payment shares net among them.
func TestSplitRecurrence(t *testing.T) {
	t.Parallel()
	databases(t, func(t *testing.T, open func(t *testing.T) *store.DB) {
		b := setup(t, open, options{start: spNoon(t, "2026-12-01")})
		s := b.sellers(1)
		const base = "/api/v1/gateway/recurrences"
		bad := validRecurrence("rec-bad")
		bad["splits"] = []any{fixed(s[0].account, "49.91")}
		r := b.do("POST", base, bad)
		require.Equal(t, http.StatusBadRequest, r.status, string(r.body))
		require.Equal(t, "splits", r.json["details"].([]any)[0].(map[string]any)["field"])
		bad["splits"] = []any{fixed("5d7e1c2a-3b4f-4a6e-9c8d-7e6f5a4b3c2d", "1")}
		r = b.do("POST", base, bad)
		require.Equal(t, http.StatusBadRequest, r.status, string(r.body))
		require.Equal(t, "splits[0].account_id", r.json["details"].([]any)[0].(map[string]any)["field"])

		rec := validRecurrence("rec-split")
		rec["splits"] = []any{fixed(s[0].account, "10.00")}
		r = b.do("POST", base, rec)
		require.Equal(t, http.StatusCreated, r.status, string(r.body))
		id := r.json["recurrence_id"].(string)
		require.Equal(t, http.StatusOK, b.do("POST", "/api/v1/sandbox/recurrences/"+id+"/approve", nil).status)
		r = b.do("POST", "/api/v1/sandbox/recurrences/"+id+"/next-cycle", nil)
		require.Equal(t, http.StatusOK, r.status, string(r.body))
		cycle := r.json["payment_id"].(string)
		b.pay(cycle)
		require.Equal(t, "1000", b.cents(s[0].cred))
		require.Equal(t, "3990", b.cents())
		require.Equal(t, []any{map[string]any{"account_id": s[0].account, "amount": json.Number("10")}}, b.lookup(cycle)["splits"])
	})
}
