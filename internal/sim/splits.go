package sim

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/pixgate/pixgate/internal/gateway"
	"github.com/pixgate/pixgate/internal/pix"
)

// Split charges in the workload: a share of the charges a merchant with
// sub-accounts makes carry splits among them, which are then paid (exactly
// or not), refunded and returned by MED as any charge is. The auditor then
// recomputes every paid split charge's shares from what was received and
// the fee, with the split rules' own arithmetic written again here (not
// pix.PlanSplits, so that a bug there is caught), and compares them with
// what the API and the books show (auditSplits).

// subHooks is where sub-accounts' webhooks go: the run's Receiver.
type subHooks interface {
	URLNamed(name string) string
	Register(name string, i int, c Credentials) error
}

// splitShare is how many charges of a merchant with sub-accounts carry
// splits, in percent.
const splitShare = 45

// fullPercent is 100 % in hundredths of a percent.
const fullPercent = 10_000

// splitsFor draws the splits of charge o among its merchant's
// sub-accounts, or nil: 1–3 entries, all percent or all amount, drawn from
// the operation's own numbers so that a replay draws the same. Some sum to
// the whole (the last is then capped to what the fee left), some hold a
// tiny entry (a percent that rounds to 0) and some give the first entry
// nearly all (the later ones cap to 0).
func (w *Workload) splitsFor(o op) []map[string]any {
	w.mu.Lock()
	subs := append([]subRec(nil), w.subs[o.client]...)
	w.mu.Unlock()
	if len(subs) == 0 || o.variant >= splitShare {
		return nil
	}
	r := rand.New(rand.NewPCG(uint64(o.pick), uint64(o.n))) //nolint:gosec // G404: drawn from the seed's numbers, so that a run replays
	k := 1 + r.IntN(min(3, len(subs)))
	first := r.IntN(len(subs))
	byPercent := r.IntN(2) == 0
	whole := int64(fullPercent)
	field := "percent"
	if !byPercent {
		whole, field = o.amount, "amount"
	}
	mode := r.IntN(10)
	tiny := r.IntN(k)
	left := whole
	out := make([]map[string]any, k)
	for i := range k {
		later := int64(k - 1 - i) // entries still to come, each at least 1
		var v int64
		switch {
		case mode == 0 && i == 0:
			v = left - later // nearly all: the later entries cap to 0
		case mode == 0:
			v = 1
		case mode == 1 && i == tiny:
			v = 1 // 0.01 % rounds to 0 of a net below R$ 50.00
		case mode <= 4 && i == k-1:
			v = left // the whole: the last caps to what the fee left
		default:
			v = 1 + r.Int64N(max(1, (left-later)/2))
		}
		left -= v
		out[i] = map[string]any{"account_id": subs[(first+i)%len(subs)].account, field: reais(v)}
	}
	return out
}

// splitEntry is one entry of a charge's splits as the workload asked:
// the receiver's account_id and its percent (hundredths) or amount.
type splitEntry struct {
	AccountID string
	Percent   int64
	Amount    pix.Amount
}

// planShares is the split rules' arithmetic: net is what the charge
// received less the parent's cash-in fee; in order, a percent entry gets
// its percent of net (centavos, half up) and an amount entry its amount,
// each capped at what is left of net.
func planShares(net pix.Amount, entries []splitEntry) []pix.Amount {
	out := make([]pix.Amount, len(entries))
	left := max(net, 0)
	for i, e := range entries {
		want := e.Amount
		if e.Percent > 0 {
			want = pix.Amount((int64(max(net, 0))*e.Percent*2 + fullPercent) / (2 * fullPercent))
		}
		out[i] = min(want, left)
		left -= out[i]
	}
	return out
}

// proRata is what each account credited shares[i] out of net gives back
// of total (a refund or a MED return): in proportion, centavos half up, in
// order, capped at what is left; the parent gives the rest.
func proRata(total, net pix.Amount, shares []pix.Amount) (parts []pix.Amount, parent pix.Amount) {
	parts = make([]pix.Amount, len(shares))
	parent = total
	if net <= 0 {
		return parts, parent
	}
	for i, s := range shares {
		p := pix.Amount((2*int64(total)*int64(s) + int64(net)) / (2 * int64(net)))
		parts[i] = min(p, parent)
		parent -= parts[i]
	}
	return parts, parent
}

