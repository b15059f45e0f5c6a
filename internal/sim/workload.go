package sim

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/pixgate/pixgate/internal/pspsim"
)

// The workload: what merchants and payers do. Every operation's kind and
// parameters are drawn from the seed when it is generated; which earlier
// charge an operation names is resolved when it runs (pick modulo the
// charges created by then), so a replay issues the same operations in the
// same order while the machine decides their interleaving.

// Operation kinds, with their weights in the mix.
var opWeights = []struct {
	kind   string
	weight int
}{
	{"charge", 22},
	{"pay", 20},
	{"pay_wrong_amount", 4},
	{"pay_twice", 4},
	{"pay_lost_webhook", 4},
	{"pix_for_no_charge", 2},
	{"forged_webhook", 2},
	{"payout", 14},
	// Scheduled and batch payouts (payouts.go).
	{"scheduled_payout", 2},
	{"payout_batch", 2},
	{"refund", 10},
	{"read_balance", 4},
	{"read_lookup", 4},
	{"read_history", 3},
	{"read_statement", 2},
	{"retry", 3},
	// Pix Automático (recurrences.go): modest, as a merchant's
	// subscriptions are beside its charges.
	{"recurrence", 4},
	{"rec_approve", 3},
	{"rec_reject", 1},
	{"rec_cancel", 1},
	{"rec_cancel_by_payer", 1},
	{"cycle_debit", 3},
	{"cycle_fail", 1},
	// MED (disputes.go): rare, as contests are.
	{"med_return", 1},
	{"infraction", 2},
	{"infraction_decide", 2},
	{"defend", 1},
	// Marketplaces (accounts.go).
	{"sub_account", 1},
	{"transfer", 3},
}

// op is one operation, every parameter decided by the seed.
type op struct {
	kind    string
	n       int   // sequence number: keys and external ids derive from it
	client  int   // which merchant
	amount  int64 // centavos
	pick    int   // which earlier charge or creation
	variant int   // a kind's own choice
	dup     int   // concurrent copies of a creation (1: none)
}

// chargeRec is a charge the workload created.
type chargeRec struct {
	client int
	id     string
	txid   string
	amount int64
}

// Workload generates and runs operations and remembers what they created.
type Workload struct {
	rng     *rand.Rand
	clients int
	api     *API
	psp     *pspsim.Server
	hookURL func(client int) string

	mu      sync.Mutex
	n       int
	charges []chargeRec
	recs    []recRec
	keys    []KeyRecord
	counts  map[string]int
	issues  []string // answers that broke a rule while the run went on
	// contested are the Pix an infraction names (one each), infractions
	// the PSP's ids of them.
	contested   map[string]bool
	infractions []string
	// subs are each merchant's sub-accounts, accountOf the merchants'
	// own account_id.
	subs      map[int][]subRec
	accountOf map[int]string
	reads     int
	// hooks, when set, receive the sub-accounts' webhooks (their
	// pix.split.received).
	hooks subHooks
}

// NewWorkload returns the workload of seed over api and psp for clients
// merchants, whose webhooks go to hookURL(client).
func NewWorkload(seed uint64, clients int, api *API, psp *pspsim.Server, hookURL func(int) string) *Workload {
	rng := rand.New(rand.NewPCG(seed, 0x5eed)) //nolint:gosec // G404: a replayable workload must come from its seed
	return &Workload{rng: rng, clients: clients, api: api, psp: psp, hookURL: hookURL,
		counts: map[string]int{}, contested: map[string]bool{}, subs: map[int][]subRec{}, accountOf: map[int]string{}}
}

// Next draws the next operation.
func (w *Workload) Next() op {
	total := 0
	for _, o := range opWeights {
		total += o.weight
	}
	r := w.rng.IntN(total)
	kind := opWeights[len(opWeights)-1].kind
	for _, o := range opWeights {
		if r < o.weight {
			kind = o.kind
			break
		}
		r -= o.weight
	}
	w.n++
	o := op{kind: kind, n: w.n, client: w.rng.IntN(w.clients), pick: w.rng.IntN(1 << 30), variant: w.rng.IntN(100), dup: 1}
	switch kind {
	case "charge":
		o.amount = 100 + w.rng.Int64N(30000) // R$ 1.00 – 300.99
	case "payout", "scheduled_payout", "payout_batch":
		o.amount = 1 + w.rng.Int64N(3000) // up to R$ 30.00: most fit the balance, some do not
	case "transfer":
		o.amount = 1 + w.rng.Int64N(5000)
	case "refund":
		o.amount = 1 + w.rng.Int64N(20000)
	case "pay_wrong_amount", "pix_for_no_charge":
		o.amount = 1 + w.rng.Int64N(50000)
	case "recurrence":
		o.amount = 100 + w.rng.Int64N(20000)
	}
	if (kind == "charge" || kind == "payout" || kind == "recurrence") && w.rng.IntN(100) < 15 {
		o.dup = 2 + w.rng.IntN(2) // concurrent duplicates of one request
	}
	return o
}

