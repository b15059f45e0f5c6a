package sim

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/pspsim"
	"github.com/pixgate/pixgate/internal/store"
)

// The auditor's Pix Automático: pixgate's recurrences and their cycles'
// charges against the PSP's recurrences (rec) and cycle charges (cobr).

// Names of the recurrence checks.
const (
	checkCycles    = "each cycle charged once, as one cobr at the PSP"
	checkCycleMove = "cycle charges paid exactly when the PSP debited"
	checkRecStatus = "recurrences as the PSP says"
)

// recBooks are pixgate's recurrences and their cycles' charges.
type recBooks struct {
	Recs   []pix.Recurrence
	Cycles map[string][]pix.CycleCharge // by recurrence id
}

// readRecBooks reads every recurrence, newest first, and its cycles.
func readRecBooks(ctx context.Context, db *store.DB) (recBooks, error) {
	rb := recBooks{Cycles: map[string][]pix.CycleCharge{}}
	cursor := ""
	for {
		page, next, err := db.RecurrenceHistory(ctx, store.RecurrenceFilter{Cursor: cursor, Limit: 500})
		if err != nil {
			return rb, err
		}
		for _, r := range page {
			cycles, err := db.CycleCharges(ctx, r.ID)
			if err != nil {
				return rb, err
			}
			rb.Recs = append(rb.Recs, r)
			rb.Cycles[r.ID] = cycles
		}
		if next == "" {
			return rb, nil
		}
		cursor = next
	}
}

// pspCobR is a cycle charge at the PSP, as the auditor reads it.
type pspCobR struct {
	TxID, IDRec, Due, Status string
	Valor                    pix.Amount
	Attempts, Failed         int
	Pix                      []string
}

// recFacts reads the PSP's recurrences (by idRec) and cycle charges.
func recFactsOf(st pspsim.State, f *pspFacts) {
	f.Recs = map[string]pspsim.RecFact{}
	for _, r := range st.Recs {
		f.Recs[r.IDRec] = r
	}
	for _, c := range st.CobRs {
		a, err := pix.ParseAmountString(c.Valor)
		if err != nil {
			f.Problems = append(f.Problems, fmt.Sprintf("cobr %s has valor %q", c.TxID, c.Valor))
		}
		f.CobRs = append(f.CobRs, pspCobR{TxID: strings.ToLower(c.TxID), IDRec: c.IDRec, Due: c.Vencimento, Status: c.Status,
			Valor: a, Attempts: c.Attempts, Failed: c.Failed, Pix: c.Pix})
	}
}

// cobrsByTxID indexes the PSP's cycle charges; a txid the PSP holds twice
// keeps its first.
func (f pspFacts) cobrsByTxID() map[string]*pspCobR {
	m := make(map[string]*pspCobR, len(f.CobRs))
	for i := range f.CobRs {
		if m[f.CobRs[i].TxID] == nil {
			m[f.CobRs[i].TxID] = &f.CobRs[i]
		}
	}
	return m
}

// recStatusAtPSP is what the PSP may say of a recurrence in status s:
// FINISHED stays APROVADA there (the PSP has no end of calendar), or is
// CANCELADA by a payer who cancelled after the last cycle was paid.
func recStatusAtPSP(s pix.RecurrenceStatus) []string {
	switch s {
	case pix.RecurrenceCreated:
		return []string{pspsim.RecCriada}
	case pix.RecurrenceApproved:
		return []string{pspsim.RecAprovada}
	case pix.RecurrenceFinished:
		return []string{pspsim.RecAprovada, pspsim.RecCancelada}
	case pix.RecurrenceRejected:
		return []string{pspsim.RecRejeitada}
	case pix.RecurrenceExpired:
		return []string{pspsim.RecExpirada}
	case pix.RecurrenceCancelled:
		return []string{pspsim.RecCancelada}
	}
	return nil
}

// cycleAgrees reports whether a cycle charge in status s agrees with its
// cobr: PENDING while the cobr waits for its debit, PAID (or REFUNDED
// later) once debited, CANCELLED once it failed for good or was withdrawn.
func cycleAgrees(s pix.TxStatus, c *pspCobR) bool {
	switch c.Status {
	case pspsim.CobRCriada, pspsim.CobRAtiva:
		return s == pix.StatusPending
	case pspsim.CobRConcluida:
		return s == pix.StatusPaid || s == pix.StatusRefunded
	default:
		return s == pix.StatusCancelled
	}
}

