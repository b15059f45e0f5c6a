package httpapi_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/internal/store"
)

const (
	bodyExternalIDMismatch = `{"statusCode":422,"message":"external_id already used with different parameters","error":"Unprocessable Entity"}`
	bodyKeyMismatch        = `{"statusCode":422,"message":"Idempotency-Key already used with different parameters","error":"Unprocessable Entity"}`
)

// TestIdempotencyMismatchNamesTheKey: a reused key with a different body
// gets a 422 naming the key that clashed (docs/api.md, Idempotency), on charges, payouts
// and refunds. When both keys are sent, the earlier request is looked up by
// external_id first: external_id is named when it matched an earlier
// request, the header when only the header did.
func TestIdempotencyMismatchNamesTheKey(t *testing.T) {
	t.Parallel()
	databases(t, func(t *testing.T, open func(t *testing.T) *store.DB) {
		b := setup(t, open, options{})
		b.fund("100")
		const payouts, charges = "/api/v1/gateway/pix-payment", "/api/v1/gateway/request-qrcode"
		withExt := func(amount, ext string) map[string]any {
			p := payout(amount, "CPF", "52998224725")
			if ext != "" {
				p["external_id"] = ext
			}
			return p
		}
		mismatch := func(r response, want string) {
			t.Helper()
			require.Equal(t, http.StatusUnprocessableEntity, r.status, string(r.body))
			require.JSONEq(t, want, string(r.body))
		}

		// Payouts: the header alone.
		require.Equal(t, http.StatusOK, b.doKey(payouts, withExt("1", ""), "pk-1").status)
		mismatch(b.doKey(payouts, withExt("2", ""), "pk-1"), bodyKeyMismatch)
		// external_id alone.
		require.Equal(t, http.StatusOK, b.do("POST", payouts, withExt("1", "pe-1")).status)
		mismatch(b.do("POST", payouts, withExt("2", "pe-1")), bodyExternalIDMismatch)
		// Both: a new external_id with a used header clashes on the header;
		// a used external_id with a new header clashes on external_id.
		mismatch(b.doKey(payouts, withExt("1", "pe-new"), "pk-1"), bodyKeyMismatch)
		mismatch(b.doKey(payouts, withExt("2", "pe-1"), "pk-new"), bodyExternalIDMismatch)
		// Both naming the same earlier request: external_id, found first.
		require.Equal(t, http.StatusOK, b.doKey(payouts, withExt("1", "pe-2"), "pk-2").status)
		mismatch(b.doKey(payouts, withExt("2", "pe-2"), "pk-2"), bodyExternalIDMismatch)

		// Charges always carry external_id; the header clashes when the
		// external_id is new.
		first := b.doKey(charges, validCharge("ce-1", "5"), "ck-1")
		require.Equal(t, http.StatusCreated, first.status, string(first.body))
		mismatch(b.doKey(charges, validCharge("ce-2", "5"), "ck-1"), bodyKeyMismatch)
		mismatch(b.doKey(charges, validCharge("ce-1", "6"), "ck-new"), bodyExternalIDMismatch)
		mismatch(b.doKey(charges, validCharge("ce-1", "6"), "ck-1"), bodyExternalIDMismatch)
		mismatch(b.do("POST", charges, validCharge("ce-1", "6")), bodyExternalIDMismatch)

		// Refunds are idempotent on the header only.
		paid := b.paidCharge("re-1", "10")
		require.Equal(t, http.StatusOK, b.refund(map[string]any{"payment_id": paid, "amount": json.Number("1")}, "rk-1").status)
		mismatch(b.refund(map[string]any{"payment_id": paid, "amount": json.Number("2")}, "rk-1"), bodyKeyMismatch)
		mismatch(b.refund(map[string]any{"external_id": "re-1", "amount": json.Number("1")}, "rk-1"), bodyKeyMismatch)
	})
}

// TestEmptyIdempotencyKeyIsRefused: an Idempotency-Key header that is
// present but empty or blank, or sent twice, is a 400 naming the header on
// every endpoint that takes it, and nothing is created; it is not read as
// absent.
func TestEmptyIdempotencyKeyIsRefused(t *testing.T) {
	t.Parallel()
	databases(t, func(t *testing.T, open func(t *testing.T) *store.DB) {
		b := setup(t, open, options{})
		paid := b.paidCharge("ek-paid", "10")
		before := b.count(b.cred.ClientID)
		for _, tc := range []struct {
			path string
			body map[string]any
		}{
			{"/api/v1/gateway/pix-payment", payout("1", "CPF", "52998224725")},
			{"/api/v1/gateway/request-qrcode", validCharge("ek-charge", "1")},
			{"/api/v1/gateway/refund", map[string]any{"payment_id": paid, "amount": json.Number("1")}},
		} {
			for name, values := range map[string][]string{"empty": {""}, "blank": {"   "}, "twice": {"k-1", "k-2"}} {
				req := b.request("POST", tc.path, tc.body, "application/json")
				for _, v := range values {
					req.Header.Add("Idempotency-Key", v)
				}
				r := b.exchange(b.http, req)
				require.Equal(t, http.StatusBadRequest, r.status, "%s %s: %s", tc.path, name, r.body)
				require.Equal(t, "Invalid request parameters", r.json["message"])
				require.Equal(t, "Bad Request", r.json["error"])
				details := r.json["details"].([]any)
				require.Len(t, details, 1)
				require.Equal(t, "Idempotency-Key", details[0].(map[string]any)["field"], "%s %s", tc.path, name)
			}
		}
		require.Equal(t, before, b.count(b.cred.ClientID), "nothing created")
		refunds, err := b.db.Refunds(t.Context(), paid)
		require.NoError(t, err)
		require.Empty(t, refunds)
	})
}
