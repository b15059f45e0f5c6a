package sim

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/pixgate/pixgate/internal/gateway"
	"github.com/pixgate/pixgate/internal/ledger"
	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/provider"
	"github.com/pixgate/pixgate/internal/pspsim"
	"github.com/pixgate/pixgate/internal/store"
)

// The auditor: after the run quiesces it reads pixgate's database, the
// PSP simulator's books and what the merchants' receiver got, and checks
// what must be true of the money. Each rule is one check function below,
// returning one Check with how many things it looked at; a new rule is a
// new function and a line in audit.

// AuditInput is everything the auditor reads.
type AuditInput struct {
	// DB is the system's database, opened directly; the auditor only reads.
	DB *store.DB
	// PSP is the simulator's final state.
	PSP pspsim.State
	// Deliveries is every webhook attempt the merchants' receiver got, and
	// InvalidSignatures how many of them did not verify.
	Deliveries        []Delivery
	InvalidSignatures int
	Clients           []Credentials
	// Keys are the idempotent creations the workload made.
	Keys []KeyRecord
	// Call sends one API request as client i to any live node and returns
	// the answer; the auditor uses it for replays and statements (nil
	// skips those parts).
	Call func(ctx context.Context, client int, method, path string, header map[string]string, body []byte) (int, http.Header, []byte, error)
}

// Settled reports whether the system has quiesced: no charge, payout,
// refund or unmatched return still PENDING or RETURNING, no transfer still in
// processing at the PSP, every PSP payment credited or recorded as
// unmatched, and every event delivered (or failed for good, which the
// audit reports). The string says what is still moving. It only reads.
func Settled(ctx context.Context, in AuditInput) (bool, string, error) {
	u, err := in.DB.CountUnsettled(ctx)
	if err != nil {
		return false, "", fmt.Errorf("settled: %w", err)
	}
	received, err := in.DB.ReceivedEndToEndIDs(ctx)
	if err != nil {
		return false, "", fmt.Errorf("settled: %w", err)
	}
	held := make(map[string]bool, len(received))
	for _, id := range received {
		held[id] = true
	}
	psp := pspFactsOf(in.PSP)
	// Cycle charges wait days for their debit, as they should: they are
	// not what is still moving, unless they disagree with their cobr.
	txs, err := in.DB.AllTransactions(ctx)
	if err != nil {
		return false, "", fmt.Errorf("settled: %w", err)
	}
	rb, err := readRecBooks(ctx, in.DB)
	if err != nil {
		return false, "", fmt.Errorf("settled: %w", err)
	}
	recs, waiting := recMoving(rb, books{Txs: txs}.txByID(), psp)
	u.Charges -= waiting
	var unheld, processing int
	for _, p := range psp.Pix {
		if !held[p.E2E] {
			unheld++
		}
		for _, d := range p.Devolucoes {
			if d.Status == pspsim.EmProcessamento {
				processing++
			}
		}
	}
	for _, s := range psp.Sends {
		if s.Status == pspsim.EmProcessamento {
			processing++
		}
	}
	var moving []string
	for _, m := range []struct {
		n    int64
		what string
	}{
		// A charge left PENDING expires on its own clock: audited before it
		// did, its cancellation (and event) would land during the audit.
		{u.Charges, "charges pending"}, {u.Payouts, "payouts pending"}, {u.Refunds, "refunds pending"}, {u.Returns, "unmatched receipts returning"},
		{int64(processing), "PSP transfers in processing"}, {int64(unheld), "PSP payments not yet in the books"},
		{u.Events, "events not yet delivered"},
	} {
		if m.n > 0 {
			moving = append(moving, fmt.Sprintf("%d %s", m.n, m.what))
		}
	}
	moving = append(moving, recs...)
	return len(moving) == 0, strings.Join(moving, ", "), nil
}

// Audit runs every check once, in a fixed order. It may call the API
// (replays, statements) after the checks that read only the books have
// read them.
func Audit(ctx context.Context, in AuditInput) []Check {
	return audit(ctx, in, pspFactsOf(in.PSP))
}

