package sim

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/pspsim"
	"github.com/pixgate/pixgate/internal/store"
)

// The money rules: each transfer sent once and final, every payment
// credited once, the balances and the ledger as the movements imply.

// auditOnce: every payout's send and every refund's or return's devolução
// reached the PSP at most once — one PUT that the PSP's own logic saw
// (a PUT refused by an injected fault or while the PSP was down never got
// there, and may be repeated after a reading) — and the PSP holds no
// transfer that pixgate does not know of (a resend under a new id). A
// second PUT of a transfer the PSP already had means pixgate sent again
// without reading first; the PSP's refusal of the reused id is what kept
// the money from moving twice, and no PSP promises that.
func auditOnce(b books, psp pspFacts) Check {
	c := Check{Name: checkOnce}
	once := func(what string, n pspsim.Count) {
		c.Checked++
		// A PUT the PSP refused moved nothing: sent again after a reading
		// found nothing, it is refused again, which is no resend.
		if n.Accepted > 1 || (n.Puts > 1 && n.Accepted > 0) {
			c.Violations = append(c.Violations, fmt.Sprintf("%s: %d PUTs reached the PSP, %d accepted", what, n.Puts, n.Accepted))
		}
	}
	payouts := map[string]bool{}
	for _, t := range b.Txs {
		if t.Type == pix.TypeCashout {
			payouts[hexID(t.ID)] = true
			once("payout "+t.ID, psp.SendPuts[hexID(t.ID)])
		}
	}
	// The devoluções each Pix may carry: its charge's refunds, or the
	// current return of its unmatched receipt.
	refundsOf := map[string]map[string]bool{} // charge id → hex ids
	for _, r := range b.Refunds {
		once("refund "+r.ID, psp.RefundPuts[hexID(r.ID)])
		if refundsOf[r.TransactionID] == nil {
			refundsOf[r.TransactionID] = map[string]bool{}
		}
		refundsOf[r.TransactionID][hexID(r.ID)] = true
	}
	// And the MED returns the PSP made, as the disputes record them.
	for _, d := range b.Disputes {
		if d.ReturnID == "" {
			continue
		}
		if refundsOf[d.PaymentID] == nil {
			refundsOf[d.PaymentID] = map[string]bool{}
		}
		refundsOf[d.PaymentID][strings.ToLower(d.ReturnID)] = true
	}
	returnOf := map[string]string{} // payment e2e → current return hex id
	for _, u := range b.Unmatched {
		returnOf[u.PaymentEndToEndID] = ""
		if u.ReturnID != "" {
			once("return of unmatched receipt "+u.ID, psp.RefundPuts[hexID(u.ReturnID)])
			returnOf[u.PaymentEndToEndID] = hexID(u.ReturnID)
		}
	}
	chargeOf := map[string]string{} // payment e2e → charge id
	for _, t := range b.Txs {
		if t.Type == pix.TypeCashin && t.EndToEndID != "" {
			chargeOf[t.EndToEndID] = t.ID
		}
	}
	for _, s := range psp.Sends {
		c.Checked++
		if !payouts[s.ID] {
			c.Violations = append(c.Violations, fmt.Sprintf("the PSP holds send %s (%s, %s) that no payout names", s.ID, s.Valor, s.Status))
		}
	}
	for _, p := range psp.Pix {
		for _, d := range p.Devolucoes {
			c.Checked++
			ret, unmatched := returnOf[p.E2E]
			switch charge, ok := chargeOf[p.E2E]; {
			case ok && refundsOf[charge][d.ID]:
			case unmatched && ret == d.ID:
			case unmatched && d.Status == pspsim.NaoRealizado:
				// An earlier return that failed; its id was replaced by the
				// next attempt's, and it moved no money.
			default:
				c.Violations = append(c.Violations, fmt.Sprintf("the PSP holds devolução %s (%s, %s) of Pix %s that no refund or return names",
					d.ID, d.Valor, d.Status, p.E2E))
			}
		}
	}
	return c
}