// Run carries out o. Its errors are the workload's own (a malformed
// request); what the system answers is recorded, never an error.
func (w *Workload) Run(ctx context.Context, o op) {
	w.count(o.kind)
	switch o.kind {
	case "charge":
		w.charge(ctx, o)
	case "pay", "pay_wrong_amount", "pay_twice", "pay_lost_webhook":
		w.pay(ctx, o)
	case "pix_for_no_charge":
		txid := ""
		if o.variant < 50 {
			txid = fmt.Sprintf("nochargeholdsthis%015d", o.n)
		}
		_, _ = w.psp.Receive(ctx, txid, o.amount)
	case "forged_webhook":
		w.forge(ctx, o)
	case "payout":
		w.payout(ctx, o)
	case "scheduled_payout":
		w.scheduledPayout(ctx, o)
	case "payout_batch":
		w.payoutBatch(ctx, o)
	case "refund":
		w.refund(ctx, o)
	case "retry":
		w.retry(ctx, o)
	case "recurrence":
		w.recurrence(ctx, o)
	case "rec_approve", "rec_reject", "rec_cancel_by_payer":
		w.payerAnswers(ctx, o)
	case "rec_cancel":
		w.cancelRecurrence(ctx, o)
	case "cycle_debit", "cycle_fail":
		w.debit(ctx, o)
	case "med_return":
		w.medReturn(ctx, o)
	case "infraction":
		w.infraction(ctx, o)
	case "infraction_decide":
		w.decideInfraction(o)
	case "defend":
		w.defend(ctx, o)
	case "sub_account":
		w.subAccount(ctx, o)
	case "transfer":
		w.transfer(ctx, o)
	default:
		w.read(ctx, o)
	}
}

func (w *Workload) count(kind string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.counts[kind]++
}

func (w *Workload) issue(format string, args ...any) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.issues = append(w.issues, fmt.Sprintf(format, args...))
}

// reais formats centavos as a JSON number of reais.
func reais(c int64) json.RawMessage { return json.RawMessage(fmt.Sprintf("%d.%02d", c/100, c%100)) }

// create sends one idempotent creation, dup times at once, each copy
// retried while its outcome is unknown, and records its key with the
// first definitive answer; every copy's definitive answer must name the
// same transaction.
func (w *Workload) create(ctx context.Context, o op, kind, path string, header map[string]string, extID string, body []byte) KeyRecord {
	rec := KeyRecord{Kind: kind, Client: o.client, Method: http.MethodPost, Path: path, Key: header["Idempotency-Key"], ExtID: extID, Body: body}
	type answer struct {
		status int
		body   []byte
	}
	answers := make([]answer, o.dup)
	var wg sync.WaitGroup
	for i := range o.dup {
		wg.Add(1)
		go func() {
			defer wg.Done()
			status, b, err := w.api.CallRetrying(ctx, 8, o.client, http.MethodPost, path, header, body)
			if err != nil || retryable(status, nil) {
				return
			}
			answers[i] = answer{status, b}
		}()
	}
	wg.Wait()
	for _, a := range answers {
		if a.status == 0 {
			continue
		}
		if rec.Status == 0 {
			rec.Status, rec.Response = a.status, a.body
			rec.ID = answerID(a.body)
			continue
		}
		if id := answerID(a.body); a.status/100 == 2 && rec.Status/100 == 2 && id != rec.ID {
			w.issue("%s %s: concurrent duplicates created %s and %s", kind, describeKey(rec), rec.ID, id)
		}
	}
	w.mu.Lock()
	w.keys = append(w.keys, rec)
	w.mu.Unlock()
	return rec
}

func describeKey(r KeyRecord) string {
	if r.Key != "" {
		return "Idempotency-Key " + r.Key
	}
	return "external_id " + r.ExtID
}

// answerID is the transaction a creation's answer names.
func answerID(b []byte) string {
	var v struct {
		PaymentID     string `json:"payment_id"`
		TransactionID string `json:"transaction_id"`
		RefundID      string `json:"refund_id"`
		RecurrenceID  string `json:"recurrence_id"`
		Data          struct {
			TransferID string `json:"transfer_id"`
		} `json:"data"`
	}
	_ = json.Unmarshal(b, &v)
	switch {
	case v.Data.TransferID != "":
		return v.Data.TransferID
	case v.RecurrenceID != "":
		return v.RecurrenceID
	case v.RefundID != "":
		return v.RefundID
	case v.TransactionID != "":
		return v.TransactionID
	}
	return v.PaymentID
}

