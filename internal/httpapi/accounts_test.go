package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/internal/backoffice"
	"github.com/pixgate/pixgate/internal/ledger"
	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/store"
)

// accountBody is a valid sub-account request; ext "" sends no external_id.
func accountBody(name, ext string) map[string]any {
	body := map[string]any{"name": name, "document": "11222333000181", "postbackUrl": "https://seller.example.com/webhooks/pix"}
	if ext != "" {
		body["external_id"] = ext
	}
	return body
}

// subAccount creates a sub-account of the caller (the bundle's client
// unless cred is given) and returns its data and credentials.
func (b *bundle) subAccount(name, ext string, cred ...backoffice.Credentials) (map[string]any, backoffice.Credentials) {
	b.t.Helper()
	r := b.do("POST", "/api/v1/accounts", accountBody(name, ext), cred...)
	require.Equal(b.t, http.StatusCreated, r.status, string(r.body))
	d := r.json["data"].(map[string]any)
	return d, backoffice.Credentials{ClientID: d["client_id"].(string), ClientSecret: d["client_secret"].(string)}
}

// me is the caller's GET /api/v1/accounts/me data.
func (b *bundle) me(cred ...backoffice.Credentials) map[string]any {
	b.t.Helper()
	r := b.do("GET", "/api/v1/accounts/me", nil, cred...)
	require.Equal(b.t, http.StatusOK, r.status, string(r.body))
	return r.json["data"].(map[string]any)
}

// transfer POSTs a transfer of amount to the account, as cred (the
// bundle's client when none), with the extra body fields.
func (b *bundle) transfer(to, amount string, extra map[string]any, cred ...backoffice.Credentials) response {
	b.t.Helper()
	body := map[string]any{"to_account_id": to, "amount": json.Number(amount)}
	for k, v := range extra {
		body[k] = v
	}
	return b.do("POST", "/api/v1/wallet/transfers", body, cred...)
}

// historyOf returns the caller's history data.
func (b *bundle) historyOf(cred ...backoffice.Credentials) []map[string]any {
	b.t.Helper()
	r := b.do("GET", "/api/v1/wallet/transactions", nil, cred...)
	require.Equal(b.t, http.StatusOK, r.status, string(r.body))
	var out []map[string]any
	for _, v := range r.json["data"].([]any) {
		out = append(out, v.(map[string]any))
	}
	return out
}

