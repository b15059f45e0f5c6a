package sim

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/pspsim"
	"github.com/pixgate/pixgate/internal/store"
)

// MED in the workload: payers' banks contest received Pix (infractions,
// which the PSP then releases or accepts with a MED devolução), return
// some with no contest pixgate was told of, and merchants defend. The
// auditor then proves the books still equal the PSP's, blocks and debts
// included (auditDisputes).

// medNaturezas are the naturezas the workload's MED returns carry; ""
// is a PSP that gives none.
var medNaturezas = []string{"MED_FRAUDE", "MED_OPERACIONAL", "MED_PIX_AUTOMATICO", ""}

// paidPix looks up charge c as its merchant does and returns the end-to-end
// id of the Pix that paid it, when it is PAID: only money pixgate credited
// to a charge is contested here.
func (w *Workload) paidPix(ctx context.Context, c chargeRec) (string, bool) {
	body, _ := json.Marshal(map[string]string{"payment_id": c.id})
	status, _, b, err := w.api.Call(ctx, c.client, http.MethodPost, "/api/v1/wallet/transaction", nil, body)
	if err != nil || status != http.StatusOK {
		return "", false
	}
	var v struct {
		Data struct {
			Status     string  `json:"status"`
			EndToEndID *string `json:"end_to_end_id"`
		} `json:"data"`
	}
	if json.Unmarshal(b, &v) != nil || v.Data.Status != string(pix.StatusPaid) || v.Data.EndToEndID == nil {
		return "", false
	}
	return *v.Data.EndToEndID, true
}

// contest claims Pix e2e for one MED operation: a payer's bank contests
// a Pix once, by an infraction or by a return with none before it.
func (w *Workload) contest(e2e string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.contested[e2e] {
		return false
	}
	w.contested[e2e] = true
	return true
}

// medAmount is what a MED operation takes of a Pix of amount: all that is
// left (0) or a part.
func medAmount(o op, amount int64) int64 {
	if o.variant < 50 || amount < 2 {
		return 0
	}
	return 1 + int64(o.pick)%(amount-1)
}

// medReturn has the PSP return a credited Pix by MED with no contest
// before it (the PSP refuses when nothing is left: nothing happens).
func (w *Workload) medReturn(ctx context.Context, o op) {
	c, ok := w.pickCharge(o)
	if !ok {
		return
	}
	e2e, ok := w.paidPix(ctx, c)
	if !ok || !w.contest(e2e) {
		return
	}
	_, _ = w.psp.MEDReturn(e2e, medAmount(o, c.amount), medNaturezas[o.variant%len(medNaturezas)])
}

// infraction has the payer's bank contest a credited Pix, once per Pix.
func (w *Workload) infraction(ctx context.Context, o op) {
	c, ok := w.pickCharge(o)
	if !ok {
		return
	}
	e2e, ok := w.paidPix(ctx, c)
	if !ok || !w.contest(e2e) {
		return
	}
	// Some deadlines pass during the run, so late defenses are refused.
	respondBy := time.Now().Add(72 * time.Hour)
	if o.variant < 20 {
		respondBy = time.Now().Add(2 * time.Second)
	}
	id, err := w.psp.OpenInfraction(e2e, medAmount(o, c.amount), medNaturezas[o.variant%3], respondBy)
	if err != nil {
		return
	}
	w.mu.Lock()
	w.infractions = append(w.infractions, id)
	w.mu.Unlock()
}

// decideInfraction has the PSP decide an open infraction: released, or
// accepted and returned (all or part).
func (w *Workload) decideInfraction(o op) {
	w.mu.Lock()
	if len(w.infractions) == 0 {
		w.mu.Unlock()
		return
	}
	id := w.infractions[o.pick%len(w.infractions)]
	w.mu.Unlock()
	if o.variant < 50 {
		_ = w.psp.ReleaseInfraction(id) // refused once decided: nothing happens
		return
	}
	valor := int64(0)
	if o.variant >= 80 {
		valor = 1 + int64(o.pick%500)
	}
	_, _ = w.psp.AcceptInfraction(id, valor)
}