// saoPauloToday is today's São Paulo date (YYYY-MM-DD): a payout
// scheduled for a later day has not begun.
func saoPauloToday() string {
	return time.Now().In(time.FixedZone("BRT", -3*60*60)).Format(pix.DateLayout)
}

// auditFinal: every payout and refund ended final, and as the PSP says
// (a payout scheduled for a day that has not begun was never sent):
// PAID (or REVERSED) with the send REALIZADO for its amount, CANCELLED
// with the send NAO_REALIZADO or never accepted; a refund COMPLETED with
// its devolução DEVOLVIDO for its amount, FAILED with it NAO_REALIZADO or
// never accepted.
func auditFinal(b books, psp pspFacts) Check {
	c := Check{Name: checkFinal}
	today := saoPauloToday()
	bad := func(format string, args ...any) { c.Violations = append(c.Violations, fmt.Sprintf(format, args...)) }
	sends := map[string]pspTransfer{}
	for _, s := range psp.Sends {
		sends[s.ID] = s
	}
	for _, t := range b.Txs {
		if t.Type != pix.TypeCashout {
			continue
		}
		c.Checked++
		s, sent := sends[hexID(t.ID)]
		if day := t.ScheduledDate(); day != "" && day > today {
			// Its day has not begun: waiting or cancelled, never sent.
			if sent || !(t.Scheduled() || t.Status == pix.StatusCancelled) {
				bad("payout %s scheduled for %s is %s (send state %s) and its send at the PSP is %s", t.ID, day, t.Status, t.SendState,
					describeTransfer(s, sent))
			}
			continue
		}
		switch t.Status {
		case pix.StatusPaid, pix.StatusReversed:
			if !sent || s.Status != pspsim.Realizado || s.Valor != t.Amount {
				bad("payout %s is %s (%s) but its send at the PSP is %s", t.ID, t.Status, t.Amount, describeTransfer(s, sent))
			}
		case pix.StatusCancelled:
			if sent && s.Status != pspsim.NaoRealizado {
				bad("payout %s is CANCELLED but its send at the PSP is %s", t.ID, describeTransfer(s, sent))
			}
		default:
			bad("payout %s is still %s (send at the PSP: %s)", t.ID, t.Status, describeTransfer(s, sent))
		}
	}
	txs, pixes := b.txByID(), psp.pixByE2E()
	for _, r := range b.Refunds {
		c.Checked++
		var p *pspPix
		if charge := txs[r.TransactionID]; charge != nil && charge.EndToEndID != "" {
			p = pixes[charge.EndToEndID]
		}
		d := p.devolucao(hexID(r.ID))
		var dv pspTransfer
		if d != nil {
			dv = *d
		}
		switch r.Status {
		case pix.RefundCompleted:
			if d == nil || d.Status != pspsim.Devolvido || d.Valor != r.Amount {
				bad("refund %s is COMPLETED (%s) but its devolução at the PSP is %s", r.ID, r.Amount, describeTransfer(dv, d != nil))
			}
		case pix.RefundFailed:
			if d != nil && d.Status != pspsim.NaoRealizado {
				bad("refund %s is FAILED but its devolução at the PSP is %s", r.ID, describeTransfer(dv, true))
			}
		default:
			bad("refund %s is still %s (devolução at the PSP: %s)", r.ID, r.Status, describeTransfer(dv, d != nil))
		}
	}
	return c
}

func describeTransfer(t pspTransfer, ok bool) string {
	if !ok {
		return "absent"
	}
	return fmt.Sprintf("%s for %s", t.Status, t.Valor)
}