// TestAccountCreation: a parent creates a sub-account with its secrets
// once; the same external_id and body replays it with the secrets null,
// another body is the idempotency mismatch's 422 (docs/api.md#idempotency); bad bodies are 400 naming the field; a
// sub-account cannot create sub-accounts; the parent's fees are copied.
func TestAccountCreation(t *testing.T) {
	t.Parallel()
	databases(t, func(t *testing.T, open func(t *testing.T) *store.DB) {
		b := setup(t, open, options{fee: pix.FeeRule{PercentBP: 100, Fixed: 5}})
		parent := b.me()
		require.Regexp(t, uuidV4, parent["account_id"])

		r := b.do("POST", "/api/v1/accounts", accountBody("Loja do João", "seller-1"))
		require.Equal(t, http.StatusCreated, r.status, string(r.body))
		require.Empty(t, r.header.Get("Idempotent-Replayed"))
		d := r.json["data"].(map[string]any)
		require.Regexp(t, uuidV4, d["account_id"])
		require.NotEqual(t, parent["account_id"], d["account_id"])
		require.Equal(t, parent["account_id"], d["parent_id"])
		require.Equal(t, "Loja do João", d["name"])
		require.Equal(t, "11222333000181", d["document"])
		require.Equal(t, "seller-1", d["external_id"])
		require.True(t, strings.HasPrefix(d["client_secret"].(string), "sk_test_"))
		require.True(t, strings.HasPrefix(d["webhook_secret"].(string), "whsec_"))
		child := backoffice.Credentials{ClientID: d["client_id"].(string), ClientSecret: d["client_secret"].(string)}

		replay := b.do("POST", "/api/v1/accounts", accountBody("Loja do João", "seller-1"))
		require.Equal(t, http.StatusCreated, replay.status, string(replay.body))
		require.Equal(t, "true", replay.header.Get("Idempotent-Replayed"))
		rd := replay.json["data"].(map[string]any)
		require.Nil(t, rd["client_secret"])
		require.Nil(t, rd["webhook_secret"])
		for _, k := range []string{"account_id", "client_id", "name", "document", "external_id", "parent_id"} {
			require.Equal(t, d[k], rd[k], k)
		}

		conflict := b.do("POST", "/api/v1/accounts", accountBody("Outra Loja", "seller-1"))
		require.Equal(t, http.StatusUnprocessableEntity, conflict.status, string(conflict.body))
		require.Equal(t, pix.MsgExternalIDMismatch, conflict.json["message"])

		// Without external_id every request makes another account.
		a1, _ := b.subAccount("Sem referência", "")
		a2, _ := b.subAccount("Sem referência", "")
		require.NotEqual(t, a1["account_id"], a2["account_id"])
		require.Nil(t, a1["external_id"])

		for _, tc := range []struct {
			field string
			body  map[string]any
		}{
			{"name", map[string]any{"name": "", "document": "52998224725"}},
			{"name", map[string]any{"name": strings.Repeat("a", 101), "document": "52998224725"}},
			{"name", map[string]any{"name": "a\u202eb", "document": "52998224725"}},
			{"document", map[string]any{"name": "Loja", "document": "52998224724"}},
			{"document", map[string]any{"name": "Loja"}},
			{"external_id", map[string]any{"name": "Loja", "document": "52998224725", "external_id": "não"}},
			{"postbackUrl", map[string]any{"name": "Loja", "document": "52998224725", "postbackUrl": "ftp://x"}},
		} {
			r := b.do("POST", "/api/v1/accounts", tc.body)
			require.Equal(t, http.StatusBadRequest, r.status, "%v: %s", tc.body, r.body)
			require.Equal(t, "Bad Request", r.json["error"])
			require.Equal(t, tc.field, r.json["details"].([]any)[0].(map[string]any)["field"], string(r.body))
		}

		// A sub-account cannot have sub-accounts.
		nested := b.do("POST", "/api/v1/accounts", accountBody("Neta", "n-1"), child)
		require.Equal(t, http.StatusUnprocessableEntity, nested.status, string(nested.body))
		require.Equal(t, "A sub-account cannot create sub-accounts", nested.json["message"])

		// The parent's fee rules: 1% + R$ 0.05 of a R$ 10.00 charge.
		charge := b.do("POST", "/api/v1/gateway/request-qrcode", validCharge("child-fee", "10.00"), child)
		require.Equal(t, http.StatusCreated, charge.status, string(charge.body))
		look := b.do("POST", "/api/v1/wallet/transaction", map[string]any{"payment_id": charge.json["payment_id"]}, child)
		require.Equal(t, http.StatusOK, look.status, string(look.body))
		require.Equal(t, json.Number("0.15"), look.json["data"].(map[string]any)["tax"])
	})
}

// TestAccountMe: a top-level client has no parent (nor document); a
// sub-account names its parent's account_id.
func TestAccountMe(t *testing.T) {
	t.Parallel()
	databases(t, func(t *testing.T, open func(t *testing.T) *store.DB) {
		b := setup(t, open, options{})
		parent := b.me()
		require.Nil(t, parent["parent_id"])
		require.Nil(t, parent["document"])
		require.Equal(t, "merchant", parent["name"])
		d, child := b.subAccount("Vendedor", "v-1")
		me := b.me(child)
		require.Equal(t, d["account_id"], me["account_id"])
		require.Equal(t, parent["account_id"], me["parent_id"])
		require.Equal(t, "Vendedor", me["name"])
		require.Equal(t, "11222333000181", me["document"])
	})
}

