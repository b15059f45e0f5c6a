package httpapi_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/internal/backoffice"
	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/store"
)

const clockPath = "/api/v1/sandbox/clock"

// advance moves the bundle client's sandbox clock (or cred's) by d.
func (b *bundle) advance(d string, cred ...backoffice.Credentials) response {
	b.t.Helper()
	r := b.do("POST", clockPath, map[string]any{"advance": d}, cred...)
	require.Equal(b.t, http.StatusOK, r.status, string(r.body))
	return r
}

// offset is the offset_seconds the clock endpoint answers for cred.
func (b *bundle) offset(cred ...backoffice.Credentials) json.Number {
	b.t.Helper()
	r := b.do("GET", clockPath, nil, cred...)
	require.Equal(b.t, http.StatusOK, r.status, string(r.body))
	return r.json["data"].(map[string]any)["offset_seconds"].(json.Number)
}

// apiTime parses a timestamp as the API writes it.
func apiTime(t *testing.T, v any) time.Time {
	t.Helper()
	at, err := time.Parse(pix.TimeFormat, v.(string))
	require.NoError(t, err)
	return at
}

// TestSandboxClockEndpoints: GET reads the client's clock, POST advances
// it by a Go duration and answers the new reading; one client's clock is
// its own; every bad body is a 400 naming advance that changes nothing,
// and so is an advance that would take the clock past 400 days in all.
func TestSandboxClockEndpoints(t *testing.T) {
	t.Parallel()
	databases(t, func(t *testing.T, open func(t *testing.T) *store.DB) {
		b := setup(t, open, options{})
		other, err := b.bo.CreateClient(context.Background(), backoffice.ClientParams{Name: "other"})
		require.NoError(t, err)

		r := b.do("GET", clockPath, nil)
		require.Equal(t, http.StatusOK, r.status, string(r.body))
		require.Equal(t, json.Number("200"), r.json["statusCode"])
		data := r.json["data"].(map[string]any)
		require.Equal(t, json.Number("0"), data["offset_seconds"])
		require.WithinDuration(t, b.clock.Now(), apiTime(t, data["now"]), time.Second)

		r = b.advance("36h")
		data = r.json["data"].(map[string]any)
		require.Equal(t, json.Number("129600"), data["offset_seconds"])
		require.WithinDuration(t, b.clock.Now().Add(36*time.Hour), apiTime(t, data["now"]), time.Second)
		r = b.advance("1h30m")
		require.Equal(t, json.Number("135000"), r.json["data"].(map[string]any)["offset_seconds"])
		require.Equal(t, json.Number("135000"), b.offset())
		require.Equal(t, json.Number("0"), b.offset(other), "another client's clock does not move")

		for _, body := range []any{nil, "", `{}`, `{"advance": null}`, `{"advance": 36}`, `{"advance": ""}`,
			`{"advance": "36"}`, `{"advance": "1 day"}`, `{"advance": "1d"}`, `{"advance": " 1h"}`,
			`{"advance": "0s"}`, `{"advance": "-1h"}`, `{"advance": "500us"}`, `{"advance": "9601h"}`,
			`{"advance": "9563h"}`, // 9562.5 h + 37.5 h taken already is more than 400 days
		} {
			r := b.send(b.http, "POST", clockPath, body, "application/json")
			requireIssue(t, r, "advance")
		}
		require.Equal(t, json.Number("135000"), b.offset(), "a refused advance changes nothing")
		r = b.advance("9562h30m") // exactly 400 days in all
		require.Equal(t, json.Number("34560000"), r.json["data"].(map[string]any)["offset_seconds"])
		requireIssue(t, b.send(b.http, "POST", clockPath, `{"advance": "1ms"}`, "application/json"), "advance")

		require.Equal(t, http.StatusUnauthorized, b.send(b.raw, "GET", clockPath, nil, "", backoffice.Credentials{}).status)
	})
}

// TestSandboxClockNotInProduction: in production the clock does not
// exist, as no /api/v1/sandbox/ path does.
func TestSandboxClockNotInProduction(t *testing.T) {
	t.Parallel()
	databases(t, func(t *testing.T, open func(t *testing.T) *store.DB) {
		b := setup(t, open, options{env: "production"})
		require.Equal(t, http.StatusNotFound, b.send(b.raw, "GET", clockPath, nil, "").status)
		require.Equal(t, http.StatusNotFound, b.send(b.raw, "POST", clockPath, `{"advance": "36h"}`, "application/json").status)
		_, err := b.gw.Sandbox().AdvanceClock(context.Background(), b.client(), time.Hour)
		require.Error(t, err, "nor through the gateway")
	})
}

// client is the bundle's client as stored.
func (b *bundle) client() pix.Client {
	b.t.Helper()
	c, err := b.db.Client(context.Background(), b.cred.ClientID)
	require.NoError(b.t, err)
	return c
}

