package sim

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/pixgate/pixgate/internal/pix"
)

// Scheduled and batch payouts (docs/payouts.md). The simulation runs
// production, where a scheduled payout starts only at its day in São
// Paulo: the workload schedules payouts for tomorrow and cancels some, and
// the auditor proves the cancelled and the still waiting ones were never
// sent (auditFinal) and the events each wrote (auditReported). Batches
// mix payouts that settle, fail at the PSP, do not fit and wait for
// tomorrow; their items are ordinary payouts, each sent at most once
// (auditOnce).

// tomorrow is the São Paulo date after today.
func tomorrow() string {
	return time.Now().In(time.FixedZone("BRT", -3*60*60)).AddDate(0, 0, 1).Format(pix.DateLayout)
}

// payoutBody is a payout request of the workload: key names it; variant
// below 12 sends it to a key the PSP does not carry out.
func (w *Workload) payoutBody(o op, key string, amount int64, variant int) map[string]any {
	beneficiary := fmt.Sprintf("%s@example.com", key)
	if variant < 12 {
		beneficiary = fmt.Sprintf("%s@fail.psp", key)
	}
	return map[string]any{"amount": reais(amount), "description": "Pagamento " + key, "callbackUrl": w.hookURL(o.client),
		"creditParty": map[string]any{"name": "Fornecedor Ltda", "keyType": "EMAIL", "key": beneficiary}, "external_id": key}
}

// scheduledPayout schedules a payout for tomorrow and, for half of them,
// cancels it at once (and again, which must be refused).
func (w *Workload) scheduledPayout(ctx context.Context, o op) {
	key := fmt.Sprintf("sim-sched-%d", o.n)
	m := w.payoutBody(o, key, o.amount, 50)
	m["scheduled_date"] = tomorrow()
	body, _ := json.Marshal(m)
	rec := w.create(ctx, o, "payout", "/api/v1/gateway/pix-payment", map[string]string{"Idempotency-Key": key}, key, body)
	if rec.Status != http.StatusOK || rec.ID == "" || o.variant >= 50 {
		return
	}
	path := "/api/v1/gateway/pix-payment/" + rec.ID + "/cancel"
	status, b, err := w.api.CallRetrying(ctx, 8, o.client, http.MethodPost, path, nil, nil)
	if err != nil || retryable(status, nil) {
		return
	}
	if status != http.StatusOK && status != http.StatusUnprocessableEntity {
		w.issue("cancel of scheduled payout %s answered %d %s", rec.ID, status, b)
		return
	}
	if status, b, err := w.api.CallRetrying(ctx, 8, o.client, http.MethodPost, path, nil, nil); err == nil && !retryable(status, nil) &&
		status != http.StatusUnprocessableEntity {
		w.issue("second cancel of scheduled payout %s answered %d %s", rec.ID, status, b)
	}
}

// payoutBatch sends a batch of 2 to 9 payouts (one of them for tomorrow
// when variant says so), then sends it again: the same answer, replayed.
func (w *Workload) payoutBatch(ctx context.Context, o op) {
	ext := fmt.Sprintf("sim-batch-%d", o.n)
	n := 2 + o.pick%8
	items := make([]any, n)
	for i := range items {
		key := fmt.Sprintf("%s-%d", ext, i)
		item := w.payoutBody(o, key, 1+(o.amount*int64(i+1))%3000, (o.variant+i*37)%100)
		if i == 0 && o.variant%3 == 0 {
			item["scheduled_date"] = tomorrow()
		}
		items[i] = item
	}
	body, _ := json.Marshal(map[string]any{"external_id": ext, "callbackUrl": w.hookURL(o.client), "items": items})
	const path = "/api/v1/gateway/pix-payments/batch"
	status, first, err := w.api.CallRetrying(ctx, 8, o.client, http.MethodPost, path, nil, body)
	if err != nil || retryable(status, nil) {
		return
	}
	if status != http.StatusAccepted {
		w.issue("batch %s answered %d %s", ext, status, first)
		return
	}
	again, second, err := w.api.CallRetrying(ctx, 8, o.client, http.MethodPost, path, nil, body)
	if err == nil && !retryable(again, nil) && (again != status || !sameJSON(first, second)) {
		w.issue("batch %s replayed %d %s, first answered %d %s", ext, again, second, status, first)
	}
}