// splitLookup is what a split charge's lookup shows of it.
type splitLookup struct {
	Tax        pix.Amount        `json:"tax"`
	PaidAmount *pix.Amount       `json:"paid_amount"`
	Splits     []pix.SplitCredit `json:"splits"`
}

// splitFacts is what auditSplits reads besides the books: the splits each
// charge was asked for (by charge id), and, through the API when it can
// call it, each split charge's lookup (by charge id) and each client's
// whole statement (by client id).
type splitFacts struct {
	Requests   map[string][]splitEntry
	Lookups    map[string]splitLookup
	Statements map[string]statementData
	Problems   []string
}

// auditSplits: every paid split charge credited each receiver the share
// the split rules give of what it received net of the parent's fee, as the
// lookup, pix.cashin.paid, the receivers' split transactions and their
// pix.split.received say; and each refund and MED return of it was taken
// from each account pro rata, as their statements show.
func auditSplits(ctx context.Context, in AuditInput, b books) Check {
	return checkSplitCharges(b, readSplitFacts(ctx, in, b))
}

// splitKey names a charge by its client and external_id.
type splitKey struct{ client, ext string }

// askedSplits is the splits each split charge of the workload asked for,
// by client and external_id, with a problem for each that does not parse.
func askedSplits(in AuditInput) (map[splitKey][]splitEntry, []string) {
	asked := map[splitKey][]splitEntry{}
	var problems []string
	for _, k := range in.Keys {
		if k.Kind != "charge" || k.ExtID == "" || k.Client < 0 || k.Client >= len(in.Clients) {
			continue
		}
		var body struct {
			Splits []pix.SplitRequest `json:"splits"`
		}
		if json.Unmarshal(k.Body, &body) != nil || len(body.Splits) == 0 {
			continue
		}
		entries := make([]splitEntry, len(body.Splits))
		for i, s := range body.Splits {
			entries[i].AccountID = s.AccountID
			var err error
			if len(s.Percent) > 0 {
				var p pix.Amount
				p, err = pix.ParseAmount(s.Percent)
				entries[i].Percent = int64(p)
			} else {
				entries[i].Amount, err = pix.ParseAmount(s.Amount)
			}
			if err != nil {
				problems = append(problems, fmt.Sprintf("charge %s: the workload's split %d does not parse: %v", k.ExtID, i, err))
			}
		}
		asked[splitKey{in.Clients[k.Client].ClientID, k.ExtID}] = entries
	}
	return asked, problems
}

// readSplitFacts gathers what checkSplitCharges compares the books with.
func readSplitFacts(ctx context.Context, in AuditInput, b books) splitFacts {
	f := splitFacts{Requests: map[string][]splitEntry{}}
	type ck = splitKey
	asked, problems := askedSplits(in)
	f.Problems = append(f.Problems, problems...)
	index := map[string]int{} // client id → index for in.Call
	for i, c := range in.Clients {
		index[c.ClientID] = i
	}
	involved := map[string]bool{}
	var earliest time.Time
	for _, t := range b.Txs {
		entries, ok := asked[ck{t.ClientID, t.ExternalID}]
		if t.Type != pix.TypeCashin || !ok {
			continue
		}
		f.Requests[t.ID] = entries
		if !credited(t) {
			continue
		}
		involved[t.ClientID] = true
		for _, e := range entries {
			for id, acc := range b.AccountOf {
				if acc == e.AccountID {
					involved[id] = true
				}
			}
		}
		if earliest.IsZero() || t.CreatedAt.Before(earliest) {
			earliest = t.CreatedAt
		}
		if in.Call == nil {
			continue
		}
		if f.Lookups == nil {
			f.Lookups = map[string]splitLookup{}
		}
		i, ok := index[t.ClientID]
		if !ok {
			continue
		}
		body, _ := json.Marshal(map[string]string{"payment_id": t.ID})
		status, _, resp, err := in.Call(ctx, i, http.MethodPost, "/api/v1/wallet/transaction", nil, body)
		var v struct {
			Data splitLookup `json:"data"`
		}
		if err != nil || status != http.StatusOK || json.Unmarshal(resp, &v) != nil {
			f.Problems = append(f.Problems, fmt.Sprintf("lookup of split charge %s answered %d %.200s (%v)", t.ID, status, resp, err))
			continue
		}
		f.Lookups[t.ID] = v.Data
	}
	if in.Call == nil || len(involved) == 0 {
		return f
	}
	f.Statements = map[string]statementData{}
	to := time.Now().UTC().Add(time.Minute)
	from := earliest.Add(-time.Hour)
	if e := to.Add(-gateway.MaxStatementWindow); from.Before(e) {
		from = e
	}
	// A client's movements may predate its first split charge (transfers,
	// other charges), which the statement window need not hold: only the
	// movements of split charges' refunds and returns are compared.
	for id := range involved {
		i, ok := index[id]
		if !ok {
			continue
		}
		s, err := statement(ctx, in, i, from, to)
		if err != nil {
			f.Problems = append(f.Problems, fmt.Sprintf("client %s: %v", id, err))
			continue
		}
		f.Statements[id] = s
	}
	return f
}