// TestAccountListAndGet: the parent lists its sub-accounts newest first a
// page at a time, never with a secret, and reads one with its available
// balance; another client's, a sibling's, its own or an unknown account
// is 404.
func TestAccountListAndGet(t *testing.T) {
	t.Parallel()
	databases(t, func(t *testing.T, open func(t *testing.T) *store.DB) {
		b := setup(t, open, options{})
		var ids []string
		var creds []backoffice.Credentials
		for i := range 3 {
			d, c := b.subAccount(fmt.Sprintf("Loja %d", i), fmt.Sprintf("l-%d", i))
			ids, creds = append(ids, d["account_id"].(string)), append(creds, c)
		}
		other, err := b.bo.CreateClient(context.Background(), backoffice.ClientParams{Name: "other"})
		require.NoError(t, err)
		foreign, _ := b.subAccount("Alheia", "a-1", other)
		// Another top-level client's sub-accounts are not listed.
		r := b.do("GET", "/api/v1/accounts?limit=2", nil)
		require.Equal(t, http.StatusOK, r.status, string(r.body))
		page := r.json["data"].([]any)
		require.Len(t, page, 2)
		require.Equal(t, ids[2], page[0].(map[string]any)["account_id"])
		require.Equal(t, ids[1], page[1].(map[string]any)["account_id"])
		for _, a := range page {
			require.NotContains(t, a, "client_secret")
			require.NotContains(t, a, "webhook_secret")
			require.NotContains(t, a, "available_cents")
		}
		next := r.json["next_cursor"].(string)
		r = b.do("GET", "/api/v1/accounts?limit=2&cursor="+next, nil)
		require.Equal(t, http.StatusOK, r.status, string(r.body))
		page = r.json["data"].([]any)
		require.Len(t, page, 1)
		require.Equal(t, ids[0], page[0].(map[string]any)["account_id"])
		require.Nil(t, r.json["next_cursor"])
		require.Equal(t, http.StatusBadRequest, b.do("GET", "/api/v1/accounts?cursor=bogus", nil).status)
		require.Equal(t, http.StatusBadRequest, b.do("GET", "/api/v1/accounts?limit=0", nil).status)
		// A sub-account has none.
		r = b.do("GET", "/api/v1/accounts", nil, creds[0])
		require.Equal(t, http.StatusOK, r.status, string(r.body))
		require.Empty(t, r.json["data"])

		// One account, with its balance.
		id := b.paidCharge("fund", "50")
		_ = id
		require.Equal(t, http.StatusOK, b.transfer(ids[1], "12.34", nil).status)
		r = b.do("GET", "/api/v1/accounts/"+ids[1], nil)
		require.Equal(t, http.StatusOK, r.status, string(r.body))
		got := r.json["data"].(map[string]any)
		require.Equal(t, json.Number("1234"), got["available_cents"])
		require.Equal(t, "Loja 1", got["name"])
		require.Equal(t, "l-1", got["external_id"])
		require.Equal(t, "https://seller.example.com/webhooks/pix", got["postbackUrl"])
		require.Equal(t, "active", got["status"])
		require.NotContains(t, got, "client_secret")

		parent := b.me()["account_id"].(string)
		for name, tc := range map[string]struct {
			id   string
			cred []backoffice.Credentials
		}{
			"another client's":         {foreign["account_id"].(string), nil},
			"a sibling's":              {ids[1], creds[:1]},
			"the parent, by its child": {parent, creds[:1]},
			"its own":                  {parent, nil},
			"unknown":                  {"3f1c2a9e-7b4d-4c21-9a6e-2d8f5b7c1e04", nil},
			"malformed":                {"not-an-id", nil},
		} {
			for _, path := range []string{"/api/v1/accounts/" + tc.id, "/api/v1/accounts/" + tc.id + "/rotate-secret"} {
				method := "GET"
				if strings.HasSuffix(path, "rotate-secret") {
					method = "POST"
				}
				r := b.do(method, path, nil, tc.cred...)
				require.Equal(t, http.StatusNotFound, r.status, "%s: %s %s", name, method, r.body)
				require.Equal(t, "Account not found", r.json["message"], name)
			}
		}
	})
}

