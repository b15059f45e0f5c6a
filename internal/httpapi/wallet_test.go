package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	stdhtml "html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/internal/backoffice"
	"github.com/pixgate/pixgate/internal/gateway"
	"github.com/pixgate/pixgate/internal/ledger"
	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/store"
)

func (b *bundle) balance(cred ...backoffice.Credentials) (available, pending json.Number) {
	b.t.Helper()
	r := b.do("GET", "/api/v1/wallet/balance", nil, cred...)
	require.Equal(b.t, http.StatusOK, r.status)
	d := r.json["data"].(map[string]any)
	return d["available_cents"].(json.Number), d["pending_cents"].(json.Number)
}

func TestSandboxPayCreditsOnce(t *testing.T) {
	t.Parallel()
	databases(t, func(t *testing.T, open func(t *testing.T) *store.DB) {
		// 1.5% + R$ 0.10 on R$ 100.01 = 150.015 → 150 (half up on centavos: 1.50015 → 1.50) + 10 = 160 centavos.
		b := setup(t, open, options{fee: pix.FeeRule{PercentBP: 150, Fixed: 10}})
		c := b.createCharge("pay-1", "100.01")
		id := c.json["payment_id"].(string)
		r := b.do("POST", "/api/v1/sandbox/charges/"+id+"/pay", nil)
		require.Equal(t, http.StatusOK, r.status, string(r.body))
		data := r.json["data"].(map[string]any)
		require.Equal(t, "PAID", data["status"])
		require.Equal(t, json.Number("1.6"), data["tax"])
		confirmed, err := time.Parse(pix.TimeFormat, data["confirmed_date"].(string))
		require.NoError(t, err)
		require.WithinDuration(t, time.Now(), confirmed, 5*time.Second)

		avail, pending := b.balance()
		require.Equal(t, json.Number("9841"), avail, "10001 - 160")
		require.Equal(t, json.Number("0"), pending)

		// Paying twice credits once.
		r = b.do("POST", "/api/v1/sandbox/charges/"+id+"/pay", nil)
		require.Equal(t, http.StatusOK, r.status)
		avail, _ = b.balance()
		require.Equal(t, json.Number("9841"), avail)

		ctx := context.Background()
		postings, err := b.db.Postings(ctx, id)
		require.NoError(t, err)
		require.Len(t, postings, 1)
		require.Equal(t, []ledger.Entry{{Account: ledger.Settlement, Amount: -10001}, {Account: ledger.Available, Amount: 9841}, {Account: ledger.Fees, Amount: 160}}, postings[0].Entries)
		require.NoError(t, b.db.CheckLedger(ctx))
		events, err := b.db.Events(ctx, id)
		require.NoError(t, err)
		require.Len(t, events, 1)
		require.Equal(t, pix.EventCashinPaid, events[0].Type)
		require.Equal(t, "https://merchant.example.com/webhooks/pix", events[0].URL)
		var ev map[string]any
		require.NoError(t, json.Unmarshal([]byte(events[0].Payload), &ev))
		require.Equal(t, "PAID", ev["statusTransaction"])
		require.Equal(t, 100.01, ev["value"])
		require.Equal(t, id, ev["payment_id"])
		require.Equal(t, "pay-1", ev["external_id"])
		require.Equal(t, events[0].ID, ev["id"])

		// A paid charge cannot be expired; an unknown or another client's charge is 404.
		r = b.do("POST", "/api/v1/sandbox/charges/"+id+"/expire", nil)
		require.Equal(t, http.StatusUnprocessableEntity, r.status)
		require.Equal(t, http.StatusNotFound, b.do("POST", "/api/v1/sandbox/charges/8f7c3a52-1111-4111-8111-111111111111/pay", nil).status)
		other, err := b.bo.CreateClient(ctx, backoffice.ClientParams{Name: "other"})
		require.NoError(t, err)
		require.Equal(t, http.StatusNotFound, b.do("POST", "/api/v1/sandbox/charges/"+id+"/pay", nil, other).status)
		require.Equal(t, http.StatusNotFound, b.do("POST", "/api/v1/wallet/transaction", map[string]any{"payment_id": id}, other).status)
	})
}

