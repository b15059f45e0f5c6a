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

// holds is a client's balance in centavos, MED's accounts included.
type holds struct{ available, pending, blocked, debt int64 }

func (b *bundle) holds(cred ...backoffice.Credentials) holds {
	b.t.Helper()
	r := b.do("GET", "/api/v1/wallet/balance", nil, cred...)
	require.Equal(b.t, http.StatusOK, r.status, string(r.body))
	d := r.json["data"].(map[string]any)
	n := func(k string) int64 {
		v, err := d[k].(json.Number).Int64()
		require.NoError(b.t, err, k)
		return v
	}
	return holds{n("available_cents"), n("pending_cents"), n("blocked_cents"), n("debt_cents")}
}

// dispute opens a sandbox dispute of charge id (body may be nil) and
// returns its data.
func (b *bundle) dispute(id string, body map[string]any) map[string]any {
	b.t.Helper()
	r := b.do("POST", "/api/v1/sandbox/charges/"+id+"/dispute", body)
	require.Equal(b.t, http.StatusOK, r.status, string(r.body))
	return r.json["data"].(map[string]any)
}

func (b *bundle) resolve(id string, body map[string]any) response {
	b.t.Helper()
	return b.do("POST", "/api/v1/sandbox/disputes/"+id+"/resolve", body)
}

// eventPayloads returns the payloads of the events about id of type typ.
func (b *bundle) eventPayloads(id, typ string) []map[string]any {
	b.t.Helper()
	evs, err := b.db.Events(context.Background(), id)
	require.NoError(b.t, err)
	var out []map[string]any
	for _, e := range evs {
		if e.Type != typ {
			continue
		}
		var m map[string]any
		require.NoError(b.t, json.Unmarshal([]byte(e.Payload), &m))
		out = append(out, m)
	}
	return out
}

// TestDisputeBlocksThenReleases: a dispute blocks the disputed amount at
// once, refunds are refused while it is open, and its release gives the
// block back, each with its event and statement movement.
func TestDisputeBlocksThenReleases(t *testing.T) {
	t.Parallel()
	databases(t, func(t *testing.T, open func(t *testing.T) *store.DB) {
		b := setup(t, open, options{})
		start := b.gw.Now()
		id := b.paidCharge("d-1", "100")
		require.Equal(t, holds{available: 10000}, b.holds())

		d := b.dispute(id, map[string]any{"amount": json.Number("40.00"), "reason": "OPERATIONAL_FAILURE"})
		require.Equal(t, "OPEN", d["status"])
		require.Equal(t, json.Number("40"), d["amount"])
		require.Equal(t, "OPERATIONAL_FAILURE", d["reason"])
		require.Nil(t, d["outcome"])
		require.Nil(t, d["defense"])
		require.Nil(t, d["closed_at"])
		require.Equal(t, holds{available: 6000, blocked: 4000}, b.holds())
		respondBy := apiTime(t, d["respond_by"])
		require.WithinDuration(t, b.gw.Now().Add(72*time.Hour), respondBy, time.Second)
		disputeID := d["dispute_id"].(string)
		require.Regexp(t, uuidV4, disputeID)

		r := b.refund(map[string]any{"payment_id": id, "amount": json.Number("1")}, "")
		require.Equal(t, http.StatusUnprocessableEntity, r.status, string(r.body))
		require.Equal(t, "Charge is under dispute", r.json["message"])

		opened := b.eventPayloads(id, pix.EventDisputeOpened)
		require.Len(t, opened, 1)
		require.Equal(t, disputeID, opened[0]["dispute_id"])
		require.Equal(t, id, opened[0]["payment_id"])
		require.Equal(t, 40.0, opened[0]["amount"])
		require.Equal(t, "OPERATIONAL_FAILURE", opened[0]["reason"])
		require.Equal(t, d["respond_by"], opened[0]["respond_by"])

		r = b.resolve(disputeID, map[string]any{"outcome": "released"})
		require.Equal(t, http.StatusOK, r.status, string(r.body))
		closed := r.json["data"].(map[string]any)
		require.Equal(t, "CLOSED", closed["status"])
		require.Equal(t, "released", closed["outcome"])
		require.NotNil(t, closed["closed_at"])
		require.Equal(t, holds{available: 10000}, b.holds())
		require.Equal(t, http.StatusUnprocessableEntity, b.resolve(disputeID, map[string]any{"outcome": "released"}).status)
		ev := b.eventPayloads(id, pix.EventDisputeClosed)
		require.Len(t, ev, 1)
		require.Equal(t, "released", ev[0]["outcome"])
		require.Equal(t, 0.0, ev[0]["returned_amount"])

		// Refunds are taken again once the dispute is closed.
		r = b.refund(map[string]any{"payment_id": id, "amount": json.Number("1")}, "")
		require.Equal(t, http.StatusOK, r.status, string(r.body))

		st := b.statement(start.Add(-time.Minute), b.gw.Now().Add(time.Minute))
		var types []string
		for _, m := range st.Data.Movements {
			types = append(types, m.Type)
		}
		require.Equal(t, []string{"charge", "dispute_block", "dispute_release", "refund"}, types)
	})
}

