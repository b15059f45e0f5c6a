package httpapi_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/internal/backoffice"
	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/pspsim"
	"github.com/pixgate/pixgate/internal/store"
)

func cancelPath(id string) string { return "/api/v1/gateway/charges/" + id + "/cancel" }

// requireCancelled checks a 200 cancel answer: the charge as lookup shows
// it, CANCELLED, with one pix.cashin.cancelled event.
func requireCancelled(t *testing.T, b *bundle, r response, id string) {
	t.Helper()
	require.Equal(t, http.StatusOK, r.status, string(r.body))
	data := r.json["data"].(map[string]any)
	require.Equal(t, "CANCELLED", data["status"])
	require.Equal(t, id, data["payment_id"])
	look := b.lookup(id)
	require.Equal(t, []any{}, look["disputes"], "an unpaid charge has no disputes")
	delete(look, "disputes") // the lookup's only: the cancel's answer lists none
	require.Equal(t, look, data, "data as lookup shows it")
	n := 0
	for _, e := range b.eventTypes(id) {
		if e == pix.EventCashinCancelled {
			n++
		}
	}
	require.Equal(t, 1, n, "one pix.cashin.cancelled")
}

// TestCancelCharge: a client cancels its PENDING charge; it is then
// CANCELLED (and cannot be paid), with pix.cashin.cancelled sent once; a
// charge that is not PENDING, or that belongs to a recurrence, is a 422;
// another client's or an unknown one is a 404. On both databases.
func TestCancelCharge(t *testing.T) {
	t.Parallel()
	databases(t, func(t *testing.T, open func(t *testing.T) *store.DB) {
		b := setup(t, open, options{start: spNoon(t, "2026-12-01")})
		ctx := context.Background()
		id := b.createCharge("cancel-1", "10").json["payment_id"].(string)
		r := b.do("POST", cancelPath(id), nil)
		requireCancelled(t, b, r, id)
		require.Equal(t, json422(t, b.do("POST", cancelPath(id), nil)), "Charge is CANCELLED and can no longer be cancelled")
		require.Equal(t, http.StatusUnprocessableEntity, b.do("POST", "/api/v1/sandbox/charges/"+id+"/pay", nil).status,
			"a cancelled charge cannot be paid")
		requireCancelled(t, b, b.do("POST", "/api/v1/sandbox/charges/"+id+"/expire", nil), id)

		paid := b.paidCharge("cancel-paid", "10")
		require.Equal(t, json422(t, b.do("POST", cancelPath(paid), nil)), "Charge is PAID and can no longer be cancelled")
		require.Equal(t, "PAID", b.lookup(paid)["status"])

		// Another client's charge, and ids that name no charge.
		other, err := b.bo.CreateClient(ctx, backoffice.ClientParams{Name: "other"})
		require.NoError(t, err)
		pending := b.createCharge("cancel-2", "10").json["payment_id"].(string)
		for _, r := range []response{
			b.do("POST", cancelPath(pending), nil, other),
			b.do("POST", cancelPath("3f1c2a9e-7b4d-4c21-9a6e-2d8f5b7c1e04"), nil),
			b.do("POST", cancelPath("not-an-id"), nil),
		} {
			require.Equal(t, http.StatusNotFound, r.status, string(r.body))
			require.Equal(t, "Charge not found", r.json["message"])
		}
		require.Equal(t, "PENDING", b.lookup(pending)["status"], "another client cannot cancel it")
		require.Empty(t, b.eventTypes(pending))

		// A cycle charge of a recurrence is cancelled with its recurrence.
		rec := b.do("POST", "/api/v1/gateway/recurrences", validRecurrence("cancel-rec"))
		require.Equal(t, http.StatusCreated, rec.status, string(rec.body))
		recID := rec.json["recurrence_id"].(string)
		require.Equal(t, http.StatusOK, b.do("POST", "/api/v1/sandbox/recurrences/"+recID+"/approve", nil).status)
		cyc := b.do("POST", "/api/v1/sandbox/recurrences/"+recID+"/next-cycle", nil)
		require.Equal(t, http.StatusOK, cyc.status, string(cyc.body))
		cycleID := cyc.json["payment_id"].(string)
		require.Contains(t, json422(t, b.do("POST", cancelPath(cycleID), nil)), "/api/v1/gateway/recurrences/{recurrence_id}/cancel")
		require.Equal(t, "PENDING", b.lookup(cycleID)["status"])
	})
}