func TestExpiry(t *testing.T) {
	t.Parallel()
	databases(t, func(t *testing.T, open func(t *testing.T) *store.DB) {
		b := setup(t, open, options{})
		ctx := context.Background()
		c := b.createCharge("exp-1", "5")
		id := c.json["payment_id"].(string)
		r := b.do("POST", "/api/v1/sandbox/charges/"+id+"/expire", nil)
		require.Equal(t, http.StatusOK, r.status)
		require.Equal(t, "CANCELLED", r.json["data"].(map[string]any)["status"])
		r = b.do("POST", "/api/v1/sandbox/charges/"+id+"/expire", nil)
		require.Equal(t, http.StatusOK, r.status, "expiring again changes nothing")
		r = b.do("POST", "/api/v1/sandbox/charges/"+id+"/pay", nil)
		require.Equal(t, http.StatusUnprocessableEntity, r.status, "a cancelled charge cannot be paid")
		events, err := b.db.Events(ctx, id)
		require.NoError(t, err)
		require.Len(t, events, 1)
		require.Equal(t, pix.EventCashinCancelled, events[0].Type)

		// The TTL job: nothing is due before expires_at, everything after.
		due := b.createCharge("exp-2", "5").json["payment_id"].(string)
		paid := b.createCharge("exp-3", "5").json["payment_id"].(string)
		require.Equal(t, http.StatusOK, b.do("POST", "/api/v1/sandbox/charges/"+paid+"/pay", nil).status)
		n, err := b.gw.Cashin().ExpireDue(ctx, 10)
		require.NoError(t, err)
		require.Zero(t, n)
		b.clock.Advance(24*time.Hour + time.Second)
		n, err = b.gw.Cashin().ExpireDue(ctx, 10)
		require.NoError(t, err)
		require.Equal(t, 1, n)
		n, err = b.gw.Cashin().ExpireDue(ctx, 10)
		require.NoError(t, err)
		require.Zero(t, n, "once")
		look := func(id string) string {
			r := b.do("POST", "/api/v1/wallet/transaction", map[string]any{"payment_id": id})
			return r.json["data"].(map[string]any)["status"].(string)
		}
		require.Equal(t, "CANCELLED", look(due))
		require.Equal(t, "PAID", look(paid))
		avail, _ := b.balance()
		require.Equal(t, json.Number("500"), avail)
	})
}

func TestLookupRules(t *testing.T) {
	t.Parallel()
	databases(t, func(t *testing.T, open func(t *testing.T) *store.DB) {
		b := setup(t, open, options{})
		a := b.createCharge("look-a", "1").json["payment_id"].(string)
		bID := b.createCharge("look-b", "2").json["payment_id"].(string)
		path := "/api/v1/wallet/transaction"
		missing := "0b7c3a52-2222-4222-8222-222222222222"
		for _, tc := range []struct {
			body   map[string]any
			status int
			want   string // payment_id on 200, message otherwise
		}{
			{map[string]any{}, 400, gateway.MsgLookupNeedsID},
			{map[string]any{"payment_id": "", "external_id": ""}, 400, gateway.MsgLookupNeedsID},
			{map[string]any{"payment_id": a}, 200, a},
			{map[string]any{"external_id": "look-b"}, 200, bID},
			{map[string]any{"payment_id": a, "external_id": "look-a"}, 200, a},
			{map[string]any{"payment_id": a, "external_id": ""}, 200, a},
			{map[string]any{"payment_id": a, "external_id": "look-b"}, 400, gateway.MsgLookupMismatch},
			{map[string]any{"payment_id": a, "external_id": "nope"}, 400, gateway.MsgLookupMismatch},
			{map[string]any{"payment_id": missing, "external_id": "look-a"}, 400, gateway.MsgLookupMismatch},
			{map[string]any{"payment_id": missing, "external_id": "nope"}, 404, gateway.MsgLookupNotFound},
			{map[string]any{"payment_id": missing}, 404, gateway.MsgLookupNotFound},
			{map[string]any{"payment_id": "not-a-uuid"}, 404, gateway.MsgLookupNotFound},
			{map[string]any{"external_id": "nope"}, 404, gateway.MsgLookupNotFound},
		} {
			r := b.do("POST", path, tc.body)
			require.Equal(t, tc.status, r.status, "%v: %s", tc.body, r.body)
			if tc.status == 200 {
				require.Equal(t, tc.want, r.json["data"].(map[string]any)["payment_id"])
				require.Equal(t, json.Number("200"), r.json["statusCode"])
			} else {
				require.Equal(t, map[string]any{"statusCode": json.Number(fmt.Sprint(tc.status)), "message": tc.want}, r.json)
			}
		}
		r := b.do("POST", path, `{"payment_id": 5}`)
		require.Equal(t, http.StatusBadRequest, r.status)
		require.Len(t, r.json, 2)
	})
}

