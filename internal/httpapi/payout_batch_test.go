package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/internal/backoffice"
	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/store"
)

// batchItem is a payout body for a batch, with its own external_id.
func batchItem(ext, amount string) map[string]any {
	p := payout(amount, "EMAIL", "fornecedor@example.com")
	p["external_id"] = ext
	return p
}

func batchBody(ext string, items ...any) map[string]any {
	return map[string]any{"external_id": ext, "callbackUrl": "https://merchant.example.com/webhooks/batch", "items": items}
}

// batchItems returns the items of a batch answer.
func batchItems(t *testing.T, r response) []map[string]any {
	t.Helper()
	data := r.json["data"].(map[string]any)
	var out []map[string]any
	for _, it := range data["items"].([]any) {
		out = append(out, it.(map[string]any))
	}
	return out
}

// available reads the client's available balance in cents.
func (b *bundle) available() int64 {
	b.t.Helper()
	r := b.do("GET", "/api/v1/wallet/balance", nil)
	require.Equal(b.t, http.StatusOK, r.status, string(r.body))
	n, err := r.json["data"].(map[string]any)["available_cents"].(json.Number).Int64()
	require.NoError(b.t, err)
	return n
}

// TestBatchItemsEachOnTheirOwn: items are taken in order, each as its
// single request would be: a bad one and one that does not fit are
// REJECTED with their single request's error while the others are
// reserved; an external_id used by an earlier payout or an earlier item
// replays it with the same body and is refused with another.
func TestBatchItemsEachOnTheirOwn(t *testing.T) {
	t.Parallel()
	databases(t, func(t *testing.T, open func(t *testing.T) *store.DB) {
		b := setup(t, open, options{})
		b.fund("101.00") // 1.00 for the earlier payout, 100.00 for the batch
		single := batchItem("earlier-1", "1.00")
		r := b.do("POST", "/api/v1/gateway/pix-payment", single)
		require.Equal(t, http.StatusOK, r.status, string(r.body))
		earlier := r.json["transaction_id"].(string)

		badKey := batchItem("bad-key", "1.00")
		badKey["creditParty"] = map[string]any{"keyType": "CPF", "key": "123"}
		changed := batchItem("earlier-1", "2.00")
		r = b.do("POST", "/api/v1/gateway/pix-payments/batch", batchBody("batch-1",
			batchItem("a", "60.00"),                  // 0: fits (100 → 40)
			batchItem("b", "50.00"),                  // 1: does not fit
			batchItem("c", "40.00"),                  // 2: fits exactly (40 → 0)
			badKey,                                   // 3: 400 Invalid key format
			map[string]any{"amount": "x"},            // 4: 400
			single,                                   // 5: replays the earlier payout
			changed,                                  // 6: 422 mismatch
			batchItem("a", "60.00"),                  // 7: replays item 0
			batchItem("a", "61.00"),                  // 8: 422 mismatch with item 0
			map[string]any{"amount": 1, "AMOUNT": 2}, // 9: strict reading: 400
		))
		require.Equal(t, http.StatusAccepted, r.status, string(r.body))
		data := r.json["data"].(map[string]any)
		require.Equal(t, json.Number("10"), data["total"])
		items := batchItems(t, r)
		status := func(i int) string { return items[i]["status"].(string) }
		errOf := func(i int) map[string]any { e, _ := items[i]["error"].(map[string]any); return e }
		require.Equal(t, "PENDING", status(0))
		require.Equal(t, "REJECTED", status(1))
		require.Equal(t, map[string]any{"statusCode": json.Number("422"), "message": "Insufficient balance"}, errOf(1))
		require.Nil(t, items[1]["transaction_id"])
		require.Equal(t, "PENDING", status(2))
		require.Equal(t, map[string]any{"statusCode": json.Number("400"), "message": "Invalid key format"}, errOf(3))
		require.Equal(t, map[string]any{"statusCode": json.Number("400"), "message": "Invalid request parameters"}, errOf(4))
		require.Equal(t, "PENDING", status(5), items[5])
		require.Equal(t, earlier, items[5]["transaction_id"])
		require.Equal(t, map[string]any{"statusCode": json.Number("422"), "message": pix.MsgExternalIDMismatch}, errOf(6))
		require.Equal(t, items[0]["transaction_id"], items[7]["transaction_id"])
		require.Equal(t, map[string]any{"statusCode": json.Number("422"), "message": pix.MsgExternalIDMismatch}, errOf(8))
		require.Equal(t, map[string]any{"statusCode": json.Number("400"), "message": "Invalid request parameters"}, errOf(9))
		require.Equal(t, json.Number("4"), data["accepted"])
		require.Equal(t, json.Number("6"), data["rejected"])
		require.Zero(t, b.available(), "items 0 and 2 reserved, 1 refused")

		// GET reads the same batch with counts; another client's is 404.
		g := b.do("GET", "/api/v1/gateway/pix-payments/batch/"+data["batch_id"].(string), nil)
		require.Equal(t, http.StatusOK, g.status, string(g.body))
		counts := g.json["data"].(map[string]any)["counts"].(map[string]any)
		require.Equal(t, json.Number("4"), counts["PENDING"])
		require.Equal(t, json.Number("6"), counts["REJECTED"])
		other := b.otherClient()
		require.Equal(t, http.StatusNotFound, b.do("GET", "/api/v1/gateway/pix-payments/batch/"+data["batch_id"].(string), nil, other).status)
	})
}