// TestMEDReturnTakesBlockThenAvailableThenDebt: a return larger than the
// block takes the rest from available and leaves a debt, which the next
// credit pays first; the charge's refunded_amount includes the return.
func TestMEDReturnTakesBlockThenAvailableThenDebt(t *testing.T) {
	t.Parallel()
	databases(t, func(t *testing.T, open func(t *testing.T) *store.DB) {
		b := setup(t, open, options{})
		first := b.paidCharge("m-1", "100")
		second := b.paidCharge("m-2", "50")
		// A payout takes most of the money: only 10.00 is available.
		r := b.do("POST", "/api/v1/gateway/pix-payment", payout("140.00", "CPF", "52998224725"))
		require.Equal(t, http.StatusOK, r.status, string(r.body))
		require.Equal(t, holds{available: 1000, pending: 14000}, b.holds())

		d := b.dispute(first, nil) // the whole 100.00; only 10.00 can be blocked
		require.Equal(t, json.Number("100"), d["amount"])
		require.Equal(t, holds{pending: 14000, blocked: 1000}, b.holds())

		r = b.resolve(d["dispute_id"].(string), map[string]any{"outcome": "returned", "amount": json.Number("60")})
		require.Equal(t, http.StatusOK, r.status, string(r.body))
		closed := r.json["data"].(map[string]any)
		require.Equal(t, "returned", closed["outcome"])
		require.Equal(t, json.Number("60"), closed["returned_amount"])
		require.Equal(t, holds{pending: 14000, debt: 5000}, b.holds(), "10.00 from the block, 50.00 owed")

		look := b.do("POST", "/api/v1/wallet/transaction", map[string]any{"payment_id": first})
		require.Equal(t, http.StatusOK, look.status, string(look.body))
		data := look.json["data"].(map[string]any)
		require.Equal(t, json.Number("60"), data["refunded_amount"])
		require.Equal(t, "PAID", data["status"])
		ds := data["disputes"].([]any)
		require.Len(t, ds, 1)
		require.Equal(t, "CLOSED", ds[0].(map[string]any)["status"])
		other := b.do("POST", "/api/v1/wallet/transaction", map[string]any{"payment_id": second})
		require.Equal(t, []any{}, other.json["data"].(map[string]any)["disputes"], "a charge without disputes lists none")

		// A second dispute with nothing available blocks nothing yet: the
		// next credit pays the debt first, then fills the block.
		d2 := b.dispute(second, map[string]any{"amount": json.Number("20")})
		require.Equal(t, holds{pending: 14000, debt: 5000}, b.holds())
		b.paidCharge("m-3", "100")
		require.Equal(t, holds{available: 3000, pending: 14000, blocked: 2000}, b.holds())
		r = b.do("GET", "/api/v1/gateway/disputes/"+d2["dispute_id"].(string), nil)
		require.Equal(t, http.StatusOK, r.status, string(r.body))

		// An unannounced MED return of the rest of the first charge.
		r = b.do("POST", "/api/v1/sandbox/charges/"+first+"/med-return", map[string]any{"natureza": "MED_OPERACIONAL"})
		require.Equal(t, http.StatusOK, r.status, string(r.body))
		ret := r.json["data"].(map[string]any)
		require.Equal(t, "CLOSED", ret["status"])
		require.Equal(t, "OPERATIONAL_FAILURE", ret["reason"])
		require.Equal(t, json.Number("40"), ret["returned_amount"])
		require.Equal(t, holds{pending: 14000, blocked: 2000, debt: 1000}, b.holds())
		look = b.do("POST", "/api/v1/wallet/transaction", map[string]any{"payment_id": first})
		require.Equal(t, "REFUNDED", look.json["data"].(map[string]any)["status"])
		require.Len(t, b.eventPayloads(first, pix.EventDisputeOpened), 1, "an unannounced return sends only its close")
		require.Len(t, b.eventPayloads(first, pix.EventDisputeClosed), 2)
		r = b.do("POST", "/api/v1/sandbox/charges/"+first+"/med-return", nil)
		require.Equal(t, http.StatusUnprocessableEntity, r.status, "nothing is left of the Pix")
		require.NoError(t, b.db.CheckLedger(context.Background()))
	})
}