// Names of the checks, in the order Audit returns them.
const (
	checkOnce       = "transfers reached the PSP at most once"
	checkFinal      = "transfers final and as the PSP says"
	checkAccounted  = "every PSP payment credited or in suspense"
	checkPaid       = "nothing credited without a PSP payment"
	checkUnmatched  = "unmatched receipts returned or held"
	checkBalance    = "books equal the PSP's balance"
	checkLedger     = "ledger sums to zero"
	checkKeys       = "each idempotency key maps to one transaction and replays"
	checkDelivered  = "every event delivered with a valid signature"
	checkReported   = "each final state reported by one event"
	checkStatements = "statements chain"
)

// allChecks are the checks' names, in the order Audit returns them.
var allChecks = []string{checkOnce, checkFinal, checkAccounted, checkPaid, checkUnmatched, checkBalance, checkLedger,
	checkCycles, checkCycleMove, checkRecStatus, checkKeys, checkDelivered, checkReported, checkStatements}

func audit(ctx context.Context, in AuditInput, psp pspFacts) []Check {
	b, err := readBooks(ctx, in.DB)
	if err != nil {
		// Without the books no rule can be checked: each says so.
		var out []Check
		for _, name := range allChecks {
			out = append(out, Check{Name: name, Violations: []string{"could not read the books: " + err.Error()}})
		}
		return out
	}
	// The order of evaluation matters: the API calls come last.
	return []Check{
		auditOnce(b, psp),
		auditFinal(b, psp),
		auditCredited(b, psp),
		auditPaid(b, psp),
		auditUnmatched(b, psp),
		auditBalance(b, psp),
		auditLedger(b),
		auditCycles(b, psp),
		auditCycleMoney(b, psp),
		auditRecStatus(b, psp),
		auditKeys(ctx, in, b),
		auditDelivered(b, in.Clients, in.Deliveries, in.InvalidSignatures),
		auditReported(b, psp),
		auditStatements(ctx, in, b),
	}
}

// pspFacts is the PSP's state as the auditor reads it: amounts in
// centavos, ids in lower case (pixgate's ids are hex, and PSPs may answer
// them in either case).
type pspFacts struct {
	Pix        []pspPix
	Sends      []pspTransfer
	SendPuts   map[string]pspsim.Count
	RefundPuts map[string]pspsim.Count
	// Recs are the PSP's recurrences by idRec, CobRs its cycle charges.
	Recs  map[string]pspsim.RecFact
	CobRs []pspCobR
	// Problems are amounts that could not be read.
	Problems []string
}

type pspPix struct {
	E2E, TxID  string
	Valor      pix.Amount
	Devolucoes []pspTransfer
}

// pspTransfer is a send (ID its idEnvio) or a devolução (ID its id).
type pspTransfer struct {
	ID     string
	Valor  pix.Amount
	Status string
}

func pspFactsOf(st pspsim.State) pspFacts {
	f := pspFacts{SendPuts: map[string]pspsim.Count{}, RefundPuts: map[string]pspsim.Count{}}
	valor := func(what, s string) pix.Amount {
		a, err := pix.ParseAmountString(s)
		if err != nil {
			f.Problems = append(f.Problems, fmt.Sprintf("%s has valor %q", what, s))
		}
		return a
	}
	for _, p := range st.Pix {
		fp := pspPix{E2E: p.EndToEndID, TxID: p.TxID, Valor: valor("Pix "+p.EndToEndID, p.Valor)}
		for _, d := range p.Devolucoes {
			fp.Devolucoes = append(fp.Devolucoes, pspTransfer{ID: strings.ToLower(d.ID), Status: d.Status,
				Valor: valor("devolução "+d.ID, d.Valor)})
		}
		f.Pix = append(f.Pix, fp)
	}
	for _, s := range st.Sends {
		f.Sends = append(f.Sends, pspTransfer{ID: strings.ToLower(s.IDEnvio), Status: s.Status, Valor: valor("send "+s.IDEnvio, s.Valor)})
	}
	for k, v := range st.SendPuts {
		f.SendPuts[strings.ToLower(k)] = v
	}
	for k, v := range st.RefundPuts {
		f.RefundPuts[strings.ToLower(k)] = v
	}
	recFactsOf(st, &f)
	return f
}

// pixByE2E indexes the PSP's payments.
func (f pspFacts) pixByE2E() map[string]*pspPix {
	m := make(map[string]*pspPix, len(f.Pix))
	for i := range f.Pix {
		m[f.Pix[i].E2E] = &f.Pix[i]
	}
	return m
}