// recMoving says what of the recurrences is still moving: recurrences
// not yet as the PSP says, cycle charges not yet as their cobr says,
// approved recurrences with a cycle whose charge window is open but no
// charge yet, and cobrs the books do not hold. waiting is how many cycle
// charges are PENDING because their debit is days away, as they should.
func recMoving(rb recBooks, txs map[string]*pix.Transaction, psp pspFacts) (moving []string, waiting int64) {
	cobrs := psp.cobrsByTxID()
	opens := pix.DateOf(time.Now().In(saoPaulo)).AddDays(pix.ChargeOpensDays)
	var recs, cycles, toCreate int
	held := map[string]bool{}
	for _, r := range rb.Recs {
		if pr, ok := psp.Recs[r.PSPID]; ok && !slices.Contains(recStatusAtPSP(r.Status), pr.Status) {
			recs++
		}
		if r.Status == pix.RecurrenceApproved && !r.NextDue.IsZero() && !r.NextDue.After(opens) {
			toCreate++
		}
		for _, cy := range rb.Cycles[r.ID] {
			t := txs[cy.PaymentID]
			if t == nil {
				continue
			}
			held[strings.ToLower(t.TxID)] = true
			c := cobrs[strings.ToLower(t.TxID)]
			switch {
			case c == nil:
				cycles++
			case !cycleAgrees(t.Status, c):
				cycles++
			case t.Status == pix.StatusPending:
				waiting++
			}
		}
	}
	var unheld int
	for _, c := range psp.CobRs {
		if !held[c.TxID] && c.Status != pspsim.CobRCancelada {
			unheld++
		}
	}
	for _, m := range []struct {
		n    int
		what string
	}{{recs, "recurrences not yet as the PSP says"}, {cycles, "cycle charges not yet as their cobr says"},
		{toCreate, "cycles whose charge is still to create"}, {unheld, "PSP cycle charges not yet in the books"}} {
		if m.n > 0 {
			moving = append(moving, fmt.Sprintf("%d %s", m.n, m.what))
		}
	}
	return moving, waiting
}

// auditCycles: each recurrence's cycles are numbered once and fall due on
// distinct dates; each cycle's charge is one cobr at the PSP, of the
// recurrence's idRec, for the charge's amount and the cycle's due date;
// and every cobr the PSP holds is a cycle charge of the books, unless it
// was withdrawn (CANCELADA) — a cobr of no cycle is a cycle created
// twice or lost.
func auditCycles(b books, psp pspFacts) Check {
	c := Check{Name: checkCycles}
	bad := func(format string, args ...any) { c.Violations = append(c.Violations, fmt.Sprintf(format, args...)) }
	txs := b.txByID()
	count := map[string]int{}
	for _, cb := range psp.CobRs {
		count[cb.TxID]++
	}
	cobrs := psp.cobrsByTxID()
	held := map[string]bool{}
	for _, r := range b.Rec.Recs {
		numbers, dues := map[int]bool{}, map[pix.Date]bool{}
		for _, cy := range b.Rec.Cycles[r.ID] {
			c.Checked++
			if numbers[cy.Number] || dues[cy.DueDate] {
				bad("recurrence %s has cycle %d (due %s) twice", r.ID, cy.Number, cy.DueDate)
			}
			numbers[cy.Number], dues[cy.DueDate] = true, true
			t := txs[cy.PaymentID]
			if t == nil {
				bad("cycle %d of recurrence %s names charge %s, which the books do not hold", cy.Number, r.ID, cy.PaymentID)
				continue
			}
			txid := strings.ToLower(t.TxID)
			held[txid] = true
			cb := cobrs[txid]
			switch {
			case t.Type != pix.TypeCashin || t.RecurrenceID != r.ID:
				bad("cycle %d of recurrence %s is charge %s (%s of recurrence %q)", cy.Number, r.ID, t.ID, t.Type, t.RecurrenceID)
			case cb == nil:
				bad("cycle %d of recurrence %s: the PSP holds no cobr %s", cy.Number, r.ID, t.TxID)
			case count[txid] > 1:
				bad("cycle %d of recurrence %s: the PSP holds cobr %s %d times", cy.Number, r.ID, t.TxID, count[txid])
			case cb.IDRec != r.PSPID:
				bad("cycle %d of recurrence %s (idRec %s): its cobr %s is of idRec %s", cy.Number, r.ID, r.PSPID, t.TxID, cb.IDRec)
			case cb.Valor != t.Amount || t.Amount != r.Amount:
				bad("cycle %d of recurrence %s of %s: its charge is of %s, its cobr of %s", cy.Number, r.ID, r.Amount, t.Amount, cb.Valor)
			case cb.Due != cy.DueDate.String():
				bad("cycle %d of recurrence %s is due %s, its cobr %s", cy.Number, r.ID, cy.DueDate, cb.Due)
			}
		}
	}
	type recDue struct{ idRec, due string }
	seen := map[recDue]string{}
	for _, cb := range psp.CobRs {
		c.Checked++
		if !held[cb.TxID] && cb.Status != pspsim.CobRCancelada {
			bad("the PSP holds cobr %s (%s, due %s, %s) of idRec %s that no cycle names", cb.TxID, cb.Valor, cb.Due, cb.Status, cb.IDRec)
		}
		k := recDue{cb.IDRec, cb.Due}
		if other, ok := seen[k]; ok && cb.Status != pspsim.CobRCancelada {
			bad("the PSP holds cobrs %s and %s of idRec %s, both due %s", other, cb.TxID, cb.IDRec, cb.Due)
		}
		if cb.Status != pspsim.CobRCancelada {
			seen[k] = cb.TxID
		}
	}
	return c
}

