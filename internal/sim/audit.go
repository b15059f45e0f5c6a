package sim

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/pixgate/pixgate/internal/ledger"
	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/provider"
	"github.com/pixgate/pixgate/internal/pspsim"
	"github.com/pixgate/pixgate/internal/store"
)

// The auditor: after the run quiesces it reads pixgate's database, the
// PSP simulator's books and what the merchants' receiver got, and checks
// what must be true of the money. Each rule is one check function below,
// returning one Check with how many things it looked at (the money's in
// audit_money.go, the clients' view in audit_api.go, the recurrences' in
// audit_rec.go); a new rule is a new function and a line in audit.

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
	med, err := medBooks(ctx, in.DB, txs)
	if err != nil {
		return false, "", fmt.Errorf("settled: %w", err)
	}
	moving = append(moving, medMoving(med, medFactsOf(med, psp, in.PSP))...)
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
	checkDisputes   = "MED disputes, blocks and returns as the PSP says"
	checkFamilies   = "money moves inside a family of accounts only as transfers"
	checkSplits     = "each split charge's shares as the split rules say"
)

// allChecks are the checks' names, in the order Audit returns them.
var allChecks = []string{checkOnce, checkFinal, checkAccounted, checkPaid, checkUnmatched, checkBalance, checkLedger,
	checkCycles, checkCycleMove, checkRecStatus, checkDisputes, checkFamilies, checkKeys, checkSplits, checkDelivered, checkReported, checkStatements}

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
		auditDisputes(b, medFactsOf(b, psp, in.PSP)),
		auditFamilies(b),
		auditKeys(ctx, in, b),
		auditSplits(ctx, in, b),
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
	Unmatched []pix.UnmatchedReceipt
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
	// Disputes are every MED dispute; Blocked each client's blocked
	// account, by client id.
	Disputes []pix.Dispute
	Blocked  map[string]pix.Amount
	// ParentOf is each client's parent ("" for one that is no
	// sub-account), Clearing each client's clearing account.
	ParentOf map[string]string
	Clearing map[string]pix.Amount
	// AccountOf is each client's account_id, which splits name; Splits
	// each credited split charge's entries as stored, by charge id.
	AccountOf map[string]string
	Splits    map[string][]pix.Split
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
	if b.Disputes, err = db.AllDisputes(ctx); err != nil {
		return b, err
	}
	b.Settlement, b.Fees, b.Blocked = map[string]pix.Amount{}, map[string]pix.FeeRule{}, map[string]pix.Amount{}
	b.ParentOf, b.Clearing, b.AccountOf = map[string]string{}, map[string]pix.Amount{}, map[string]string{}
	for _, c := range clients {
		b.AccountOf[c.ID] = c.AccountID
		b.Fees[c.ID] = c.CashinFee
		b.ParentOf[c.ID] = c.ParentID
		bal, err := db.Balances(ctx, c.ID)
		if err != nil {
			return b, err
		}
		b.Settlement[c.ID], b.Blocked[c.ID], b.Clearing[c.ID] = bal[ledger.Settlement], bal[ledger.Blocked], bal[ledger.Clearing]
	}
	b.Splits = map[string][]pix.Split{}
	for _, t := range b.Txs {
		if !credited(t) {
			continue
		}
		ss, err := db.Splits(ctx, t.ID)
		if err != nil {
			return b, err
		}
		if len(ss) > 0 {
			b.Splits[t.ID] = ss
		}
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