// devolucao returns the devolução id of payment p, or nil.
func (p *pspPix) devolucao(id string) *pspTransfer {
	if p == nil {
		return nil
	}
	for i := range p.Devolucoes {
		if p.Devolucoes[i].ID == id {
			return &p.Devolucoes[i]
		}
	}
	return nil
}

// hexID is the idEnvio or devolução id pixgate gives the PSP for one of
// its ids.
func hexID(id string) string { return strings.ToLower(provider.HexID(id)) }

// books is what the auditor reads of pixgate's database, all at once.
type books struct {
	Txs       []pix.Transaction
	Refunds   []pix.Refund
	Unmatched []store.UnmatchedReceipt
	Events    []pix.Event
	// Settlement is each account holder's settlement balance (clients by
	// id, the house as store.HouseID); Suspense the house's.
	Settlement map[string]pix.Amount
	Suspense   pix.Amount
	// LedgerErr is what CheckLedger found (nil: consistent).
	LedgerErr          error
	Accounts, Postings int64
	// Rec are the recurrences and their cycles; Fees each client's
	// cash-in fee, by client id.
	Rec  recBooks
	Fees map[string]pix.FeeRule
}

func readBooks(ctx context.Context, db *store.DB) (books, error) {
	var b books
	var err error
	if b.Txs, err = db.AllTransactions(ctx); err != nil {
		return b, err
	}
	if b.Refunds, err = db.AllRefunds(ctx); err != nil {
		return b, err
	}
	if b.Unmatched, err = db.AllUnmatched(ctx); err != nil {
		return b, err
	}
	if b.Events, err = db.AllEvents(ctx); err != nil {
		return b, err
	}
	clients, err := db.Clients(ctx)
	if err != nil {
		return b, err
	}
	if b.Rec, err = readRecBooks(ctx, db); err != nil {
		return b, err
	}
	b.Settlement, b.Fees = map[string]pix.Amount{}, map[string]pix.FeeRule{}
	for _, c := range clients {
		b.Fees[c.ID] = c.CashinFee
		bal, err := db.Balances(ctx, c.ID)
		if err != nil {
			return b, err
		}
		b.Settlement[c.ID] = bal[ledger.Settlement]
	}
	house, err := db.HouseBalances(ctx)
	if err != nil {
		return b, err
	}
	b.Settlement[store.HouseID], b.Suspense = house[ledger.Settlement], house[ledger.Suspense]
	if b.Accounts, b.Postings, err = db.LedgerSize(ctx); err != nil {
		return b, err
	}
	if err := db.CheckLedger(ctx); err != nil {
		if !errors.Is(err, store.ErrLedgerInconsistent) {
			return b, err
		}
		b.LedgerErr = err
	}
	return b, nil
}

func (b books) txByID() map[string]*pix.Transaction {
	m := make(map[string]*pix.Transaction, len(b.Txs))
	for i := range b.Txs {
		m[b.Txs[i].ID] = &b.Txs[i]
	}
	return m
}