// TestAccountRotateSecret: the parent gives a sub-account a new secret;
// the old one is refused at once and the new one works.
func TestAccountRotateSecret(t *testing.T) {
	t.Parallel()
	databases(t, func(t *testing.T, open func(t *testing.T) *store.DB) {
		b := setup(t, open, options{})
		d, child := b.subAccount("Vendedor", "v-1")
		require.Equal(t, http.StatusOK, b.do("GET", "/api/v1/wallet/balance", nil, child).status)
		r := b.do("POST", "/api/v1/accounts/"+d["account_id"].(string)+"/rotate-secret", nil)
		require.Equal(t, http.StatusOK, r.status, string(r.body))
		rd := r.json["data"].(map[string]any)
		require.Equal(t, d["client_id"], rd["client_id"])
		fresh := backoffice.Credentials{ClientID: child.ClientID, ClientSecret: rd["client_secret"].(string)}
		require.NotEqual(t, child.ClientSecret, fresh.ClientSecret)
		require.Equal(t, http.StatusUnauthorized, b.do("GET", "/api/v1/wallet/balance", nil, child).status)
		require.Equal(t, http.StatusOK, b.do("GET", "/api/v1/wallet/balance", nil, fresh).status)
		// A sub-account cannot rotate itself through its parent's route.
		require.Equal(t, http.StatusNotFound, b.do("POST", "/api/v1/accounts/"+d["account_id"].(string)+"/rotate-secret", nil, fresh).status)
	})
}

// TestSubAccountIsAFullClient: a sub-account's charges, balance and
// history are its own; its parent's are untouched.
func TestSubAccountIsAFullClient(t *testing.T) {
	t.Parallel()
	databases(t, func(t *testing.T, open func(t *testing.T) *store.DB) {
		b := setup(t, open, options{})
		_, child := b.subAccount("Vendedor", "v-1")
		charge := b.do("POST", "/api/v1/gateway/request-qrcode", validCharge("child-1", "25.00"), child)
		require.Equal(t, http.StatusCreated, charge.status, string(charge.body))
		id := charge.json["payment_id"].(string)
		require.Equal(t, http.StatusOK, b.do("POST", "/api/v1/sandbox/charges/"+id+"/pay", nil, child).status)
		require.Equal(t, holds{available: 2500}, b.holds(child))
		require.Equal(t, holds{}, b.holds())
		h := b.historyOf(child)
		require.Len(t, h, 1)
		require.Equal(t, id, h[0]["payment_id"])
		require.Empty(t, b.historyOf())
		// The parent cannot see its child's charge, nor pay it.
		require.Equal(t, http.StatusNotFound, b.do("POST", "/api/v1/wallet/transaction", map[string]any{"payment_id": id}).status)
		// Its own payout.
		p := b.do("POST", "/api/v1/gateway/pix-payment", map[string]any{"amount": json.Number("5"), "description": "Saque",
			"callbackUrl": "https://seller.example.com/webhooks/pix",
			"creditParty": map[string]any{"name": "Fulano", "keyType": "EMAIL", "key": "fulano@example.com"}}, child)
		require.Equal(t, http.StatusOK, p.status, string(p.body))
		require.Equal(t, holds{available: 2000, pending: 500}, b.holds(child))
	})
}