func (w *Workload) charge(ctx context.Context, o op) {
	ext := fmt.Sprintf("sim-charge-%d", o.n)
	m := map[string]any{
		"amount": reais(o.amount), "external_id": ext, "payerQuestion": "Pedido " + ext, "postbackUrl": w.hookURL(o.client),
		"payer": map[string]any{"name": "Maria Souza", "document": "52998224725", "phoneNumber": "11987654321", "email": "maria@example.com",
			"address": map[string]any{"street": "Rua A", "number": "1", "neighborhood": "Centro", "city": "Recife", "state": "PE", "zipCode": "50000000"}},
		"products": []any{map[string]any{"name": "Item", "quantity": "1", "price": reais(o.amount)}},
	}
	if sp := w.splitsFor(o); sp != nil {
		m["splits"] = sp
	}
	body, _ := json.Marshal(m)
	rec := w.create(ctx, o, "charge", "/api/v1/gateway/request-qrcode", nil, ext, body)
	if rec.Status != http.StatusCreated {
		return
	}
	var v struct {
		QRCode string `json:"qrcode"`
	}
	_ = json.Unmarshal(rec.Response, &v)
	txid := w.psp.TxIDOf(v.QRCode)
	if txid == "" {
		w.issue("charge %s: its qrcode is no cob's pixCopiaECola at the PSP", rec.ID)
		return
	}
	w.mu.Lock()
	w.charges = append(w.charges, chargeRec{client: o.client, id: rec.ID, txid: txid, amount: o.amount})
	w.mu.Unlock()
}

// pickCharge resolves o.pick among the charges created so far.
func (w *Workload) pickCharge(o op) (chargeRec, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.charges) == 0 {
		return chargeRec{}, false
	}
	return w.charges[o.pick%len(w.charges)], true
}

func (w *Workload) pay(ctx context.Context, o op) {
	c, ok := w.pickCharge(o)
	if !ok {
		return
	}
	opts := pspsim.PayOptions{}
	switch o.kind {
	case "pay_wrong_amount":
		opts.Valor = o.amount
	case "pay_twice":
		opts.Again = true // pays a paid, expired or removed cob all the same
	case "pay_lost_webhook":
		w.psp.LoseWebhooks(1)
	}
	_, _ = w.psp.PayWith(ctx, c.txid, opts) // a cob that cannot be paid refuses: nothing happens
}

func (w *Workload) payout(ctx context.Context, o op) {
	key := fmt.Sprintf("sim-payout-%d", o.n)
	beneficiary := fmt.Sprintf("fornecedor%d@example.com", o.n)
	if o.variant < 12 {
		beneficiary = fmt.Sprintf("fornecedor%d@fail.psp", o.n) // the PSP does not carry it out
	}
	m := map[string]any{"amount": reais(o.amount), "description": "Pagamento " + key, "callbackUrl": w.hookURL(o.client),
		"creditParty": map[string]any{"name": "Fornecedor Ltda", "keyType": "EMAIL", "key": beneficiary}}
	ext := ""
	if o.variant%2 == 0 {
		ext = key
		m["external_id"] = ext
	}
	body, _ := json.Marshal(m)
	w.create(ctx, o, "payout", "/api/v1/gateway/pix-payment", map[string]string{"Idempotency-Key": key}, ext, body)
}

func (w *Workload) refund(ctx context.Context, o op) {
	c, ok := w.pickCharge(o)
	if !ok {
		return
	}
	key := fmt.Sprintf("sim-refund-%d", o.n)
	m := map[string]any{"payment_id": c.id, "reason": "devolucao " + key}
	if o.variant < 60 {
		m["amount"] = reais(1 + o.amount%c.amount) // partial (or, by chance, all)
	}
	if o.variant >= 90 {
		m["reason"] = pspsim.FailRefundDescription // the PSP does not carry it out
	}
	body, _ := json.Marshal(m)
	o.client = c.client
	o.dup = 1
	w.create(ctx, o, "refund", "/api/v1/gateway/refund", map[string]string{"Idempotency-Key": key}, "", body)
}