// TestBatchIdempotent: the same batch body replays the first answer and
// creates nothing; another body with the same external_id is 422; the
// batches' external_ids are a namespace of their own.
func TestBatchIdempotent(t *testing.T) {
	t.Parallel()
	databases(t, func(t *testing.T, open func(t *testing.T) *store.DB) {
		b := setup(t, open, options{})
		b.fund("10.00")
		body := batchBody("same", batchItem("same", "1.00"), batchItem("i-2", "1.00"))
		first := b.do("POST", "/api/v1/gateway/pix-payments/batch", body)
		require.Equal(t, http.StatusAccepted, first.status, string(first.body)+b.logs.String())
		require.Empty(t, first.header.Get("Idempotent-Replayed"))
		avail := b.available()
		again := b.do("POST", "/api/v1/gateway/pix-payments/batch", body)
		require.Equal(t, http.StatusAccepted, again.status, string(again.body))
		require.Equal(t, "true", again.header.Get("Idempotent-Replayed"))
		require.JSONEq(t, string(first.body), string(again.body))
		require.Equal(t, avail, b.available(), "a replay reserves nothing")
		other := b.do("POST", "/api/v1/gateway/pix-payments/batch", batchBody("same", batchItem("i-3", "1.00")))
		require.Equal(t, http.StatusUnprocessableEntity, other.status, string(other.body))
		require.Equal(t, pix.MsgExternalIDMismatch, other.json["message"])
		// The item with the batch's own external_id is an ordinary payout.
		require.Equal(t, "PENDING", batchItems(t, first)[0]["status"])
	})
}