// credited reports whether t is a charge whose payment was credited.
func credited(t pix.Transaction) bool {
	return t.Type == pix.TypeCashin && (t.Status == pix.StatusPaid || t.Status == pix.StatusRefunded)
}

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
		if n.Accepted > 1 || n.Puts > 1 {
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

// auditFinal: every payout and refund ended final, and as the PSP says:
// PAID (or REVERSED) with the send REALIZADO for its amount, CANCELLED
// with the send NAO_REALIZADO or never accepted; a refund COMPLETED with
// its devolução DEVOLVIDO for its amount, FAILED with it NAO_REALIZADO or
// never accepted.
func auditFinal(b books, psp pspFacts) Check {
	c := Check{Name: checkFinal}
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
		case store.UnmatchedReturned:
			d := p.devolucao(hexID(u.ReturnID))
			if d == nil || d.Status != pspsim.Devolvido || d.Valor != u.Amount {
				var dv pspTransfer
				if d != nil {
					dv = *d
				}
				bad("unmatched receipt %s is RETURNED (%s) but its devolução %q at the PSP is %s", u.ID, u.Amount, u.ReturnID, describeTransfer(dv, d != nil))
			}
		case store.UnmatchedHeld:
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
	for _, r := range b.Refunds {
		if r.Status == pix.RefundCompleted {
			want[r.ClientID] += r.Amount
		}
	}
	for _, u := range b.Unmatched {
		want[store.HouseID] -= u.Amount
		if u.Status == store.UnmatchedReturned {
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

// auditKeys: each idempotent creation maps to at most one transaction (a
// definitive 2xx to exactly the one it named), and sending it again
// replays it. A creation the workload got a 2xx for must replay the same
// status and JSON body, marked Idempotent-Replayed. A 4xx or an unknown
// outcome stored nothing to replay (docs/api.md, Idempotency): the answer
// may differ, but must not be a 5xx, and a 2xx must be a marked replay of
// the transaction the key holds. A creation that holds no transaction is
// not sent again, since that would create one now, after the audit read
// the books.
func auditKeys(ctx context.Context, in AuditInput, b books) Check {
	c := Check{Name: checkKeys}
	bad := func(rec KeyRecord, format string, args ...any) {
		c.Violations = append(c.Violations, fmt.Sprintf("%s %s: ", rec.Kind, describeKey(rec))+fmt.Sprintf(format, args...))
	}
	type ck struct{ client, key string }
	byExt, byKey, refundsByKey := map[ck][]string{}, map[ck][]string{}, map[ck][]string{}
	for _, t := range b.Txs {
		if t.ExternalID != "" {
			byExt[ck{t.ClientID, t.ExternalID}] = append(byExt[ck{t.ClientID, t.ExternalID}], t.ID)
		}
		if t.IdempotencyKey != "" {
			byKey[ck{t.ClientID, t.IdempotencyKey}] = append(byKey[ck{t.ClientID, t.IdempotencyKey}], t.ID)
		}
	}
	for _, r := range b.Refunds {
		if r.IdempotencyKey != "" {
			refundsByKey[ck{r.ClientID, r.IdempotencyKey}] = append(refundsByKey[ck{r.ClientID, r.IdempotencyKey}], r.ID)
		}
	}
	recsByExt, recsByKey := map[ck][]string{}, map[ck][]string{}
	for _, r := range b.Rec.Recs {
		recsByExt[ck{r.ClientID, r.ExternalID}] = append(recsByExt[ck{r.ClientID, r.ExternalID}], r.ID)
		if r.IdempotencyKey != "" {
			recsByKey[ck{r.ClientID, r.IdempotencyKey}] = append(recsByKey[ck{r.ClientID, r.IdempotencyKey}], r.ID)
		}
	}
	for _, rec := range in.Keys {
		if (rec.Key == "" && rec.ExtID == "") || rec.Client < 0 || rec.Client >= len(in.Clients) {
			continue // not idempotent: sending it again would create another
		}
		c.Checked++
		client := in.Clients[rec.Client].ClientID
		var ids []string
		switch rec.Kind {
		case "refund":
			ids = union(refundsByKey[ck{client, rec.Key}])
		case "recurrence":
			ids = union(recsByExt[ck{client, rec.ExtID}], recsByKey[ck{client, rec.Key}])
		default:
			ids = union(byExt[ck{client, rec.ExtID}], byKey[ck{client, rec.Key}])
		}
		definitive := rec.Status >= 200 && rec.Status < 300
		switch {
		case len(ids) > 1:
			bad(rec, "maps to %d transactions: %s", len(ids), strings.Join(ids, ", "))
		case definitive && (len(ids) == 0 || ids[0] != rec.ID):
			bad(rec, "answered %d naming %s, but the books hold %v", rec.Status, rec.ID, ids)
		}
		if len(ids) == 0 || in.Call == nil {
			continue
		}
		var header map[string]string
		if rec.Key != "" {
			header = map[string]string{"Idempotency-Key": rec.Key}
		}
		status, h, body, err := in.Call(ctx, rec.Client, rec.Method, rec.Path, header, rec.Body)
		if err != nil {
			bad(rec, "replay failed: %v", err)
			continue
		}
		replayed := h.Get("Idempotent-Replayed") == "true"
		switch {
		case definitive && (status != rec.Status || !sameJSON(body, rec.Response)):
			bad(rec, "replayed %d %s, first answered %d %s", status, body, rec.Status, rec.Response)
		case status >= 200 && status < 300 && !replayed:
			bad(rec, "replay answered %d without Idempotent-Replayed: true", status)
		case status >= 200 && status < 300 && !slices.Contains(ids, answerID(body)):
			bad(rec, "replay answered %d naming %q, but the books hold %v", status, answerID(body), ids)
		case status >= 500 || status < 200:
			bad(rec, "replay answered %d %s", status, body)
		}
	}
	return c
}

// union returns the distinct strings of the lists, in order.
func union(lists ...[]string) []string {
	var out []string
	for _, l := range lists {
		for _, s := range l {
			if !slices.Contains(out, s) {
				out = append(out, s)
			}
		}
	}
	return out
}

// auditDelivered: every event is delivered, and the merchant's receiver
// got it at least once with a valid signature, at its own client's URL,
// and answered 2xx; no attempt was badly signed and none named an event
// pixgate does not have.
func auditDelivered(b books, clients []Credentials, deliveries []Delivery, invalid int) Check {
	c := Check{Name: checkDelivered}
	bad := func(format string, args ...any) { c.Violations = append(c.Violations, fmt.Sprintf(format, args...)) }
	events := make(map[string]pix.Event, len(b.Events))
	for _, e := range b.Events {
		events[e.ID] = e
	}
	got := map[string]bool{}
	for _, d := range deliveries {
		e, known := events[d.WebhookID]
		switch {
		case !known:
			bad("the receiver got webhook-id %q (%s), which is no event", d.WebhookID, d.Event)
		case d.Valid && (d.Client < 0 || d.Client >= len(clients) || clients[d.Client].ClientID != e.ClientID):
			bad("event %s of client %s reached the URL of client #%d", e.ID, e.ClientID, d.Client)
		case d.Valid && d.Status >= 200 && d.Status < 300:
			got[d.WebhookID] = true
		}
	}
	for _, e := range b.Events {
		c.Checked++
		switch {
		case e.Status != "delivered":
			bad("event %s (%s of %s) is %s after %d attempts", e.ID, e.Type, e.TransactionID, e.Status, e.Attempts)
		case !got[e.ID]:
			bad("event %s (%s of %s) is delivered, but the receiver never answered 2xx to a valid delivery of it", e.ID, e.Type, e.TransactionID)
		}
	}
	if invalid > 0 {
		var ids []string
		for _, d := range deliveries {
			if !d.Valid && len(ids) < 5 {
				ids = append(ids, fmt.Sprintf("%q", d.WebhookID))
			}
		}
		bad("%d deliveries did not verify (signature or URL), e.g. webhook-id %s", invalid, strings.Join(ids, ", "))
	}
	return c
}

// auditReported: each change to a final state wrote its event exactly
// once (the outbox row commits with the change): a charge paid
// pix.cashin.paid (after pix.cashin.cancelled when it was paid after it
// expired), expired pix.cashin.cancelled; a payout paid
// pix.cashout.paid, failed pix.cashout.failed, reversed both paid and
// reversed; a refund completed or failed its own; a recurrence the
// pix.recurrence.* event of its status and one charge_failed per cycle
// that failed for good (recurrenceEvents); and no other event.
func auditReported(b books, psp pspFacts) Check {
	c := Check{Name: checkReported}
	type subject struct{ tx, refund string }
	have := map[subject]map[string]int{}
	for _, e := range b.Events {
		var body struct {
			RefundID string `json:"refund_id"`
		}
		_ = json.Unmarshal([]byte(e.Payload), &body)
		s := subject{e.TransactionID, body.RefundID}
		if have[s] == nil {
			have[s] = map[string]int{}
		}
		have[s][e.Type]++
	}
	// check compares the events of s with want; maybe is an event that
	// may also be there, once.
	check := func(what string, s subject, maybe string, want ...string) {
		c.Checked++
		w := map[string]int{}
		for _, t := range want {
			w[t]++
		}
		got := have[s]
		if maybe != "" && got[maybe] == w[maybe]+1 {
			w[maybe]++
		}
		if !sameCounts(got, w) {
			c.Violations = append(c.Violations, fmt.Sprintf("%s has events %s, expected %s", what, formatCounts(got), formatCounts(w)))
		}
		delete(have, s)
	}
	for _, t := range b.Txs {
		what := fmt.Sprintf("%s %s (%s)", t.Type, t.ID, t.Status)
		s := subject{tx: t.ID}
		switch {
		case credited(t):
			// A payment that arrives after the charge expired still
			// credits it: cancelled, then paid.
			check(what, s, pix.EventCashinCancelled, pix.EventCashinPaid)
		case t.Type == pix.TypeCashin && t.Status == pix.StatusCancelled:
			check(what, s, "", pix.EventCashinCancelled)
		case t.Type == pix.TypeCashout && t.Status == pix.StatusPaid:
			check(what, s, "", pix.EventCashoutPaid)
		case t.Type == pix.TypeCashout && t.Status == pix.StatusCancelled:
			check(what, s, "", pix.EventCashoutFailed)
		case t.Type == pix.TypeCashout && t.Status == pix.StatusReversed:
			check(what, s, "", pix.EventCashoutPaid, pix.EventCashoutReversed)
		default:
			check(what, s, "") // not final: nothing reported yet
		}
	}
	for _, r := range b.Refunds {
		what := fmt.Sprintf("refund %s (%s)", r.ID, r.Status)
		s := subject{r.TransactionID, r.ID}
		switch r.Status {
		case pix.RefundCompleted:
			check(what, s, "", pix.EventRefundCompleted)
		case pix.RefundFailed:
			check(what, s, "", pix.EventRefundFailed)
		default:
			check(what, s, "")
		}
	}
	recurrenceEvents(b, psp, func(what, tx, maybe string, want ...string) { check(what, subject{tx: tx}, maybe, want...) })
	for s, n := range have {
		c.Violations = append(c.Violations, fmt.Sprintf("events %s name transaction %q refund %q, which the books do not hold", formatCounts(n), s.tx, s.refund))
	}
	return c
}

func sameCounts(a, b map[string]int) bool {
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	for k, v := range b {
		if a[k] != v {
			return false
		}
	}
	return true
}

func formatCounts(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k, v := range m {
		if v > 0 {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return "none"
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s×%d", k, m[k])
	}
	return strings.Join(parts, ", ")
}

// statementData is the data of GET /api/v1/wallet/statement (JSON).
type statementData struct {
	Opening   int64 `json:"opening_balance_cents"`
	Closing   int64 `json:"closing_balance_cents"`
	Movements []struct {
		At            string `json:"at"`
		TransactionID string `json:"transaction_id"`
		Type          string `json:"type"`
		Amount        int64  `json:"amount_cents"`
		Balance       int64  `json:"balance_cents"`
	} `json:"movements"`
}

// statementSplits is how many instants a client's statement window is
// split at, to check that each piece opens where the previous closed.
const statementSplits = 3

// auditStatements: for each client, the statement from before its first
// transaction to a minute from now opens at zero, runs each movement's
// balance from the previous one, and closes at the available balance;
// split at a few of its transactions' instants, each piece opens where
// the previous closed and the pieces hold the same movements.
func auditStatements(ctx context.Context, in AuditInput, b books) Check {
	c := Check{Name: checkStatements}
	if in.Call == nil {
		return c
	}
	bad := func(format string, args ...any) { c.Violations = append(c.Violations, fmt.Sprintf(format, args...)) }
	now := time.Now().UTC().Truncate(time.Millisecond)
	to := now.Add(time.Minute)
	for i, cred := range in.Clients {
		var instants []time.Time // its transactions' creation, in order
		for _, t := range b.Txs {
			if t.ClientID == cred.ClientID {
				instants = append(instants, t.CreatedAt)
			}
		}
		sort.Slice(instants, func(a, b int) bool { return instants[a].Before(instants[b]) })
		from := now.Add(-time.Hour)
		if len(instants) > 0 {
			from = instants[0].Add(-time.Minute).Truncate(time.Millisecond)
		}
		if earliest := to.Add(-gateway.MaxStatementWindow); from.Before(earliest) {
			from = earliest
		}
		full, err := statement(ctx, in, i, from, to)
		if err != nil {
			bad("client %s: %v", cred.ClientID, err)
			continue
		}
		c.Checked++
		for _, v := range verifyStatement(full) {
			bad("client %s, statement [%s, %s): %s", cred.ClientID, stamp(from), stamp(to), v)
		}
		if full.Opening != 0 {
			bad("client %s: the statement from before its first transaction opens at %d, not 0", cred.ClientID, full.Opening)
		}
		avail, err := available(ctx, in, i)
		if err != nil {
			bad("client %s: %v", cred.ClientID, err)
		} else if avail != full.Closing {
			bad("client %s: the statement closes at %d, the available balance is %d", cred.ClientID, full.Closing, avail)
		}
		// The pieces [from, s1), [s1, s2), …, [sn, to).
		cuts := []time.Time{from}
		for k := 1; k <= statementSplits && len(instants) > 0; k++ {
			at := instants[k*len(instants)/(statementSplits+1)].UTC().Truncate(time.Millisecond)
			if at.After(cuts[len(cuts)-1]) && at.Before(to) {
				cuts = append(cuts, at)
			}
		}
		cuts = append(cuts, to)
		opening, moves := full.Opening, 0
		for k := 0; k+1 < len(cuts); k++ {
			part, err := statement(ctx, in, i, cuts[k], cuts[k+1])
			if err != nil {
				bad("client %s: %v", cred.ClientID, err)
				break
			}
			c.Checked++
			for _, v := range verifyStatement(part) {
				bad("client %s, statement [%s, %s): %s", cred.ClientID, stamp(cuts[k]), stamp(cuts[k+1]), v)
			}
			if part.Opening != opening {
				bad("client %s: [%s, %s) opens at %d, the window before closed at %d", cred.ClientID, stamp(cuts[k]), stamp(cuts[k+1]), part.Opening, opening)
			}
			opening, moves = part.Closing, moves+len(part.Movements)
			if k+2 == len(cuts) {
				if part.Closing != full.Closing || moves != len(full.Movements) {
					bad("client %s: the pieces close at %d with %d movements, the whole window at %d with %d",
						cred.ClientID, part.Closing, moves, full.Closing, len(full.Movements))
				}
			}
		}
	}
	return c
}

// verifyStatement checks one statement's arithmetic: each movement's
// balance is the previous balance plus its amount, from the opening to the
// closing balance.
func verifyStatement(s statementData) []string {
	var out []string
	bal := s.Opening
	for i, m := range s.Movements {
		bal += m.Amount
		if m.Balance != bal {
			out = append(out, fmt.Sprintf("movement %d (%s %s at %s) shows balance %d, the running balance is %d", i, m.Type, m.TransactionID, m.At, m.Balance, bal))
			bal = m.Balance // report each break once
		}
	}
	if bal != s.Closing {
		out = append(out, fmt.Sprintf("opening %d plus the movements is %d, but it closes at %d", s.Opening, bal, s.Closing))
	}
	return out
}

func stamp(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

// statement reads client i's JSON statement of [from, to).
func statement(ctx context.Context, in AuditInput, i int, from, to time.Time) (statementData, error) {
	path := "/api/v1/wallet/statement?" + url.Values{"from": {stamp(from)}, "to": {stamp(to)}, "format": {"json"}}.Encode()
	var v struct {
		Data statementData `json:"data"`
	}
	if err := getJSON(ctx, in, i, path, &v); err != nil {
		return statementData{}, err
	}
	return v.Data, nil
}

// available reads client i's available balance.
func available(ctx context.Context, in AuditInput, i int) (int64, error) {
	var v struct {
		Data struct {
			Available *int64 `json:"available_cents"`
		} `json:"data"`
	}
	if err := getJSON(ctx, in, i, "/api/v1/wallet/balance", &v); err != nil {
		return 0, err
	}
	if v.Data.Available == nil {
		return 0, errors.New("the balance has no available_cents")
	}
	return *v.Data.Available, nil
}

func getJSON(ctx context.Context, in AuditInput, i int, path string, v any) error {
	status, _, body, err := in.Call(ctx, i, http.MethodGet, path, nil, nil)
	if err != nil {
		return fmt.Errorf("GET %s: %w", path, err)
	}
	if status != http.StatusOK {
		return fmt.Errorf("GET %s answered %d: %.200s", path, status, body)
	}
	if err := json.Unmarshal(body, v); err != nil {
		return fmt.Errorf("GET %s: %w", path, err)
	}
	return nil
}