// auditCycleMoney: a cycle's charge is PAID exactly when the PSP debited
// its cobr (CONCLUIDA, paid by one Pix): credited with that Pix for the
// cobr's amount, with the client's cash-in fee; CANCELLED when the cobr
// failed for good or was withdrawn; PENDING while the cobr waits. A
// journey-3 first payment is credited once the payer approved (its cob is
// paid with the approval).
func auditCycleMoney(b books, psp pspFacts) Check {
	c := Check{Name: checkCycleMove}
	bad := func(format string, args ...any) { c.Violations = append(c.Violations, fmt.Sprintf(format, args...)) }
	txs, cobrs := b.txByID(), psp.cobrsByTxID()
	for _, r := range b.Rec.Recs {
		for _, cy := range b.Rec.Cycles[r.ID] {
			t := txs[cy.PaymentID]
			if t == nil {
				continue // auditCycles reports it
			}
			c.Checked++
			cb := cobrs[strings.ToLower(t.TxID)]
			if cb == nil {
				continue // auditCycles reports it
			}
			if !cycleAgrees(t.Status, cb) {
				bad("cycle charge %s of recurrence %s is %s, its cobr %s is %s (%d attempts, %d failed)",
					t.ID, r.ID, t.Status, t.TxID, cb.Status, cb.Attempts, cb.Failed)
				continue
			}
			if fee, ok := b.Fees[t.ClientID]; ok && t.Tax != min(fee.Fee(t.Amount), t.Amount) {
				bad("cycle charge %s of %s carries a fee of %s, its client's cash-in fee is %s", t.ID, t.Amount, t.Tax, min(fee.Fee(t.Amount), t.Amount))
			}
			if !credited(*t) {
				continue
			}
			switch {
			case len(cb.Pix) != 1:
				bad("cycle charge %s is %s, but its cobr %s was paid by %d Pix", t.ID, t.Status, t.TxID, len(cb.Pix))
			case t.EndToEndID != cb.Pix[0] || t.PaidAmount != cb.Valor:
				bad("cycle charge %s was credited %s by Pix %s; its cobr was paid %s by Pix %s", t.ID, t.PaidAmount, t.EndToEndID, cb.Valor, cb.Pix[0])
			}
		}
		if r.FirstPaymentID == "" {
			continue
		}
		c.Checked++
		t := txs[r.FirstPaymentID]
		pr, ok := psp.Recs[r.PSPID]
		switch {
		case t == nil:
			bad("recurrence %s names first payment %s, which the books do not hold", r.ID, r.FirstPaymentID)
		case t.RecurrenceID != r.ID || t.Amount != r.FirstPayment:
			bad("first payment %s of recurrence %s (%s) is of recurrence %q for %s", t.ID, r.ID, r.FirstPayment, t.RecurrenceID, t.Amount)
		case ok && pr.Jornada == "JORNADA_3" && !credited(*t):
			bad("the payer approved recurrence %s with its first payment, but charge %s is %s", r.ID, t.ID, t.Status)
		}
	}
	return c
}