// TestTransfers: money moves either way between a parent and its
// sub-account at once, each side with its transfer row in history and its
// movement in the statement; a transfer is idempotent as payouts are; more
// than available is refused with nothing changed; anyone else is 404.
func TestTransfers(t *testing.T) {
	t.Parallel()
	databases(t, func(t *testing.T, open func(t *testing.T) *store.DB) {
		b := setup(t, open, options{})
		start := b.gw.Now()
		b.paidCharge("fund", "100")
		parent := b.me()["account_id"].(string)
		d, child := b.subAccount("Vendedor", "v-1")
		childID := d["account_id"].(string)

		r := b.transfer(childID, "30.50", map[string]any{"description": "Repasse", "external_id": "t-1"})
		require.Equal(t, http.StatusOK, r.status, string(r.body))
		require.ElementsMatch(t, []string{"statusCode", "data"}, keys(r.json))
		td := r.json["data"].(map[string]any)
		transferID := td["transfer_id"].(string)
		require.Regexp(t, uuidV4, transferID)
		require.Equal(t, parent, td["from_account_id"])
		require.Equal(t, childID, td["to_account_id"])
		require.Equal(t, json.Number("30.5"), td["amount"])
		require.Equal(t, "COMPLETED", td["status"])
		require.Equal(t, holds{available: 6950}, b.holds())
		require.Equal(t, holds{available: 3050}, b.holds(child))

		// Replays: the same body by external_id, then by Idempotency-Key.
		again := b.transfer(childID, "30.50", map[string]any{"description": "Repasse", "external_id": "t-1"})
		require.Equal(t, http.StatusOK, again.status, string(again.body))
		require.Equal(t, "true", again.header.Get("Idempotent-Replayed"))
		require.Equal(t, td, again.json["data"])
		mismatch := b.transfer(childID, "31", map[string]any{"external_id": "t-1"})
		require.Equal(t, http.StatusUnprocessableEntity, mismatch.status, string(mismatch.body))
		require.Equal(t, pix.MsgExternalIDMismatch, mismatch.json["message"])
		require.NotContains(t, mismatch.json, "error", "wallet shape")
		keyed := func(amount string) response {
			return b.doKey("/api/v1/wallet/transfers", map[string]any{"to_account_id": childID, "amount": json.Number(amount)}, "k-1")
		}
		k1 := keyed("1")
		require.Equal(t, http.StatusOK, k1.status, string(k1.body))
		k2 := keyed("1")
		require.Equal(t, "true", k2.header.Get("Idempotent-Replayed"))
		require.Equal(t, k1.json["data"], k2.json["data"])
		require.Equal(t, pix.MsgIdempotencyKeyMismatch, keyed("2").json["message"])
		require.Equal(t, holds{available: 6850}, b.holds())
		require.Equal(t, holds{available: 3150}, b.holds(child))

		// Back from the child to its parent.
		back := b.transfer(parent, "10", nil, child)
		require.Equal(t, http.StatusOK, back.status, string(back.body))
		require.Equal(t, childID, back.json["data"].(map[string]any)["from_account_id"])
		require.Equal(t, parent, back.json["data"].(map[string]any)["to_account_id"])
		require.Equal(t, holds{available: 7850}, b.holds())
		require.Equal(t, holds{available: 2150}, b.holds(child))

		// More than available: refused, nothing changed on either side.
		before, beforeChild := b.count(b.cred.ClientID), b.count(child.ClientID)
		short := b.transfer(childID, "78.51", nil)
		require.Equal(t, http.StatusUnprocessableEntity, short.status, string(short.body))
		require.Equal(t, map[string]any{"statusCode": json.Number("422"), "message": "Insufficient balance"}, short.json)
		require.Equal(t, holds{available: 7850}, b.holds())
		require.Equal(t, holds{available: 2150}, b.holds(child))
		require.Equal(t, before, b.count(b.cred.ClientID))
		require.Equal(t, beforeChild, b.count(child.ClientID))

		// Anyone else: 404 in the wallet shape.
		sibling, siblingCred := b.subAccount("Irmã", "s-1")
		other, err := b.bo.CreateClient(context.Background(), backoffice.ClientParams{Name: "other"})
		require.NoError(t, err)
		foreign, _ := b.subAccount("Alheia", "a-1", other)
		otherMe := b.me(other)["account_id"].(string)
		for name, tc := range map[string]struct {
			to   string
			cred []backoffice.Credentials
		}{
			"a sibling":                {sibling["account_id"].(string), []backoffice.Credentials{child}},
			"another client's child":   {foreign["account_id"].(string), nil},
			"another client":           {otherMe, nil},
			"itself":                   {parent, nil},
			"unknown":                  {"3f1c2a9e-7b4d-4c21-9a6e-2d8f5b7c1e04", nil},
			"malformed":                {"x", nil},
			"a child to its sibling's": {childID, []backoffice.Credentials{siblingCred}},
		} {
			r := b.transfer(tc.to, "1", nil, tc.cred...)
			require.Equal(t, http.StatusNotFound, r.status, "%s: %s", name, r.body)
			require.Equal(t, map[string]any{"statusCode": json.Number("404"), "message": "Account not found"}, r.json, name)
		}
		bad := b.transfer(childID, "0", nil)
		require.Equal(t, http.StatusBadRequest, bad.status, string(bad.body))
		require.Contains(t, bad.json["message"], "'amount'")
		require.NotContains(t, bad.json, "error")

		// History: each side sees its transfer rows.
		h := b.historyOf()
		require.Equal(t, "transfer", h[0]["type"])
		require.Equal(t, "in", h[0]["direction"])
		require.Equal(t, childID, h[0]["counterparty_account_id"])
		var out map[string]any
		for _, row := range h {
			if row["payment_id"] == transferID {
				out = row
			}
		}
		require.NotNil(t, out, "the sender's row is the transfer_id")
		require.Equal(t, "out", out["direction"])
		require.Equal(t, transferID, out["transfer_id"])
		require.Equal(t, "t-1", out["external_id"])
		require.Equal(t, "PAID", out["status"])
		require.Equal(t, json.Number("30.5"), out["amount"])
		ch := b.historyOf(child)
		require.Len(t, ch, 3)
		require.Equal(t, "out", ch[0]["direction"])
		require.Equal(t, parent, ch[0]["counterparty_account_id"])
		var in map[string]any
		for _, row := range ch {
			if row["transfer_id"] == transferID {
				in = row
			}
		}
		require.NotNil(t, in)
		require.Equal(t, "in", in["direction"])
		require.NotEqual(t, transferID, in["payment_id"], "each side has its own row")
		require.Nil(t, in["external_id"])
		typed := b.do("GET", "/api/v1/wallet/transactions?type=transfer", nil, child)
		require.Equal(t, http.StatusOK, typed.status, string(typed.body))
		require.Len(t, typed.json["data"], 3)

		// Statement: the movements, signed, on each side.
		end := b.gw.Now().Add(time.Minute)
		sums := map[string]int64{}
		for _, m := range b.statement(start.Add(-time.Minute), end).Data.Movements {
			sums[m.Type] += m.AmountCents
		}
		require.Equal(t, map[string]int64{"charge": 10000, "transfer": -2150}, sums)
		sums = map[string]int64{}
		for _, m := range b.statement(start.Add(-time.Minute), end, child).Data.Movements {
			sums[m.Type] += m.AmountCents
			require.Equal(t, "transfer", m.Type)
		}
		require.Equal(t, map[string]int64{"transfer": 2150}, sums)

		// The ledger: balanced, and the family's clearing sums to zero.
		ctx := context.Background()
		require.NoError(t, b.db.CheckLedger(ctx))
		pb, err := b.db.Balances(ctx, b.cred.ClientID)
		require.NoError(t, err)
		cb, err := b.db.Balances(ctx, child.ClientID)
		require.NoError(t, err)
		require.Equal(t, pix.Amount(2150), pb[ledger.Clearing])
		require.Zero(t, pb[ledger.Clearing]+cb[ledger.Clearing])
	})
}

