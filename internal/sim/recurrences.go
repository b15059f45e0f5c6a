package sim

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"
)

// The workload's Pix Automático: merchants create recurrences (journey 2,
// or journey 3 with a first payment), payers approve, reject or cancel
// them at their bank, the payer's bank debits or fails the cycle charges
// pixgate's cycle job created, and merchants cancel.

// recRec is a recurrence the workload created: pixgate's id and the PSP's.
type recRec struct {
	client int
	id     string
	idRec  string
}

// saoPaulo is the calendar recurrences' dates follow (UTC−3, no daylight
// saving time since 2019).
var saoPaulo = time.FixedZone("America/Sao_Paulo", -3*3600)

// recurrence creates a recurrence whose first cycle falls 3 to 9 days from
// today (a day inside pixgate's 2-day minimum and 10-day charge window,
// so a run across midnight stays valid), so that its first cycle's charge
// is created as soon as its approval is read; weekly ones starting 3 days
// out get a second cycle within the window too.
func (w *Workload) recurrence(ctx context.Context, o op) {
	ext := fmt.Sprintf("sim-rec-%d", o.n)
	start := time.Now().In(saoPaulo).AddDate(0, 0, 3+(o.pick>>8)%7)
	frequency := "MONTHLY"
	if (o.pick>>4)%10 < 3 {
		frequency = "WEEKLY"
	}
	retry := "NONE"
	if (o.pick>>16)%2 == 0 {
		retry = "THREE_IN_SEVEN_DAYS"
	}
	m := map[string]any{"external_id": ext, "payer": map[string]any{"name": "Maria Souza", "document": "52998224725"},
		"contract": "contrato-" + ext, "description": "Assinatura " + ext, "frequency": frequency,
		"start_date": start.Format("2006-01-02"), "amount": reais(o.amount), "retry": retry, "postbackUrl": w.hookURL(o.client)}
	if (o.pick>>12)%4 == 0 {
		m["end_date"] = m["start_date"] // a single cycle: FINISHED once it is paid
	}
	if o.variant < 30 {
		m["first_payment"] = reais(1 + o.amount/2) // journey 3
	}
	header := map[string]string{}
	if o.variant%2 == 0 {
		header["Idempotency-Key"] = ext
	}
	body, _ := json.Marshal(m)
	rec := w.create(ctx, o, "recurrence", "/api/v1/gateway/recurrences", header, ext, body)
	if rec.Status != http.StatusCreated {
		return
	}
	var v struct {
		QRCode string `json:"qrcode"`
	}
	_ = json.Unmarshal(rec.Response, &v)
	idRec := w.psp.RecIDOf(v.QRCode)
	if idRec == "" {
		w.issue("recurrence %s: its qrcode carries no recurrence's location at the PSP", rec.ID)
		return
	}
	w.mu.Lock()
	w.recs = append(w.recs, recRec{client: o.client, id: rec.ID, idRec: idRec})
	w.mu.Unlock()
}

// pickRec resolves o.pick among the recurrences created so far: half the
// time among the last three, so that a recurrence is approved, debited
// and cancelled while the run still goes on.
func (w *Workload) pickRec(o op) (recRec, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := len(w.recs)
	if n == 0 {
		return recRec{}, false
	}
	if o.variant < 50 && n > 3 {
		return w.recs[n-3+o.pick%3], true
	}
	return w.recs[o.pick%n], true
}

// payerAnswers has the payer approve, reject or cancel a recurrence at
// their bank; one that cannot move so is refused and nothing happens.
func (w *Workload) payerAnswers(ctx context.Context, o op) {
	r, ok := w.pickRec(o)
	if !ok {
		return
	}
	switch o.kind {
	case "rec_approve":
		_, _ = w.psp.ApproveRec(ctx, r.idRec)
	case "rec_reject":
		_ = w.psp.RejectRec(ctx, r.idRec)
	default:
		_ = w.psp.CancelRecByPayer(ctx, r.idRec)
	}
}

// cancelRecurrence has the merchant cancel a recurrence: 200, or 422 when
// it is already final.
func (w *Workload) cancelRecurrence(ctx context.Context, o op) {
	r, ok := w.pickRec(o)
	if !ok {
		return
	}
	path := "/api/v1/gateway/recurrences/" + r.id + "/cancel"
	status, b, err := w.api.CallRetrying(ctx, 8, r.client, http.MethodPost, path, nil, nil)
	if err != nil || retryable(status, nil) {
		return
	}
	if status != http.StatusOK && status != http.StatusUnprocessableEntity {
		w.issue("POST %s answered %d: %s", path, status, b)
	}
}

// debit has the payer's bank debit (or fail to debit) one of a
// recurrence's cycle charges now; one with no attempt scheduled is
// refused and nothing happens.
func (w *Workload) debit(ctx context.Context, o op) {
	r, ok := w.pickRec(o)
	if !ok {
		return
	}
	txids := w.psp.CobRsOf(r.idRec)
	if len(txids) == 0 {
		return
	}
	txid := txids[(o.pick>>3)%len(txids)]
	if o.kind == "cycle_fail" {
		_ = w.psp.FailCobR(ctx, txid)
		return
	}
	_, _ = w.psp.DebitCobR(ctx, txid)
}