// TestSandboxClockExpiresCharges: a client that advances its clock 25 h
// sees its unpaid 24 h charge CANCELLED, with pix.cashin.cancelled, at the
// expiry job's next look; another client's charge of the same age stays
// PENDING; the client's timestamps are on its clock, and its event is
// still due for delivery at once.
func TestSandboxClockExpiresCharges(t *testing.T) {
	t.Parallel()
	databases(t, func(t *testing.T, open func(t *testing.T) *store.DB) {
		ctx := context.Background()
		b := setup(t, open, options{})
		other, err := b.bo.CreateClient(ctx, backoffice.ClientParams{Name: "other"})
		require.NoError(t, err)
		b.advance("2h")
		r := b.createCharge("clock-1", "10.00")
		id := r.json["payment_id"].(string)
		created := apiTime(t, b.lookup(id)["created_at"])
		require.WithinDuration(t, b.clock.Now().Add(2*time.Hour), created, time.Second, "created on the client's clock")
		require.Equal(t, created.Add(24*time.Hour), apiTime(t, r.json["expires_at"]))
		theirs := b.do("POST", "/api/v1/gateway/request-qrcode", validCharge("clock-2", "10.00"), other)
		require.Equal(t, http.StatusCreated, theirs.status, string(theirs.body))
		require.WithinDuration(t, b.clock.Now().Add(24*time.Hour), apiTime(t, theirs.json["expires_at"]), time.Second)

		_, err = b.gw.Cashin().ExpireDue(ctx, 10)
		require.NoError(t, err)
		require.Equal(t, "PENDING", b.lookup(id)["status"])

		b.advance("25h")
		n, err := b.gw.Cashin().ExpireDue(ctx, 10)
		require.NoError(t, err)
		require.Equal(t, 1, n)
		require.Equal(t, "CANCELLED", b.lookup(id)["status"])
		require.Equal(t, []string{pix.EventCashinCancelled}, b.eventTypes(id))
		evs, err := b.db.Events(ctx, id)
		require.NoError(t, err)
		var body pix.EventBody
		require.NoError(t, json.Unmarshal([]byte(evs[0].Payload), &body))
		require.WithinDuration(t, b.clock.Now().Add(27*time.Hour), apiTime(t, body.OccurredAt), time.Second,
			"occurred_at is on the client's clock")
		require.False(t, evs[0].CreatedAt.After(b.clock.Now()), "the event is due for delivery now, not 27 h from now")

		look := b.do("POST", "/api/v1/wallet/transaction", map[string]any{"payment_id": theirs.json["payment_id"]}, other)
		require.Equal(t, http.StatusOK, look.status)
		require.Equal(t, "PENDING", look.json["data"].(map[string]any)["status"], "another client's clock did not move")
	})
}

// TestSandboxClockDueAmount: a due-date charge's amount due today follows
// the client's clock: past its date it includes the fine and the interest,
// the sandbox pays that amount, and a due date is "today or later" on it.
func TestSandboxClockDueAmount(t *testing.T) {
	t.Parallel()
	databases(t, func(t *testing.T, open func(t *testing.T) *store.DB) {
		b := setup(t, open, options{start: spNoon(t, "2026-11-20")})
		id := b.dueCharge("bill-clock", "1000.00", docsTerms).json["payment_id"].(string)
		require.Equal(t, json.Number("950"), b.lookup(id)["amount_due_today"])

		b.advance("504h") // 21 days: 2026-12-11 in São Paulo, a day after the due date
		look := b.lookup(id)
		require.Equal(t, json.Number("1020.33"), look["amount_due_today"], "fine 20.00 + one day of interest 0.33")
		past := b.do("POST", "/api/v1/gateway/request-qrcode", func() map[string]any {
			body := validCharge("bill-past", "10.00")
			body["due"] = dueTerms{date: "2026-12-10", daysAfter: -1}.json()
			return body
		}())
		requireIssue(t, past, "due.date")

		r := b.payOn(id, "")
		require.Equal(t, http.StatusOK, r.status, string(r.body))
		look = b.lookup(id)
		require.Equal(t, "PAID", look["status"])
		require.Equal(t, json.Number("1020.33"), look["paid_amount"])
		require.Equal(t, "2026-12-11", apiTime(t, look["confirmed_date"]).In(saoPaulo).Format(time.DateOnly))
		_, pending := b.balance()
		require.Equal(t, json.Number("0"), pending)
		bal := b.do("GET", "/api/v1/wallet/balance", nil)
		ts, err := time.Parse("2006-01-02T15:04:05.000-07:00", bal.json["timestamp"].(string))
		require.NoError(t, err)
		require.Equal(t, "2026-12-11", ts.In(saoPaulo).Format(time.DateOnly), "the balance's timestamp is on the client's clock")
	})
}