// forge posts to the PSP webhook path a payment the PSP never received,
// for a real charge, as someone who learned the URL would: nothing may
// move (pixgate reads every reported payment back from the PSP).
func (w *Workload) forge(ctx context.Context, o op) {
	c, ok := w.pickCharge(o)
	if !ok {
		return
	}
	body, _ := json.Marshal(map[string]any{"pix": []any{map[string]any{
		"endToEndId": fmt.Sprintf("E99999999%s%011d", time.Now().UTC().Format("200601021504"), o.n),
		"txid":       c.txid, "valor": fmt.Sprintf("%d.%02d", c.amount/100, c.amount%100),
		"horario": time.Now().UTC().Format(time.RFC3339),
	}}})
	// 200, or 503 when the PSP could not be asked now (the PSP is then to
	// report again): either way nothing may move, which the audit checks.
	status := w.api.Forge(ctx, "/psp/webhook/"+pspWebhookSecret+"/pix", body)
	if status != 0 && status != http.StatusOK && status != http.StatusServiceUnavailable {
		w.issue("a well-formed PSP webhook was answered %d", status)
	}
}

// retry sends an earlier creation again, as a merchant that lost its
// answer does: the answer must be the one given before.
func (w *Workload) retry(ctx context.Context, o op) {
	w.mu.Lock()
	if len(w.keys) == 0 {
		w.mu.Unlock()
		return
	}
	rec := w.keys[o.pick%len(w.keys)]
	w.mu.Unlock()
	header := map[string]string{}
	if rec.Key != "" {
		header["Idempotency-Key"] = rec.Key
	}
	status, b, err := w.api.CallRetrying(ctx, 8, rec.Client, rec.Method, rec.Path, header, rec.Body)
	// A refused creation (4xx) created nothing and spent no key: its retry
	// is a new attempt, which may succeed now (docs/decisions.md).
	if err != nil || retryable(status, nil) || rec.Status/100 != 2 {
		return
	}
	if status != rec.Status || !sameJSON(b, rec.Response) {
		w.issue("%s %s replayed %d %s, first answered %d %s", rec.Kind, describeKey(rec), status, b, rec.Status, rec.Response)
	}
}

// sameJSON reports whether a and b are the same JSON value.
func sameJSON(a, b []byte) bool {
	var va, vb any
	if json.Unmarshal(a, &va) != nil || json.Unmarshal(b, &vb) != nil {
		return bytes.Equal(a, b)
	}
	ja, _ := json.Marshal(va)
	jb, _ := json.Marshal(vb)
	return bytes.Equal(ja, jb)
}

// read reads the wallet as a merchant does; every answer must be a 200
// (or no answer at all, while nodes die) and a balance never negative.
func (w *Workload) read(ctx context.Context, o op) {
	var (
		method = http.MethodGet
		path   string
		body   []byte
	)
	switch o.kind {
	case "read_balance":
		path = "/api/v1/wallet/balance"
	case "read_lookup":
		c, ok := w.pickCharge(o)
		if !ok {
			return
		}
		method, path, o.client = http.MethodPost, "/api/v1/wallet/transaction", c.client
		body, _ = json.Marshal(map[string]string{"payment_id": c.id})
	case "read_history":
		path = "/api/v1/wallet/transactions?limit=20"
	case "read_statement":
		now := time.Now().UTC()
		path = "/api/v1/wallet/statement?" + url.Values{"from": {now.Add(-time.Hour).Format(time.RFC3339)},
			"to": {now.Add(time.Minute).Format(time.RFC3339)}}.Encode()
	}
	status, _, b, err := w.api.Call(ctx, o.client, method, path, nil, body)
	w.mu.Lock()
	w.reads++
	w.mu.Unlock()
	if err != nil || status >= 500 {
		return // a node died under the request; the merchant reads again later
	}
	if status != http.StatusOK {
		w.issue("%s %s answered %d: %s", method, path, status, b)
		return
	}
	if o.kind == "read_balance" {
		var v struct {
			Data struct {
				Available int64 `json:"available_cents"`
				Pending   int64 `json:"pending_cents"`
			} `json:"data"`
		}
		if err := json.Unmarshal(b, &v); err != nil || v.Data.Available < 0 || v.Data.Pending < 0 {
			w.issue("balance of client %d read %s", o.client, b)
		}
	}
}

// Keys returns the idempotent creations made so far.
func (w *Workload) Keys() []KeyRecord {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]KeyRecord(nil), w.keys...)
}

// Counts returns the operations run so far, by kind.
func (w *Workload) Counts() map[string]int {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make(map[string]int, len(w.counts))
	for k, v := range w.counts {
		out[k] = v
	}
	return out
}

// Check is the workload's own rule: every answer during the run was
// consistent (duplicates named one transaction, replays answered as
// before, reads answered 200 with balances never negative).
func (w *Workload) Check() Check {
	w.mu.Lock()
	defer w.mu.Unlock()
	return Check{Name: "answers during the run consistent", Checked: len(w.keys) + w.reads, Violations: append([]string(nil), w.issues...)}
}