// TestTransfersConcurrent: concurrent transfers of most of the balance,
// either way, never take a balance below zero, and the ledger stays whole.
func TestTransfersConcurrent(t *testing.T) {
	t.Parallel()
	databases(t, func(t *testing.T, open func(t *testing.T) *store.DB) {
		b := setup(t, open, options{})
		b.paidCharge("fund", "100")
		parent := b.me()["account_id"].(string)
		d, child := b.subAccount("Vendedor", "v-1")
		childID := d["account_id"].(string)

		const n = 10
		var wg sync.WaitGroup
		statuses := make([]int, n)
		errs := make([]error, n)
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				to, cred := childID, b.cred
				if i%2 == 1 {
					to, cred = parent, child
				}
				req, err := b.build("POST", "/api/v1/wallet/transfers", map[string]any{"to_account_id": to, "amount": json.Number("60"),
					"external_id": fmt.Sprintf("c-%d", i)}, "application/json", cred)
				if err == nil {
					var r response
					r, err = fetch(b.http, req)
					statuses[i] = r.status
				}
				errs[i] = err
			}()
		}
		wg.Wait()
		ok := 0
		for i := range n {
			require.NoError(t, errs[i])
			require.Contains(t, []int{http.StatusOK, http.StatusUnprocessableEntity}, statuses[i])
			if statuses[i] == http.StatusOK {
				ok++
			}
		}
		require.GreaterOrEqual(t, ok, 1)
		p, c := b.holds(), b.holds(child)
		require.GreaterOrEqual(t, p.available, int64(0))
		require.GreaterOrEqual(t, c.available, int64(0))
		require.Equal(t, int64(10000), p.available+c.available, "the family's balance is what it received")
		require.NoError(t, b.db.CheckLedger(context.Background()))
	})
}