// TestBatchLimits: 1 to 1,000 items; the body may reach 1 MiB on this
// endpoint only (a single payout keeps 64 KiB).
func TestBatchLimits(t *testing.T) {
	t.Parallel()
	databases(t, func(t *testing.T, open func(t *testing.T) *store.DB) {
		b := setup(t, open, options{})
		b.fund("1000.00")
		r := b.do("POST", "/api/v1/gateway/pix-payments/batch", batchBody("none"))
		require.Equal(t, http.StatusBadRequest, r.status, string(r.body))
		many := make([]any, 1001)
		for i := range many {
			many[i] = batchItem(fmt.Sprint("m-", i), "0.01")
		}
		r = b.do("POST", "/api/v1/gateway/pix-payments/batch", batchBody("many", many...))
		require.Equal(t, http.StatusBadRequest, r.status, string(r.body))
		require.Equal(t, "items", r.json["details"].([]any)[0].(map[string]any)["field"])

		// 1,000 items with long descriptions: over 64 KiB, under 1 MiB.
		items := many[:1000]
		for _, it := range items {
			it.(map[string]any)["description"] = strings.Repeat("d", 140)
		}
		big := batchBody("big", items...)
		raw, err := json.Marshal(big)
		require.NoError(t, err)
		require.Greater(t, len(raw), 64<<10)
		start := time.Now()
		r = b.do("POST", "/api/v1/gateway/pix-payments/batch", big)
		t.Logf("%s: 1000 items accepted in %s", b.db.Dialect(), time.Since(start))
		require.Equal(t, http.StatusAccepted, r.status, string(r.body))
		require.Equal(t, json.Number("1000"), r.json["data"].(map[string]any)["accepted"])

		huge := batchBody("huge", batchItem("h", "0.01"))
		huge["padding"] = strings.Repeat("p", 1<<20)
		r = b.do("POST", "/api/v1/gateway/pix-payments/batch", huge)
		require.Equal(t, http.StatusRequestEntityTooLarge, r.status, string(r.body))
		single := batchItem("single", "0.01")
		single["padding"] = strings.Repeat("p", 64<<10)
		require.Equal(t, http.StatusRequestEntityTooLarge, b.do("POST", "/api/v1/gateway/pix-payment", single).status)
	})
}

// TestBatchCompletedOnce: pix.batch.completed is written once, when every
// accepted item is final, with the counts; each item sends its own event.
func TestBatchCompletedOnce(t *testing.T) {
	t.Parallel()
	databases(t, func(t *testing.T, open func(t *testing.T) *store.DB) {
		b := setup(t, open, options{})
		b.fund("10.00")
		failing := batchItem("f", "1.00")
		failing["creditParty"] = map[string]any{"name": "X", "keyType": "EMAIL", "key": "x@fail.sandbox"}
		r := b.do("POST", "/api/v1/gateway/pix-payments/batch", batchBody("done", batchItem("ok", "1.00"), failing, batchItem("no", "100.00")))
		require.Equal(t, http.StatusAccepted, r.status, string(r.body))
		id := r.json["data"].(map[string]any)["batch_id"].(string)
		ctx := context.Background()
		n, err := b.gw.Payouts().CompleteBatches(ctx, 10)
		require.NoError(t, err)
		require.Zero(t, n, "items still pending")
		b.settle()
		n, err = b.gw.Payouts().CompleteBatches(ctx, 10)
		require.NoError(t, err)
		require.Equal(t, 1, n)
		n, err = b.gw.Payouts().CompleteBatches(ctx, 10)
		require.NoError(t, err)
		require.Zero(t, n, "completed once")

		d := b.do("GET", "/api/v1/webhooks/deliveries?payment_id="+id, nil)
		require.Equal(t, http.StatusOK, d.status, string(d.body))
		events := d.json["data"].([]any)
		require.Len(t, events, 1)
		require.Equal(t, pix.EventBatchCompleted, events[0].(map[string]any)["event"])
		body := b.eventBody(id, pix.EventBatchCompleted)
		require.Equal(t, "COMPLETED", body["statusTransaction"])
		require.Equal(t, map[string]any{"PENDING": json.Number("0"), "SCHEDULED": json.Number("0"), "PAID": json.Number("1"), "CANCELLED": json.Number("1"), "REVERSED": json.Number("0"), "REJECTED": json.Number("1")}, body["counts"])
		ok := batchItems(t, r)[0]["transaction_id"].(string)
		require.Equal(t, pix.EventCashoutPaid, b.eventBody(ok, pix.EventCashoutPaid)["event"])
	})
}

// eventBody is the body of the one event of type event stored about id.
func (b *bundle) eventBody(id, event string) map[string]any {
	b.t.Helper()
	evs, err := b.db.Events(context.Background(), id)
	require.NoError(b.t, err)
	for _, e := range evs {
		if e.Type == event {
			var m map[string]any
			dec := json.NewDecoder(strings.NewReader(e.Payload))
			dec.UseNumber()
			require.NoError(b.t, dec.Decode(&m))
			return m
		}
	}
	b.t.Fatalf("no %s event about %s", event, id)
	return nil
}