// defend has a merchant answer one of its open disputes, as its back
// office would: 200, or 422 when it closed, was answered or its deadline
// passed meanwhile, or 503 when the PSP could not take it now.
func (w *Workload) defend(ctx context.Context, o op) {
	status, _, b, err := w.api.Call(ctx, o.client, http.MethodGet, "/api/v1/gateway/disputes?status=OPEN&limit=10", nil, nil)
	if err != nil || status >= 500 {
		return
	}
	if status != http.StatusOK {
		w.issue("GET disputes answered %d: %s", status, b)
		return
	}
	var page struct {
		Data []struct {
			ID string `json:"dispute_id"`
		} `json:"data"`
	}
	if json.Unmarshal(b, &page) != nil || len(page.Data) == 0 {
		return
	}
	id := page.Data[o.pick%len(page.Data)].ID
	body, _ := json.Marshal(map[string]any{"accept": o.variant < 30, "justification": fmt.Sprintf("Entrega comprovada, pedido %d", o.n)})
	status, _, b, err = w.api.Call(ctx, o.client, http.MethodPost, "/api/v1/gateway/disputes/"+id+"/defense", nil, body)
	if err != nil || status >= 500 {
		return
	}
	if status != http.StatusOK && status != http.StatusUnprocessableEntity {
		w.issue("POST defense of dispute %s answered %d: %s", id, status, b)
	}
}

// medFacts are the PSP's MED returns (devoluções no refund or return of
// pixgate's names) and its infractions, as the auditor reads them.
type medFacts struct {
	// Returns are the MED devoluções by their id (lower case), with the
	// Pix they return.
	Returns map[string]medReturnFact
	// Infractions are the PSP's infractions.
	Infractions []pspsim.InfractionFact
}

type medReturnFact struct {
	E2E    string
	Valor  pix.Amount
	Status string
}

// medFactsOf separates, among the devoluções of the Pix that charges hold,
// the ones pixgate did not send: what refunds and unmatched returns name
// is pixgate's.
func medFactsOf(b books, psp pspFacts, st pspsim.State) medFacts {
	ours := map[string]bool{}
	for _, r := range b.Refunds {
		ours[hexID(r.ID)] = true
	}
	for _, u := range b.Unmatched {
		if u.ReturnID != "" {
			ours[hexID(u.ReturnID)] = true
		}
	}
	charged := map[string]bool{}
	for _, t := range b.Txs {
		if t.Type == pix.TypeCashin && t.EndToEndID != "" {
			charged[t.EndToEndID] = true
		}
	}
	// Only a charge's Pix: a devolução of an unmatched receipt's that is
	// not its return is auditOnce's to report.
	f := medFacts{Returns: map[string]medReturnFact{}, Infractions: st.Infractions}
	for _, p := range psp.Pix {
		if !charged[p.E2E] {
			continue
		}
		for _, d := range p.Devolucoes {
			if !ours[d.ID] {
				f.Returns[d.ID] = medReturnFact{E2E: p.E2E, Valor: d.Valor, Status: d.Status}
			}
		}
	}
	return f
}

// auditDisputes: every MED return the PSP made is recorded as exactly one
// returned dispute of its charge for its valor, and no dispute returns what
// the PSP did not; every infraction open at the PSP holds an OPEN dispute
// and every released one none; each client's blocked account holds what
// its OPEN disputes block, and a CLOSED dispute blocks nothing.
func auditDisputes(b books, f medFacts) Check {
	c := Check{Name: checkDisputes}
	bad := func(format string, args ...any) { c.Violations = append(c.Violations, fmt.Sprintf(format, args...)) }
	tx := b.txByID()
	byReturn := map[string][]pix.Dispute{}
	byInfraction := map[string][]pix.Dispute{}
	blocked := map[string]pix.Amount{}
	for _, d := range b.Disputes {
		c.Checked++
		if d.ReturnID != "" {
			byReturn[strings.ToLower(d.ReturnID)] = append(byReturn[strings.ToLower(d.ReturnID)], d)
		}
		if d.PSPID != "" {
			byInfraction[d.PSPID] = append(byInfraction[d.PSPID], d)
		}
		switch {
		case d.Status == pix.DisputeOpen:
			blocked[d.ClientID] += d.Blocked
		case d.Blocked != 0:
			bad("dispute %s is CLOSED and still blocks %s", d.ID, d.Blocked)
		}
		if d.Status == pix.DisputeClosed && d.Outcome == pix.OutcomeReturned && d.ReturnID == "" {
			bad("dispute %s is returned by no devolução of the PSP's", d.ID)
		}
	}
	for id, r := range f.Returns {
		c.Checked++
		ds := byReturn[id]
		if r.Status != pspsim.Devolvido {
			if len(ds) > 0 {
				bad("dispute %s is returned by devolução %s, which the PSP left %s", ds[0].ID, id, r.Status)
			}
			continue
		}
		if len(ds) != 1 {
			bad("the PSP returned %s of Pix %s by MED (devolução %s); %d disputes record it", r.Valor, r.E2E, id, len(ds))
			continue
		}
		d := ds[0]
		if t := tx[d.PaymentID]; t == nil || t.EndToEndID != r.E2E {
			bad("dispute %s records devolução %s of Pix %s on another charge", d.ID, id, r.E2E)
		}
		if d.Status != pix.DisputeClosed || d.Outcome != pix.OutcomeReturned || d.ReturnedAmount != r.Valor {
			bad("dispute %s is %s %s returning %s; the PSP returned %s by devolução %s", d.ID, d.Status, d.Outcome, d.ReturnedAmount, r.Valor, id)
		}
	}
	for id, ds := range byReturn {
		if _, ok := f.Returns[id]; !ok {
			bad("dispute %s names devolução %s, which the PSP does not hold as a MED return", ds[0].ID, id)
		}
	}
	for _, inf := range f.Infractions {
		c.Checked++
		ds := byInfraction[inf.ID]
		open := 0
		for _, d := range ds {
			if d.Status == pix.DisputeOpen {
				open++
			}
		}
		switch infractionState(inf) {
		case "open":
			if len(ds) == 0 && nothingLeft(b, inf.EndToEndID) {
				continue // a contest of money already refunded blocks nothing
			}
			if len(ds) != 1 || open != 1 {
				bad("infraction %s is open at the PSP; %d disputes record it, %d of them OPEN", inf.ID, len(ds), open)
			}
		case "released":
			if open != 0 || len(ds) > 1 || (len(ds) == 1 && ds[0].Outcome != pix.OutcomeReleased) {
				bad("infraction %s was released at the PSP; its disputes: %s", inf.ID, describeDisputes(ds))
			}
		default: // accepted: its devolução closes it
			if len(ds) != 1 || open != 0 || ds[0].Outcome != pix.OutcomeReturned {
				bad("infraction %s was accepted at the PSP; its disputes: %s", inf.ID, describeDisputes(ds))
			}
		}
	}
	for client, want := range blocked {
		c.Checked++
		if got := b.Blocked[client]; got != want {
			bad("client %s's blocked account holds %s; its OPEN disputes block %s", client, got, want)
		}
	}
	for client, got := range b.Blocked {
		if _, ok := blocked[client]; !ok && got != 0 {
			bad("client %s's blocked account holds %s with no OPEN dispute", client, got)
		}
	}
	return c
}

