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
	"github.com/pixgate/pixgate/internal/pix"
)

// The clients' view: idempotency keys replay, webhooks arrive, the
// reported counts and the statements agree with the books.

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
	// A refund's and a dispute's events are their own subjects beside
	// their charge's.
	type subject struct{ tx, refund, dispute string }
	have := map[subject]map[string]int{}
	for _, e := range b.Events {
		var body struct {
			RefundID  string `json:"refund_id"`
			DisputeID string `json:"dispute_id"`
		}
		_ = json.Unmarshal([]byte(e.Payload), &body)
		s := subject{e.TransactionID, body.RefundID, body.DisputeID}
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
		case t.Type == pix.TypeCashout && t.Status == pix.StatusCancelled && t.ScheduledDate() != "" && have[s][pix.EventCashoutCancelled] > 0:
			// A scheduled payout cancelled before its day (docs/payouts.md).
			check(what, s, "", pix.EventCashoutCancelled)
		case t.Type == pix.TypeCashout && t.Status == pix.StatusCancelled:
			check(what, s, "", pix.EventCashoutFailed)
		case t.Type == pix.TypeCashout && t.Status == pix.StatusReversed:
			check(what, s, "", pix.EventCashoutPaid, pix.EventCashoutReversed)
		case t.Type == pix.TypeSplit && t.CallbackURL != "":
			// A receiver's share of a split charge, to its postbackUrl.
			check(what, s, "", pix.EventSplitReceived)
		default:
			check(what, s, "") // not final: nothing reported yet
		}
	}
	for _, r := range b.Refunds {
		what := fmt.Sprintf("refund %s (%s)", r.ID, r.Status)
		s := subject{tx: r.TransactionID, refund: r.ID}
		switch r.Status {
		case pix.RefundCompleted:
			check(what, s, "", pix.EventRefundCompleted)
		case pix.RefundFailed:
			check(what, s, "", pix.EventRefundFailed)
		default:
			check(what, s, "")
		}
	}
	for _, d := range b.Disputes {
		what := fmt.Sprintf("dispute %s (%s %s)", d.ID, d.Status, d.Outcome)
		s := subject{tx: d.PaymentID, dispute: d.ID}
		switch {
		case d.Status == pix.DisputeOpen:
			check(what, s, "", pix.EventDisputeOpened)
		case d.ClosedAt != nil && d.ClosedAt.Equal(d.OpenedAt):
			// A return nobody announced: recorded closed at once.
			check(what, s, "", pix.EventDisputeClosed)
		default:
			check(what, s, "", pix.EventDisputeOpened, pix.EventDisputeClosed)
		}
	}
	recurrenceEvents(b, psp, func(what, tx, maybe string, want ...string) { check(what, subject{tx: tx}, maybe, want...) })
	// A batch of payouts reports its completion once (its items are
	// payouts, checked above); the books hold no batches, so its events are
	// its subject's only ones.
	for sub, n := range have {
		if n[pix.EventBatchCompleted] > 0 && len(n) == 1 {
			check("batch "+sub.tx, sub, "", pix.EventBatchCompleted)
		}
	}
	for s, n := range have {
		c.Violations = append(c.Violations, fmt.Sprintf("events %s name transaction %q refund %q dispute %q, which the books do not hold", formatCounts(n), s.tx, s.refund, s.dispute))
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