func TestBalanceShape(t *testing.T) {
	t.Parallel()
	databases(t, func(t *testing.T, open func(t *testing.T) *store.DB) {
		b := setup(t, open, options{})
		r := b.do("GET", "/api/v1/wallet/balance", nil)
		require.Equal(t, http.StatusOK, r.status)
		require.Equal(t, json.Number("200"), r.json["statusCode"])
		require.Equal(t, "BRL", r.json["data"].(map[string]any)["currency"])
		ts := r.json["timestamp"].(string)
		require.Regexp(t, regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}-03:00$`), ts)
		parsed, err := time.Parse("2006-01-02T15:04:05.000-07:00", ts)
		require.NoError(t, err)
		require.WithinDuration(t, time.Now(), parsed, 5*time.Second)
	})
}

func TestHistory(t *testing.T) {
	t.Parallel()
	databases(t, func(t *testing.T, open func(t *testing.T) *store.DB) {
		b := setup(t, open, options{})
		var ids []string
		for i := 0; i < 7; i++ {
			ids = append(ids, b.createCharge(fmt.Sprint("h-", i), "1").json["payment_id"].(string))
			b.clock.Advance(time.Millisecond)
		}
		require.Equal(t, http.StatusOK, b.do("POST", "/api/v1/sandbox/charges/"+ids[2]+"/pay", nil).status)
		page := func(q string) response {
			r := b.do("GET", "/api/v1/wallet/transactions"+q, nil)
			require.Equal(t, http.StatusOK, r.status, string(r.body))
			return r
		}
		var got []string
		cursor := ""
		for {
			q := "?limit=3"
			if cursor != "" {
				q += "&cursor=" + url.QueryEscape(cursor)
			}
			r := page(q)
			for _, d := range r.json["data"].([]any) {
				got = append(got, d.(map[string]any)["payment_id"].(string))
			}
			if r.json["next_cursor"] == nil {
				break
			}
			cursor = r.json["next_cursor"].(string)
			if len(got) == 3 {
				b.createCharge("h-late", "1") // arrives between pages
			}
		}
		want := make([]string, len(ids))
		for i, id := range ids {
			want[len(ids)-1-i] = id
		}
		require.Equal(t, want, got, "newest first, no repeats or skips")

		r := page("?status=PAID")
		require.Len(t, r.json["data"], 1)
		r = page("?type=cashout")
		require.Empty(t, r.json["data"])
		require.Nil(t, r.json["next_cursor"])
		r = page("")
		require.Len(t, r.json["data"], 8)
		from := time.Now().Add(-time.Hour).UTC().Format(time.RFC3339)
		to := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
		r = page("?from=" + url.QueryEscape(from) + "&to=" + url.QueryEscape(to))
		require.Len(t, r.json["data"], 8)
		r = page("?to=" + url.QueryEscape(from))
		require.Empty(t, r.json["data"])

		// A 400 names each bad parameter and what it accepts in its message:
		// the wallet body has no details.
		const (
			badLimit  = "'limit' must be an integer from 1 to 100 (default 50)"
			badCursor = "'cursor' must be a next_cursor returned by this endpoint"
			badStatus = "'status' must be one of PENDING, PAID, CANCELLED, REFUNDED, REVERSED"
			badType   = "'type' must be one of cashin, cashout, split, transfer"
			badDate   = " must be an RFC 3339 date-time such as 2026-01-02T15:04:05Z"
		)
		for q, want := range map[string]string{
			"?limit=0": badLimit, "?limit=101": badLimit, "?limit=x": badLimit, "?status=paid": badStatus, "?type=refund": badType,
			"?from=yesterday": "'from'" + badDate, "?to=2026-13-01": "'to'" + badDate, "?cursor=%21%21": badCursor,
			"?cursor=" + strings.Repeat("A", 300): badCursor, "?limit=0&type=x": badLimit + "; " + badType,
		} {
			r := b.do("GET", "/api/v1/wallet/transactions"+q, nil)
			require.Equal(t, http.StatusBadRequest, r.status, q)
			require.Equal(t, map[string]any{"statusCode": json.Number("400"), "message": "Invalid request parameters: " + want + "."}, r.json, q)
		}
	})
}

func TestPayPage(t *testing.T) {
	t.Parallel()
	databases(t, func(t *testing.T, open func(t *testing.T) *store.DB) {
		b := setup(t, open, options{})
		c := b.createCharge("page-1", "1234.56")
		id := c.json["payment_id"].(string)
		none := backoffice.Credentials{}
		r := b.do("GET", "/pay/"+id, nil, none)
		require.Equal(t, http.StatusOK, r.status)
		html := stdhtml.UnescapeString(string(r.body))
		require.Contains(t, html, "R$ 1.234,56")
		require.Contains(t, html, c.json["qrcode"].(string))
		require.Contains(t, html, "data:image/png;base64,"+c.json["qrcode_image"].(string))
		require.Contains(t, html, `action="/pay/`+id+`/sandbox-pay"`)
		require.Contains(t, r.header.Get("Content-Security-Policy"), "default-src 'none'")

		// The form pays it, without JavaScript and without credentials.
		noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		resp, err := noRedirect.PostForm(b.srv.URL+"/pay/"+id+"/sandbox-pay", url.Values{})
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusSeeOther, resp.StatusCode)
		r = b.do("GET", "/pay/"+id, nil, none)
		require.Contains(t, string(r.body), "PAID")
		require.NotContains(t, string(r.body), "sandbox-pay")
		avail, _ := b.balance()
		require.Equal(t, json.Number("123456"), avail)

		r = b.do("GET", "/pay/0b7c3a52-2222-4222-8222-222222222222", nil, none)
		require.Equal(t, http.StatusNotFound, r.status)
		r = b.send(b.raw, "GET", "/assets/pay.js", nil, "")
		require.Equal(t, http.StatusOK, r.status)
	})
}

func TestProductionHasNoSandbox(t *testing.T) {
	t.Parallel()
	databases(t, func(t *testing.T, open func(t *testing.T) *store.DB) {
		b := setup(t, open, options{env: "production"})
		charge := validCharge("prod-1", "3")
		r := b.do("POST", "/api/v1/gateway/request-qrcode", charge)
		require.Equal(t, http.StatusCreated, r.status, string(r.body))
		id := r.json["payment_id"].(string)
		r = b.send(b.raw, "POST", "/api/v1/sandbox/charges/"+id+"/pay", nil, "")
		require.Equal(t, http.StatusNotFound, r.status)
		require.Equal(t, http.StatusUnauthorized, b.send(b.raw, "POST", "/api/v1/sandbox/charges/"+id+"/pay", nil, "", backoffice.Credentials{}).status)
		r = b.do("GET", "/pay/"+id, nil, backoffice.Credentials{})
		require.Equal(t, http.StatusOK, r.status)
		require.NotContains(t, string(r.body), "sandbox-pay")
		for _, u := range []string{"http://merchant.example.com/hook", "https://127.0.0.1/h", "https://localhost/h", "https://10.0.0.1/x",
			"https://[::1]/x", "https://169.254.169.254/latest/meta-data", "https://user:pw@merchant.example.com/h"} {
			charge = validCharge("prod-2", "3")
			charge["postbackUrl"] = u
			r := b.do("POST", "/api/v1/gateway/request-qrcode", charge)
			require.Equal(t, http.StatusBadRequest, r.status, "%s must be refused in production", u)
			require.Contains(t, string(r.body), "postbackUrl")
			p := payout("1", "CPF", "52998224725")
			p["callbackUrl"] = u
			r = b.do("POST", "/api/v1/gateway/pix-payment", p)
			require.Equal(t, http.StatusBadRequest, r.status, u)
			require.Contains(t, string(r.body), "callbackUrl")
		}
	})
}