// checkSplitCharges compares the books (and what f read through the API)
// with the split rules. A nil Lookups or Statements skips that part.
func checkSplitCharges(b books, f splitFacts) Check {
	c := Check{Name: checkSplits, Violations: append([]string(nil), f.Problems...)}
	bad := func(format string, args ...any) { c.Violations = append(c.Violations, fmt.Sprintf(format, args...)) }
	clientOf := map[string]string{}
	for id, acc := range b.AccountOf {
		clientOf[acc] = id
	}
	splitTxs := map[string][]pix.Transaction{} // by source charge
	for _, t := range b.Txs {
		if t.Type == pix.TypeSplit {
			splitTxs[t.SourcePaymentID] = append(splitTxs[t.SourcePaymentID], t)
		}
	}
	events := map[string][]pix.Event{} // by transaction, of the types compared here
	for _, e := range b.Events {
		if e.Type == pix.EventSplitReceived || e.Type == pix.EventCashinPaid {
			events[e.TransactionID] = append(events[e.TransactionID], e)
		}
	}
	refunds := map[string][]pix.Refund{}
	for _, r := range b.Refunds {
		refunds[r.TransactionID] = append(refunds[r.TransactionID], r)
	}
	returned := map[string]pix.Amount{} // MED returns by charge
	for _, d := range b.Disputes {
		if d.Outcome == pix.OutcomeReturned {
			returned[d.PaymentID] += d.ReturnedAmount
		}
	}
	ids := make([]string, 0, len(f.Requests))
	for id := range f.Requests {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	tx := b.txByID()
	for _, id := range ids {
		t, entries := tx[id], f.Requests[id]
		if t == nil {
			continue
		}
		mine := splitTxs[id]
		delete(splitTxs, id)
		if !credited(*t) {
			c.Checked++
			if len(mine) > 0 {
				bad("charge %s is %s, yet %d split transactions name it", id, t.Status, len(mine))
			}
			continue
		}
		net := t.PaidAmount - t.Tax
		want := planShares(net, entries)
		c.Checked++
		// The lookup: the fee and amount the shares come from, and the
		// credits.
		if f.Lookups != nil {
			lk, ok := f.Lookups[id]
			switch {
			case !ok:
			case lk.PaidAmount == nil || *lk.PaidAmount != t.PaidAmount || lk.Tax != t.Tax:
				bad("split charge %s: the lookup shows paid_amount %v and tax %s, the books %s and %s", id, lk.PaidAmount, lk.Tax, t.PaidAmount, t.Tax)
			default:
				if v := compareCredits(entries, want, lk.Splits); v != "" {
					bad("split charge %s (received %s, fee %s): the lookup's splits %s", id, t.PaidAmount, t.Tax, v)
				}
			}
		}
		// pix.cashin.paid to the parent carries the same credits.
		for _, e := range events[id] {
			if e.Type != pix.EventCashinPaid {
				continue
			}
			var body struct {
				Splits []pix.SplitCredit `json:"splits"`
			}
			if err := json.Unmarshal([]byte(e.Payload), &body); err != nil {
				bad("pix.cashin.paid %s of split charge %s does not parse: %v", e.ID, id, err)
			} else if v := compareCredits(entries, want, body.Splits); v != "" {
				bad("pix.cashin.paid %s of split charge %s (received %s, fee %s): its splits %s", e.ID, id, t.PaidAmount, t.Tax, v)
			}
		}
		c.Checked += checkShares(bad, *t, entries, want, mine, clientOf, events)
		c.Checked += checkSplitReturns(&c, b, f, *t, entries, want, refunds[id], returned[id])
	}
	for src, ts := range splitTxs {
		bad("%d split transactions (e.g. %s of client %s) name %q, which is no split charge the workload made", len(ts), ts[0].ID, ts[0].ClientID, src)
	}
	return c
}

// compareCredits compares a split charge's credits as shown (lookup or
// event) with the entries and their shares; "" when they agree.
func compareCredits(entries []splitEntry, want []pix.Amount, got []pix.SplitCredit) string {
	parts := make([]string, len(want))
	for i, e := range entries {
		parts[i] = fmt.Sprintf("%s %s", e.AccountID, want[i])
	}
	expected := "[" + strings.Join(parts, ", ") + "]"
	shown := make([]string, len(got))
	for i, g := range got {
		a := "null"
		if g.Amount != nil {
			a = g.Amount.String()
		}
		shown[i] = fmt.Sprintf("%s %s", g.AccountID, a)
	}
	if s := "[" + strings.Join(shown, ", ") + "]"; s != expected {
		return fmt.Sprintf("are %s, the split rules give %s", s, expected)
	}
	return ""
}

// checkSplitReturns checks, on the statements, that each refund of split
// charge t took each account's pro rata share (a "refund" movement of the
// refund, and its "refund_failed" back when it failed), and that its MED
// returns took each receiver's share (its split transaction's "med_return"
// movements: the share, or all the receiver had with the rest its debt).
// It reports how many it looked at.
func checkSplitReturns(c *Check, b books, f splitFacts, t pix.Transaction, entries []splitEntry, want []pix.Amount,
	refunds []pix.Refund, medReturned pix.Amount) int {
	if f.Statements == nil {
		return 0
	}
	bad := func(format string, args ...any) { c.Violations = append(c.Violations, fmt.Sprintf(format, args...)) }
	net := t.PaidAmount - t.Tax
	clientOf := map[string]string{}
	for id, acc := range b.AccountOf {
		clientOf[acc] = id
	}
	moved := func(client, txID, typ string) (sum pix.Amount, n int, zeroAfter bool, ok bool) {
		s, ok := f.Statements[client]
		if !ok {
			return 0, 0, false, false
		}
		zeroAfter = true
		for _, m := range s.Movements {
			if m.TransactionID == txID && m.Type == typ {
				sum, n = sum+pix.Amount(m.Amount), n+1
				zeroAfter = zeroAfter && m.Balance == 0
			}
		}
		return sum, n, zeroAfter, true
	}
	checked := 0
	for _, r := range refunds {
		parts, own := proRata(r.Amount, net, want)
		accounts := []struct {
			client string
			share  pix.Amount
		}{{t.ClientID, own}}
		for i, e := range entries {
			accounts = append(accounts, struct {
				client string
				share  pix.Amount
			}{clientOf[e.AccountID], parts[i]})
		}
		for _, a := range accounts {
			held, _, _, ok := moved(a.client, r.ID, "refund")
			if !ok {
				continue
			}
			checked++
			if held != -a.share {
				bad("refund %s of %s of split charge %s (net %s): client %s's statement moves %s for it, its pro rata share is %s",
					r.ID, r.Amount, t.ID, net, a.client, held, a.share)
			}
			back, _, _, _ := moved(a.client, r.ID, "refund_failed")
			if r.Status == pix.RefundFailed && back != a.share || r.Status != pix.RefundFailed && back != 0 {
				bad("refund %s (%s) of split charge %s: client %s's statement gives back %s of its share %s", r.ID, r.Status, t.ID, a.client, back, a.share)
			}
		}
	}
	if medReturned > 0 {
		// One share of the total returned: the workload contests each Pix
		// once, so a charge has at most one MED return.
		parts, _ := proRata(medReturned, net, want)
		for i, e := range entries {
			rc := clientOf[e.AccountID]
			var splitID string
			for _, s := range b.Txs {
				if s.Type == pix.TypeSplit && s.SourcePaymentID == t.ID && s.ClientID == rc {
					splitID = s.ID
				}
			}
			if splitID == "" {
				if parts[i] != 0 {
					bad("MED return of %s of split charge %s: account %s owes %s of it and has no split transaction", medReturned, t.ID, e.AccountID, parts[i])
				}
				continue
			}
			took, n, zeroAfter, ok := moved(rc, splitID, "med_return")
			if !ok {
				continue
			}
			checked++
			// What the available balance could not cover is the
			// receiver's debt, which the statement does not show: less
			// than the share only when it took all there was (or there
			// was nothing, and no movement).
			if n == 0 && parts[i] > 0 {
				continue
			}
			if -took != parts[i] && (-took > parts[i] || !zeroAfter) {
				bad("MED return of %s of split charge %s (net %s): account %s's statement takes %s, its pro rata share is %s",
					medReturned, t.ID, net, e.AccountID, -took, parts[i])
			}
		}
	}
	return checked
}

// splitOutflow adds to want (each holder's settlement) total going out
// for charge t of client: all of it through client, unless t is a split
// charge, whose receivers each give their pro rata share of what they
// were credited.
func (b books) splitOutflow(want map[string]pix.Amount, t *pix.Transaction, client string, total pix.Amount) {
	var ss []pix.Split
	if t != nil {
		ss = b.Splits[t.ID]
	}
	if len(ss) == 0 {
		want[client] += total
		return
	}
	credited := make([]pix.Amount, len(ss))
	for i, s := range ss {
		if s.Credited != nil {
			credited[i] = *s.Credited
		}
	}
	parts, own := proRata(total, t.PaidAmount-t.Tax, credited)
	want[client] += own
	for i, s := range ss {
		want[s.ReceiverID] += parts[i]
	}
}

// checkShares checks charge t's split transactions (mine) against its
// shares (want): each non-zero share is one PAID split transaction of its
// receiver, reported by one pix.split.received; a zero share has none. It
// returns how many it checked.
func checkShares(bad func(string, ...any), t pix.Transaction, entries []splitEntry, want []pix.Amount, mine []pix.Transaction,
	clientOf map[string]string, events map[string][]pix.Event) int {
	id, checked := t.ID, 0
	byReceiver := map[string][]pix.Transaction{}
	for _, s := range mine {
		byReceiver[s.ClientID] = append(byReceiver[s.ClientID], s)
	}
	for i, e := range entries {
		rc := clientOf[e.AccountID]
		got := byReceiver[rc]
		delete(byReceiver, rc)
		switch {
		case want[i] == 0 && len(got) > 0:
			bad("split charge %s: entry %d (account %s) gets 0, yet has %d split transactions", id, i, e.AccountID, len(got))
			continue
		case want[i] == 0:
			continue
		case len(got) != 1:
			bad("split charge %s: entry %d (account %s) gets %s, and has %d split transactions", id, i, e.AccountID, want[i], len(got))
			continue
		}
		s := got[0]
		checked++
		if s.Amount != want[i] || s.Status != pix.StatusPaid {
			bad("split charge %s (received %s, fee %s): account %s's split transaction %s is %s %s, its share is %s",
				id, t.PaidAmount, t.Tax, e.AccountID, s.ID, s.Status, s.Amount, want[i])
		}
		n := 0
		for _, ev := range events[s.ID] {
			if ev.Type != pix.EventSplitReceived {
				continue
			}
			n++
			var body struct {
				Source string     `json:"source_payment_id"`
				Value  pix.Amount `json:"value"`
			}
			if err := json.Unmarshal([]byte(ev.Payload), &body); err != nil || body.Source != id || body.Value != want[i] {
				bad("pix.split.received %s of split %s reports %s of %q, its share is %s of %s", ev.ID, s.ID, body.Value, body.Source, want[i], id)
			}
		}
		// Every sub-account the run makes has a postbackUrl; one made
		// without (no receiver) gets no event.
		if expect := min(len(s.CallbackURL), 1); n != expect {
			bad("split %s (account %s's share of charge %s) has %d pix.split.received, expected %d", s.ID, e.AccountID, id, n, expect)
		}
	}
	for rc, got := range byReceiver {
		bad("split charge %s: client %s, in none of its splits, has %d split transactions of it", id, rc, len(got))
	}
	return checked
}