// TestDisputeDefenseAndReads: one defense before the deadline; reads and
// lists only the client's own disputes; bad input is a 400 with details.
func TestDisputeDefenseAndReads(t *testing.T) {
	t.Parallel()
	databases(t, func(t *testing.T, open func(t *testing.T) *store.DB) {
		b := setup(t, open, options{})
		id := b.paidCharge("f-1", "10")
		d := b.dispute(id, nil)
		did := d["dispute_id"].(string)
		path := "/api/v1/gateway/disputes/" + did + "/defense"

		r := b.do("POST", path, map[string]any{"accept": "yes", "justification": ""})
		require.Equal(t, http.StatusBadRequest, r.status, string(r.body))
		require.Len(t, r.json["details"], 2)
		r = b.do("POST", path, map[string]any{"accept": false, "justification": "O cliente recebeu o produto"})
		require.Equal(t, http.StatusOK, r.status, string(r.body))
		def := r.json["data"].(map[string]any)["defense"].(map[string]any)
		require.Equal(t, false, def["accept"])
		require.Equal(t, "O cliente recebeu o produto", def["justification"])
		r = b.do("POST", path, map[string]any{"accept": true, "justification": "again"})
		require.Equal(t, http.StatusUnprocessableEntity, r.status)
		require.Equal(t, "Dispute already has a defense", r.json["message"])

		late := b.dispute(b.paidCharge("f-2", "10"), nil)
		b.advance("73h")
		r = b.do("POST", "/api/v1/gateway/disputes/"+late["dispute_id"].(string)+"/defense", map[string]any{"accept": true, "justification": "tarde"})
		require.Equal(t, http.StatusUnprocessableEntity, r.status)
		require.Equal(t, "The deadline to defend this dispute has passed", r.json["message"])

		r = b.do("GET", "/api/v1/gateway/disputes?status=OPEN&limit=1", nil)
		require.Equal(t, http.StatusOK, r.status, string(r.body))
		require.Len(t, r.json["data"], 1)
		require.Equal(t, late["dispute_id"], r.json["data"].([]any)[0].(map[string]any)["dispute_id"], "newest first")
		next := r.json["next_cursor"].(string)
		r = b.do("GET", "/api/v1/gateway/disputes?status=OPEN&limit=1&cursor="+next, nil)
		require.Equal(t, did, r.json["data"].([]any)[0].(map[string]any)["dispute_id"])
		require.Nil(t, r.json["next_cursor"])
		r = b.do("GET", "/api/v1/gateway/disputes?payment_id="+id, nil)
		require.Len(t, r.json["data"], 1)
		require.Equal(t, http.StatusBadRequest, b.do("GET", "/api/v1/gateway/disputes?status=WON", nil).status)
		require.Equal(t, http.StatusBadRequest, b.do("GET", "/api/v1/gateway/disputes?payment_id=x", nil).status)

		other, err := b.bo.CreateClient(context.Background(), backoffice.ClientParams{Name: "other"})
		require.NoError(t, err)
		require.Equal(t, http.StatusNotFound, b.do("GET", "/api/v1/gateway/disputes/"+did, nil, other).status)
		require.Equal(t, http.StatusNotFound, b.do("POST", path, map[string]any{"accept": true, "justification": "x"}, other).status)
		require.Equal(t, http.StatusNotFound, b.do("GET", "/api/v1/gateway/disputes/not-a-uuid", nil).status)
		r = b.do("GET", "/api/v1/gateway/disputes", nil, other)
		require.Equal(t, []any{}, r.json["data"])

		unpaid := b.createCharge("f-3", "10").json["payment_id"].(string)
		r = b.do("POST", "/api/v1/sandbox/charges/"+unpaid+"/dispute", nil)
		require.Equal(t, http.StatusUnprocessableEntity, r.status)
		require.Equal(t, "Charge is PENDING and cannot be disputed", r.json["message"])
		r = b.do("POST", "/api/v1/sandbox/charges/"+id+"/dispute", map[string]any{"amount": json.Number("10.01")})
		require.Equal(t, http.StatusUnprocessableEntity, r.status)
	})
}