// infractionState is where infraction inf stands for pixgate: open,
// released (the contest failed or was withdrawn) or accepted.
func infractionState(inf pspsim.InfractionFact) string {
	switch inf.Status {
	case pspsim.InfracaoAberta, pspsim.InfracaoEmDefesa:
		return "open"
	case pspsim.InfracaoAceita:
		return "accepted"
	}
	return "released"
}

// nothingLeft reports whether the charge Pix e2e credited was refunded
// whole: a contest of it has nothing to block.
func nothingLeft(b books, e2e string) bool {
	for _, t := range b.Txs {
		if t.Type == pix.TypeCashin && t.EndToEndID == e2e {
			return t.Left() <= 0
		}
	}
	return false
}

func describeDisputes(ds []pix.Dispute) string {
	if len(ds) == 0 {
		return "none"
	}
	parts := make([]string, len(ds))
	for i, d := range ds {
		parts[i] = fmt.Sprintf("%s %s %s", d.ID, d.Status, d.Outcome)
	}
	return strings.Join(parts, ", ")
}

// medBooks reads what medFactsOf and medMoving need of the books.
func medBooks(ctx context.Context, db *store.DB, txs []pix.Transaction) (books, error) {
	b := books{Txs: txs}
	var err error
	if b.Refunds, err = db.AllRefunds(ctx); err != nil {
		return b, err
	}
	if b.Unmatched, err = db.AllUnmatched(ctx); err != nil {
		return b, err
	}
	b.Disputes, err = db.AllDisputes(ctx)
	return b, err
}

// medMoving says what of MED is still to be read: a MED return the PSP
// made that no dispute records, and an infraction open at the PSP that no
// OPEN dispute holds (or a decided one whose dispute is still OPEN).
func medMoving(b books, f medFacts) []string {
	recorded := map[string]bool{}
	open := map[string]bool{}
	for _, d := range b.Disputes {
		if d.ReturnID != "" {
			recorded[strings.ToLower(d.ReturnID)] = true
		}
		if d.PSPID != "" && d.Status == pix.DisputeOpen {
			open[d.PSPID] = true
		}
	}
	var returns, infractions int
	for id, r := range f.Returns {
		if r.Status == pspsim.Devolvido && !recorded[id] {
			returns++
		}
	}
	for _, inf := range f.Infractions {
		if (infractionState(inf) == "open") != open[inf.ID] && !nothingLeft(b, inf.EndToEndID) {
			infractions++
		}
	}
	var out []string
	if returns > 0 {
		out = append(out, fmt.Sprintf("%d MED returns not yet in the books", returns))
	}
	if infractions > 0 {
		out = append(out, fmt.Sprintf("%d infractions not yet read", infractions))
	}
	return out
}