// otherClient creates another client of the bundle's back office.
func (b *bundle) otherClient() backoffice.Credentials {
	b.t.Helper()
	c, err := b.bo.CreateClient(context.Background(), backoffice.ClientParams{Name: "other"})
	require.NoError(b.t, err)
	return c
}

// TestMeasureBatchAccept measures (BENCHMARKS.md, Batches of payouts) how
// long a batch of 1,000 payouts takes to be accepted through HTTP on each
// database, three batches each, when PIXGATE_MEASURE_BATCH is set; it
// asserts that all were accepted, never a time.
func TestMeasureBatchAccept(t *testing.T) {
	if os.Getenv("PIXGATE_MEASURE_BATCH") == "" {
		t.Skip("a measurement: set PIXGATE_MEASURE_BATCH=1")
	}
	databases(t, func(t *testing.T, open func(t *testing.T) *store.DB) {
		b := setup(t, open, options{})
		b.fund("100000.00")
		var took []time.Duration
		for run := range 3 {
			items := make([]any, 1000)
			for i := range items {
				items[i] = batchItem(fmt.Sprintf("m%d-%d", run, i), "1.00")
			}
			start := time.Now()
			r := b.do("POST", "/api/v1/gateway/pix-payments/batch", batchBody(fmt.Sprint("measure-", run), items...))
			took = append(took, time.Since(start))
			require.Equal(t, http.StatusAccepted, r.status, string(r.body))
			require.Equal(t, json.Number("1000"), r.json["data"].(map[string]any)["accepted"])
		}
		slices.Sort(took)
		t.Logf("%s: 1000-item batch accepted in %v (median %v)", b.db.Dialect(), took, took[1])
	})
}

// TestBatchTakenOverAfterACrash: a batch whose request died while
// accepting it answers 409 to a retry while its lease runs, and is taken
// over after: its items replay the payouts already created, nothing is
// reserved twice.
func TestBatchTakenOverAfterACrash(t *testing.T) {
	t.Parallel()
	databases(t, func(t *testing.T, open func(t *testing.T) *store.DB) {
		b := setup(t, open, options{})
		b.fund("10.00")
		body := batchBody("crash", batchItem("crash-1", "1.00"), batchItem("crash-2", "2.00"))
		first := b.do("POST", "/api/v1/gateway/pix-payments/batch", body)
		require.Equal(t, http.StatusAccepted, first.status, string(first.body))
		avail := b.available()
		id := first.json["data"].(map[string]any)["batch_id"].(string)
		// As if the request died after creating the payouts, before
		// recording the items, its lease still running.
		ctx := context.Background()
		lease := b.clock.Now().Add(time.Minute).UnixMilli()
		require.NoError(t, b.db.Write(ctx, func(tx *store.Tx) error {
			if err := store.RawExec(ctx, tx, `DELETE FROM payout_batch_items WHERE batch_id = $1`, id); err != nil {
				return err
			}
			return store.RawExec(ctx, tx, `UPDATE payout_batches SET state = 'accepting', lease_until = $2 WHERE id = $1`, id, lease)
		}))
		r := b.do("POST", "/api/v1/gateway/pix-payments/batch", body)
		require.Equal(t, http.StatusConflict, r.status, string(r.body))
		require.Equal(t, http.StatusNotFound, b.do("GET", "/api/v1/gateway/pix-payments/batch/"+id, nil).status)
		b.clock.Advance(2 * time.Minute)
		r = b.do("POST", "/api/v1/gateway/pix-payments/batch", body)
		require.Equal(t, http.StatusAccepted, r.status, string(r.body))
		require.Equal(t, id, r.json["data"].(map[string]any)["batch_id"])
		for i, it := range batchItems(t, r) {
			require.Equal(t, batchItems(t, first)[i]["transaction_id"], it["transaction_id"], "item %d replays its payout", i)
		}
		require.Equal(t, avail, b.available(), "nothing reserved twice")
	})
}