// TestSandboxClockRecurrences: an approved recurrence's next cycle charge
// is created at the cycle job's next look once the client's clock enters
// its window (even if the job ran a moment before), with an unanswered
// one expiring after the 7-day approval window on that clock.
func TestSandboxClockRecurrences(t *testing.T) {
	t.Parallel()
	databases(t, func(t *testing.T, open func(t *testing.T) *store.DB) {
		ctx := context.Background()
		b := setup(t, open, options{start: spNoon(t, "2026-11-20")})
		r := b.do("POST", "/api/v1/gateway/recurrences", validRecurrence("rec-clock"))
		require.Equal(t, http.StatusCreated, r.status, string(r.body))
		id := r.json["recurrence_id"].(string)
		require.Equal(t, http.StatusOK, b.do("POST", "/api/v1/sandbox/recurrences/"+id+"/approve", nil).status)
		waiting := b.do("POST", "/api/v1/gateway/recurrences", validRecurrence("rec-unanswered"))
		require.Equal(t, http.StatusCreated, waiting.status, string(waiting.body))
		wid := waiting.json["recurrence_id"].(string)

		charges := func() []any {
			r := b.do("GET", "/api/v1/gateway/recurrences/"+id, nil)
			require.Equal(t, http.StatusOK, r.status)
			return r.json["data"].(map[string]any)["charges"].([]any)
		}
		_, err := b.gw.Recurrences().RunCycles(ctx, 100)
		require.NoError(t, err)
		require.Empty(t, charges(), "2026-12-10's window opens on 2026-11-30")

		b.advance("240h") // 2026-11-30
		_, err = b.gw.Recurrences().RunCycles(ctx, 100)
		require.NoError(t, err)
		cs := charges()
		require.Len(t, cs, 1, "the cycle job took the window the advance opened")
		ch := cs[0].(map[string]any)
		require.Equal(t, "2026-12-10", ch["due_date"])
		look := b.lookup(ch["payment_id"].(string))
		require.Equal(t, "2026-11-30", apiTime(t, look["created_at"]).In(saoPaulo).Format(time.DateOnly))

		w := b.do("GET", "/api/v1/gateway/recurrences/"+wid, nil)
		require.Equal(t, "EXPIRED", w.json["data"].(map[string]any)["status"], "10 days on the client's clock passed its approval window")
	})
}

// TestSandboxClockSettlesPayouts: a sandbox payout, and a refund, settle
// PIXGATE_SANDBOX_PAYOUT_DELAY (1 h here) after they were accepted on the
// client's clock, so advancing that clock settles them.
func TestSandboxClockSettlesPayouts(t *testing.T) {
	t.Parallel()
	databases(t, func(t *testing.T, open func(t *testing.T) *store.DB) {
		ctx := context.Background()
		b := setup(t, open, options{})
		b.fund("100")
		r := b.do("POST", "/api/v1/gateway/pix-payment", payout("10", "CPF", "52998224725"))
		require.Equal(t, http.StatusOK, r.status, string(r.body))
		id := r.json["transaction_id"].(string)
		charge := b.paidCharge("clock-refund", "20")
		ref := b.refund(map[string]any{"payment_id": charge, "amount": json.Number("5")}, "clock-ref-1")
		require.Equal(t, http.StatusOK, ref.status, string(ref.body))
		refundID := ref.json["refund_id"].(string)
		settle := func() {
			_, err := b.gw.Transfers().StepDue(ctx, pix.TransferPayout, 100)
			require.NoError(t, err)
			for range 3 { // a refund is sent, then read back
				_, err = b.gw.Transfers().StepDue(ctx, pix.TransferRefund, 100)
				require.NoError(t, err)
			}
		}
		refundStatus := func() string {
			r := b.do("GET", "/api/v1/gateway/refunds/"+refundID, nil)
			require.Equal(t, http.StatusOK, r.status, string(r.body))
			return r.json["data"].(map[string]any)["status"].(string)
		}
		settle()
		require.Equal(t, "PENDING", b.lookup(id)["status"])
		require.Equal(t, "PENDING", refundStatus())

		b.advance("61m")
		settle()
		look := b.lookup(id)
		require.Equal(t, "PAID", look["status"])
		require.WithinDuration(t, b.clock.Now().Add(61*time.Minute), apiTime(t, look["confirmed_date"]), time.Second)
		require.Equal(t, "COMPLETED", refundStatus(), "the refund settles on the client's clock too")
	})
}

// TestSandboxClockPayPage: the payer's page, which has no client
// credentials, prices a due-date charge on its client's clock, and its
// sandbox button pays that amount.
func TestSandboxClockPayPage(t *testing.T) {
	t.Parallel()
	databases(t, func(t *testing.T, open func(t *testing.T) *store.DB) {
		b := setup(t, open, options{start: spNoon(t, "2026-11-20")})
		id := b.dueCharge("bill-page", "1000.00", docsTerms).json["payment_id"].(string)
		b.advance("504h") // 2026-12-11 in São Paulo
		page := b.send(b.raw, "GET", "/pay/"+id, nil, "", backoffice.Credentials{})
		require.Equal(t, http.StatusOK, page.status)
		require.Contains(t, string(page.body), "1.020,33")
		paid := b.send(b.raw, "POST", "/pay/"+id+"/sandbox-pay", "", "application/x-www-form-urlencoded", backoffice.Credentials{})
		require.Equal(t, http.StatusOK, paid.status, string(paid.body))
		look := b.lookup(id)
		require.Equal(t, "PAID", look["status"])
		require.Equal(t, json.Number("1020.33"), look["paid_amount"])
	})
}