// heldBy maps each payment end-to-end id to what holds it in the books:
// charges that were credited with it and unmatched receipts.
func (b books) heldBy() map[string][]string {
	m := map[string][]string{}
	for _, t := range b.Txs {
		if t.Type == pix.TypeCashin && t.EndToEndID != "" {
			m[t.EndToEndID] = append(m[t.EndToEndID], "charge "+t.ID)
		}
	}
	for _, u := range b.Unmatched {
		m[u.PaymentEndToEndID] = append(m[u.PaymentEndToEndID], "unmatched receipt "+u.ID)
	}
	return m
}

// auditCredited: each payment the PSP received is held by exactly one
// thing in the books: the charge it paid, or an unmatched receipt.
func auditCredited(b books, psp pspFacts) Check {
	c := Check{Name: checkAccounted}
	held := b.heldBy()
	for _, p := range psp.Pix {
		c.Checked++
		switch h := held[p.E2E]; len(h) {
		case 1:
		case 0:
			c.Violations = append(c.Violations, fmt.Sprintf("Pix %s (%s, txid %q) is neither credited nor in suspense", p.E2E, p.Valor, p.TxID))
		default:
			c.Violations = append(c.Violations, fmt.Sprintf("Pix %s (%s) is held %d times: %s", p.E2E, p.Valor, len(h), strings.Join(h, ", ")))
		}
	}
	return c
}

// auditPaid: every credited charge names a PSP payment of its txid for
// exactly its paid_amount, and every unmatched receipt a PSP payment of
// its amount.
func auditPaid(b books, psp pspFacts) Check {
	c := Check{Name: checkPaid}
	bad := func(format string, args ...any) { c.Violations = append(c.Violations, fmt.Sprintf(format, args...)) }
	pixes := psp.pixByE2E()
	for _, t := range b.Txs {
		if !credited(t) {
			if t.Type == pix.TypeCashin && t.PaidAmount > 0 {
				c.Checked++
				bad("charge %s is %s with a paid amount of %s", t.ID, t.Status, t.PaidAmount)
			}
			continue
		}
		c.Checked++
		p := pixes[t.EndToEndID]
		switch {
		case t.EndToEndID == "" || p == nil:
			bad("charge %s is %s (paid %s) with no PSP payment (end_to_end_id %q)", t.ID, t.Status, t.PaidAmount, t.EndToEndID)
		case p.TxID != t.TxID:
			bad("charge %s (txid %s) was credited with Pix %s of txid %q", t.ID, t.TxID, p.E2E, p.TxID)
		case p.Valor != t.PaidAmount:
			bad("charge %s was credited %s for Pix %s of %s", t.ID, t.PaidAmount, p.E2E, p.Valor)
		}
	}
	for _, u := range b.Unmatched {
		c.Checked++
		switch p := pixes[u.PaymentEndToEndID]; {
		case p == nil:
			bad("unmatched receipt %s holds %s of Pix %s, which the PSP never received", u.ID, u.Amount, u.PaymentEndToEndID)
		case p.Valor != u.Amount:
			bad("unmatched receipt %s holds %s of Pix %s of %s", u.ID, u.Amount, p.E2E, p.Valor)
		}
	}
	return c
}