// json422 requires a 422 in the gateway error shape and returns its message.
func json422(t *testing.T, r response) string {
	t.Helper()
	require.Equal(t, http.StatusUnprocessableEntity, r.status, string(r.body))
	require.Equal(t, "Unprocessable Entity", r.json["error"])
	return r.json["message"].(string)
}

// TestCancelChargeAtThePSP: with a PSP, the cob is removed there
// (REMOVIDA_PELO_USUARIO_RECEBEDOR) before the charge is CANCELLED, so the
// payer can no longer pay it; a payment that reached the PSP first wins
// (even when its webhook was lost): the charge is credited, PAID, and the
// cancel answers 422; a PSP that does not answer is a 502 and changes
// nothing. On both databases.
func TestCancelChargeAtThePSP(t *testing.T) {
	t.Parallel()
	databases(t, func(t *testing.T, open func(t *testing.T) *store.DB) {
		b, sim := setupPSP(t, open)
		ctx := context.Background()
		c, err := b.gw.Authenticate(ctx, b.cred.ClientID, b.cred.ClientSecret)
		require.NoError(t, err)
		cobStatus := func(txid string) string {
			for _, cob := range sim.State().Cobs {
				if cob.TxID == txid {
					return cob.Status
				}
			}
			return ""
		}
		txidOf := func(id string) string {
			ch, err := b.gw.Charge(ctx, c, id)
			require.NoError(t, err)
			return ch.TxID
		}

		id := b.createCharge("psp-cancel-1", "10").json["payment_id"].(string)
		txid := txidOf(id)
		require.Equal(t, pspsim.CobAtiva, cobStatus(txid))
		requireCancelled(t, b, b.do("POST", cancelPath(id), nil), id)
		require.Equal(t, pspsim.CobRemovidaUR, cobStatus(txid), "the cob is removed at the PSP")
		_, err = sim.Pay(ctx, txid)
		require.ErrorIs(t, err, pspsim.ErrNotPayable, "no payer can pay it any more")

		// The payer pays first; the PSP's webhook is lost, so only the
		// cancel's reading of the cob learns of it.
		id = b.createCharge("psp-cancel-2", "10").json["payment_id"].(string)
		txid = txidOf(id)
		sim.LoseWebhooks(1)
		_, err = sim.Pay(ctx, txid)
		require.NoError(t, err)
		require.Equal(t, "PENDING", b.lookup(id)["status"])
		require.Equal(t, "Charge is PAID and can no longer be cancelled", json422(t, b.do("POST", cancelPath(id), nil)))
		require.Equal(t, "PAID", b.lookup(id)["status"], "the payment wins")
		require.NotContains(t, b.eventTypes(id), pix.EventCashinCancelled)
		bal, err := b.gw.Balance(ctx, c)
		require.NoError(t, err)
		require.Equal(t, pix.Amount(1000), bal.Available)

		// The PSP does not answer: 502, the charge and the cob unchanged.
		id = b.createCharge("psp-cancel-3", "10").json["payment_id"].(string)
		sim.SetDown(true)
		r := b.do("POST", cancelPath(id), nil)
		sim.SetDown(false)
		require.Equal(t, http.StatusBadGateway, r.status, string(r.body))
		require.Equal(t, "PENDING", b.lookup(id)["status"])
		require.Equal(t, pspsim.CobAtiva, cobStatus(txidOf(id)))
		requireCancelled(t, b, b.do("POST", cancelPath(id), nil), id)
	})
}