// auditRecStatus: each recurrence is as the PSP says (CREATED ↔ CRIADA,
// APPROVED ↔ APROVADA, REJECTED ↔ REJEITADA, EXPIRED ↔ EXPIRADA,
// CANCELLED ↔ CANCELADA; FINISHED once its last cycle is final), and each
// recurrence the PSP holds that no row names was never approved (one a
// crash or a concurrent duplicate left behind, CRIADA or withdrawn).
func auditRecStatus(b books, psp pspFacts) Check {
	c := Check{Name: checkRecStatus}
	bad := func(format string, args ...any) { c.Violations = append(c.Violations, fmt.Sprintf(format, args...)) }
	txs := b.txByID()
	named := map[string]bool{}
	for _, r := range b.Rec.Recs {
		c.Checked++
		named[r.PSPID] = true
		pr, ok := psp.Recs[r.PSPID]
		switch {
		case !ok:
			bad("recurrence %s (%s) names idRec %q, which the PSP does not hold", r.ID, r.Status, r.PSPID)
		case !slices.Contains(recStatusAtPSP(r.Status), pr.Status):
			bad("recurrence %s is %s, the PSP's %s is %s", r.ID, r.Status, r.PSPID, pr.Status)
		}
		if r.Status == pix.RecurrenceFinished {
			for _, cy := range b.Rec.Cycles[r.ID] {
				if t := txs[cy.PaymentID]; t != nil && t.Status == pix.StatusPending {
					bad("recurrence %s is FINISHED with cycle %d's charge %s still PENDING", r.ID, cy.Number, t.ID)
				}
			}
		}
	}
	for _, pr := range psp.Recs {
		if named[pr.IDRec] {
			continue
		}
		c.Checked++
		if pr.Status != pspsim.RecCriada && pr.Status != pspsim.RecCancelada && pr.Status != pspsim.RecExpirada {
			bad("the PSP holds recurrence %s (%s) that no recurrence names", pr.IDRec, pr.Status)
		}
	}
	return c
}

// recurrenceEvents checks the pix.recurrence.* events of each recurrence
// for auditReported: the one of its status (approved before a
// cancellation, when it had been approved; approved then finished for a
// finished one), and one charge_failed per
// cycle charge cancelled after its debit failed for good.
func recurrenceEvents(b books, psp pspFacts, check func(what, tx, maybe string, want ...string)) {
	txs, cobrs := b.txByID(), psp.cobrsByTxID()
	for _, r := range b.Rec.Recs {
		var want []string
		maybe := ""
		switch r.Status {
		case pix.RecurrenceApproved:
			want = append(want, pix.EventRecurrenceApproved)
		case pix.RecurrenceFinished:
			want = append(want, pix.EventRecurrenceApproved, pix.EventRecurrenceFinished)
		case pix.RecurrenceRejected:
			want = append(want, pix.EventRecurrenceRejected)
		case pix.RecurrenceExpired:
			want = append(want, pix.EventRecurrenceExpired)
		case pix.RecurrenceCancelled:
			want = append(want, pix.EventRecurrenceCancelled)
			maybe = pix.EventRecurrenceApproved
		}
		for _, cy := range b.Rec.Cycles[r.ID] {
			t := txs[cy.PaymentID]
			if t == nil || t.Status != pix.StatusCancelled {
				continue
			}
			if cb := cobrs[strings.ToLower(t.TxID)]; cb != nil && (cb.Status == pspsim.CobRExpirada || cb.Status == pspsim.CobRRejeitada) {
				want = append(want, pix.EventRecurrenceChargeFailed)
			}
		}
		if len(b.Rec.Cycles[r.ID]) > 0 && r.Status != pix.RecurrenceCancelled {
			// A recurrence with cycles was approved first.
			maybe = ""
		}
		check(fmt.Sprintf("recurrence %s (%s)", r.ID, r.Status), r.ID, maybe, want...)
	}
}