// auditUnmatched: each unmatched receipt is RETURNED, with a DEVOLVIDO
// devolução of its full amount at the PSP under its return id, or HELD,
// with nothing returned; the house's suspense account holds exactly what
// is held.
func auditUnmatched(b books, psp pspFacts) Check {
	c := Check{Name: checkUnmatched}
	bad := func(format string, args ...any) { c.Violations = append(c.Violations, fmt.Sprintf(format, args...)) }
	pixes := psp.pixByE2E()
	var suspense pix.Amount
	for _, u := range b.Unmatched {
		c.Checked++
		p := pixes[u.PaymentEndToEndID]
		switch u.Status {
		case pix.UnmatchedReturned:
			d := p.devolucao(hexID(u.ReturnID))
			if d == nil || d.Status != pspsim.Devolvido || d.Valor != u.Amount {
				var dv pspTransfer
				if d != nil {
					dv = *d
				}
				bad("unmatched receipt %s is RETURNED (%s) but its devolução %q at the PSP is %s", u.ID, u.Amount, u.ReturnID, describeTransfer(dv, d != nil))
			}
		case pix.UnmatchedHeld:
			suspense += u.Amount
			if p != nil {
				for _, d := range p.Devolucoes {
					if d.Status != pspsim.NaoRealizado {
						bad("unmatched receipt %s is HELD but the PSP returns it by devolução %s (%s, %s)", u.ID, d.ID, d.Valor, d.Status)
					}
				}
			}
		default:
			suspense += u.Amount // still in suspense while its return runs
			bad("unmatched receipt %s is still %s", u.ID, u.Status)
		}
	}
	c.Checked++
	if b.Suspense != suspense {
		bad("the house's suspense account holds %s; the receipts held add up to %s", b.Suspense, suspense)
	}
	return c
}

// auditBalance: what the PSP holds (received − returned − sent) equals
// what pixgate's settlement accounts say crossed the PIX network, and each
// holder's settlement account equals what its rows say.
func auditBalance(b books, psp pspFacts) Check {
	c := Check{Name: checkBalance, Violations: append([]string(nil), psp.Problems...)}
	bad := func(format string, args ...any) { c.Violations = append(c.Violations, fmt.Sprintf(format, args...)) }
	var held pix.Amount
	for _, p := range psp.Pix {
		held += p.Valor
		for _, d := range p.Devolucoes {
			if d.Status == pspsim.Devolvido {
				held -= d.Valor
			}
		}
	}
	for _, s := range psp.Sends {
		if s.Status == pspsim.Realizado {
			held -= s.Valor
		}
	}
	var settlement pix.Amount
	for _, v := range b.Settlement {
		settlement += v
	}
	c.Checked++
	if held != -settlement {
		bad("the PSP holds %s; the books say %s crossed the network (settlement accounts %s)", held, -settlement, settlement)
	}
	// Each holder's rows: a credit brings its paid amount in, a payout
	// paid or a refund completed takes its amount out, a reversal brings
	// the payout back; the house's receipts come in and their returns go.
	want := map[string]pix.Amount{}
	for _, t := range b.Txs {
		switch {
		case credited(t):
			want[t.ClientID] -= t.PaidAmount
		case t.Type == pix.TypeCashout && t.Status == pix.StatusPaid:
			want[t.ClientID] += t.Amount
		}
	}
	// Of a split charge, a refund or a MED return goes out through each
	// account in proportion to what it was credited (splitOutflow).
	tx := b.txByID()
	for _, r := range b.Refunds {
		if r.Status == pix.RefundCompleted {
			b.splitOutflow(want, tx[r.TransactionID], r.ClientID, r.Amount)
		}
	}
	// A MED return takes its amount out through the network too.
	for _, d := range b.Disputes {
		b.splitOutflow(want, tx[d.PaymentID], d.ClientID, d.ReturnedAmount)
	}
	for _, u := range b.Unmatched {
		want[store.HouseID] -= u.Amount
		if u.Status == pix.UnmatchedReturned {
			want[store.HouseID] += u.Amount
		}
	}
	holders := make([]string, 0, len(b.Settlement))
	for h := range b.Settlement {
		holders = append(holders, h)
	}
	sort.Strings(holders)
	for _, h := range holders {
		c.Checked++
		if b.Settlement[h] != want[h] {
			bad("%s's settlement account is %s; its transactions say %s", h, b.Settlement[h], want[h])
		}
	}
	return c
}

// auditLedger: the ledger's own invariants (store.Q.CheckLedger).
func auditLedger(b books) Check {
	c := Check{Name: checkLedger, Checked: int(b.Postings)}
	if b.LedgerErr != nil {
		c.Violations = append(c.Violations, b.LedgerErr.Error())
	}
	return c
}
