package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pixgate/pixgate/internal/pix"
)

// call sends one request as client cred and reads the whole answer. A
// non-nil error means the outcome is unknown (nothing or a partial answer
// arrived).
func (r *runner) call(ctx context.Context, cred Credential, method, path string, body []byte) (int, []byte, http.Header, error) {
	ctx, cancel := context.WithTimeout(ctx, r.cfg.RequestTimeout)
	defer cancel()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, r.cfg.Target+path, rd)
	if err != nil {
		return 0, nil, nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("stpi", cred.ID)
	req.Header.Set("stps", cred.Secret)
	resp, err := r.http.Do(req)
	if err != nil {
		return 0, nil, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return resp.StatusCode, nil, resp.Header, err
	}
	return resp.StatusCode, b, resp.Header, nil
}

// callRetry is call for the bench's own bookkeeping (funding, the check):
// it waits out 429s (Retry-After) and retries transport errors and 5xx a few
// times. Only idempotent requests may go through it.
func (r *runner) callRetry(ctx context.Context, cred Credential, method, path string, body []byte) (int, []byte, error) {
	for attempt := 0; ; attempt++ {
		st, b, h, err := r.call(ctx, cred, method, path, body)
		if ctx.Err() != nil {
			return st, b, ctx.Err()
		}
		if err == nil && st == http.StatusTooManyRequests && attempt < 1000 {
			wait := time.Second
			if n, perr := strconv.Atoi(h.Get("Retry-After")); perr == nil && n > 0 {
				wait = time.Duration(n) * time.Second
			}
			if sleep(ctx, wait) != nil {
				return st, b, ctx.Err()
			}
			continue
		}
		if (err != nil || st >= 500) && attempt < 5 {
			if sleep(ctx, time.Duration(attempt+1)*200*time.Millisecond) != nil {
				return st, b, ctx.Err()
			}
			continue
		}
		return st, b, err
	}
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// reais formats centavos as a JSON number in reais.
func reais(c pix.Amount) json.RawMessage {
	return json.RawMessage(fmt.Sprintf("%d.%02d", int64(c)/100, int64(c)%100))
}

type chargeBody struct {
	Amount        json.RawMessage `json:"amount"`
	ExternalID    string          `json:"external_id"`
	Payer         chargePayer     `json:"payer"`
	PayerQuestion string          `json:"payerQuestion"`
	PostbackURL   string          `json:"postbackUrl"`
	Products      []chargeProduct `json:"products"`
}

type chargePayer struct {
	Name        string        `json:"name"`
	Document    string        `json:"document"`
	PhoneNumber string        `json:"phoneNumber"`
	Email       string        `json:"email"`
	Address     chargeAddress `json:"address"`
}

type chargeAddress struct {
	Street       string `json:"street"`
	Number       string `json:"number"`
	Neighborhood string `json:"neighborhood"`
	City         string `json:"city"`
	State        string `json:"state"`
	ZipCode      string `json:"zipCode"`
}

type chargeProduct struct {
	Name     string          `json:"name"`
	Quantity string          `json:"quantity"`
	Price    json.RawMessage `json:"price"`
}

func (r *runner) chargeJSON(ext string, amount pix.Amount) []byte {
	b, _ := json.Marshal(chargeBody{
		Amount: reais(amount), ExternalID: ext,
		Payer: chargePayer{Name: "Maria Souza", Document: "52998224725", PhoneNumber: "11987654321", Email: "maria@example.com",
			Address: chargeAddress{Street: "Rua das Flores", Number: "100", Neighborhood: "Centro", City: "São Paulo", State: "SP", ZipCode: "01001000"}},
		PayerQuestion: "Pedido " + ext, PostbackURL: r.hook,
		Products: []chargeProduct{{Name: "Produto de teste", Quantity: "1", Price: reais(amount)}},
	})
	return b
}

type payoutBody struct {
	Amount      json.RawMessage `json:"amount"`
	Description string          `json:"description"`
	CreditParty struct {
		Name    string `json:"name"`
		KeyType string `json:"keyType"`
		Key     string `json:"key"`
	} `json:"creditParty"`
	CallbackURL string `json:"callbackUrl"`
	ExternalID  string `json:"external_id"`
}

// payoutKey returns the beneficiary key and the final status it leads to.
func (r *runner) payoutKey() (string, string) {
	n := rand.IntN(100)
	switch {
	case n < r.cfg.PayoutFailPercent:
		return "bench@fail.sandbox", "CANCELLED"
	case n < r.cfg.PayoutFailPercent+r.cfg.PayoutReversePercent:
		return "bench@reverse.sandbox", "REVERSED"
	}
	return "bench@example.com", "PAID"
}

func (r *runner) payoutJSON(ext string, amount pix.Amount, key string) []byte {
	var p payoutBody
	p.Amount, p.Description, p.CallbackURL, p.ExternalID = reais(amount), "bench payout "+ext, r.hook, ext
	p.CreditParty.Name, p.CreditParty.KeyType, p.CreditParty.Key = "Beneficiario Teste", "EMAIL", key
	b, _ := json.Marshal(p)
	return b
}

// ambiguous reports whether an answer leaves the outcome unknown.
func ambiguous(status int, err error) bool { return err != nil || status >= 500 }

// doCharge creates a charge for c; pool says whether the pay operation may
// pay it later. It returns the charge id when acknowledged.
func (r *runner) doCharge(ctx context.Context, c *clientState, start time.Time, pool bool) (string, bool) {
	ext := r.extID("c")
	amount := pix.Amount(100 + rand.IntN(50_000)) // R$ 1.00 – 500.99
	st, b, _, err := r.call(ctx, c.cred, http.MethodPost, "/api/v1/gateway/request-qrcode", r.chargeJSON(ext, amount))
	d := time.Since(start)
	var resp struct {
		PaymentID string `json:"payment_id"`
		Status    string `json:"status"`
	}
	ok := err == nil && st == http.StatusCreated && json.Unmarshal(b, &resp) == nil && resp.PaymentID != "" && resp.Status == "PENDING"
	r.statsOf(OpCharge, start).record(d, st, err, ok)
	switch {
	case ok:
		c.addCharge(&chargeRec{id: resp.PaymentID, ext: ext, amount: amount}, pool)
		return resp.PaymentID, true
	case ambiguous(st, err) || st/100 == 2:
		c.addUnknown(&unknownRec{typ: "cashin", ext: ext, amount: amount})
	default:
		c.addRejected(rejectedRec{typ: "cashin", ext: ext, status: st})
	}
	return "", false
}

func (r *runner) doPay(ctx context.Context, c *clientState, start time.Time) {
	due := start
	id, ok := c.popUnpaid()
	if !ok {
		// No charge waiting: create one first (it counts as a charge).
		if id, ok = r.doCharge(ctx, c, start, false); !ok {
			return
		}
		start = time.Now()
	}
	st, b, _, err := r.call(ctx, c.cred, http.MethodPost, "/api/v1/sandbox/charges/"+id+"/pay", nil)
	d := time.Since(start)
	var resp struct {
		Data struct {
			PaymentID string `json:"payment_id"`
			Status    string `json:"status"`
		} `json:"data"`
	}
	good := err == nil && st == http.StatusOK && json.Unmarshal(b, &resp) == nil && resp.Data.PaymentID == id && resp.Data.Status == "PAID"
	r.statsOf(OpPay, due).record(d, st, err, good)
	switch {
	case good:
		c.setPay(id, payAcked)
	case ambiguous(st, err) || st/100 == 2:
		c.setPay(id, payUnknown)
	default:
		c.setPay(id, payRejected)
	}
}

func (r *runner) doPayout(ctx context.Context, c *clientState, start time.Time) {
	ext := r.extID("p")
	amount := pix.Amount(1 + rand.IntN(1000)) // R$ 0.01 – 10.00
	key, want := r.payoutKey()
	st, b, _, err := r.call(ctx, c.cred, http.MethodPost, "/api/v1/gateway/pix-payment", r.payoutJSON(ext, amount, key))
	d := time.Since(start)
	var resp struct {
		TransactionID string     `json:"transaction_id"`
		Amount        pix.Amount `json:"amount"`
		Tax           pix.Amount `json:"tax"`
		Status        string     `json:"status"`
	}
	ok := err == nil && st == http.StatusOK && json.Unmarshal(b, &resp) == nil && resp.TransactionID != "" &&
		resp.Amount == amount && resp.Status == "PENDING"
	r.statsOf(OpPayout, start).record(d, st, err, ok)
	switch {
	case ok:
		c.addPayout(&payoutRec{id: resp.TransactionID, ext: ext, amount: amount, tax: resp.Tax, want: want})
	case ambiguous(st, err) || st/100 == 2:
		c.addUnknown(&unknownRec{typ: "cashout", ext: ext, amount: amount, want: want})
	default:
		c.addRejected(rejectedRec{typ: "cashout", ext: ext, status: st})
	}
}

func (r *runner) doRead(ctx context.Context, c *clientState, start time.Time, op string) {
	var st int
	var b []byte
	var err error
	switch op {
	case OpBalance:
		st, b, _, err = r.call(ctx, c.cred, http.MethodGet, "/api/v1/wallet/balance", nil)
	case OpHistory:
		st, b, _, err = r.call(ctx, c.cred, http.MethodGet, "/api/v1/wallet/transactions?limit=20", nil)
	case OpLookup:
		id, _ := c.randomID(rand.Uint64())
		st, b, _, err = r.call(ctx, c.cred, http.MethodPost, "/api/v1/wallet/transaction", []byte(`{"payment_id":"`+id+`"}`))
	}
	d := time.Since(start)
	r.statsOf(op, start).record(d, st, err, err == nil && st == http.StatusOK && json.Valid(b))
}

// one sends one operation of the mix, timed from start.
func (r *runner) one(ctx context.Context, start time.Time) {
	op := r.nextOp()
	c := r.pickClient()
	switch op {
	case OpCharge:
		r.doCharge(ctx, c, start, true)
	case OpPay:
		r.doPay(ctx, c, start)
	case OpPayout:
		r.doPayout(ctx, c, start)
	default:
		r.doRead(ctx, c, start, op)
	}
}

// load runs the warm-up, then the measured phase without a pause, and
// returns how long the measured phase took (until the last request sent
// before the deadline answered).
func (r *runner) load(ctx context.Context) time.Duration {
	start := time.Now()
	r.measureFrom = start.Add(r.cfg.Warmup)
	deadline := r.measureFrom.Add(r.cfg.Duration)
	var wg sync.WaitGroup
	if r.cfg.Rate <= 0 {
		for w := 0; w < r.cfg.Concurrency; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for ctx.Err() == nil {
					now := time.Now()
					if !now.Before(deadline) {
						return
					}
					r.one(ctx, now)
				}
			}()
		}
		wg.Wait()
		return time.Since(r.measureFrom)
	}
	// Open loop: request i is due at start + i/rate. Latency counts from
	// that moment, so a server (or a bench) falling behind shows up in the
	// percentiles instead of silently lowering the rate.
	sem := make(chan struct{}, r.cfg.MaxInFlight)
	for i := 0; ctx.Err() == nil; i++ {
		at := start.Add(time.Duration(float64(i) * float64(time.Second) / r.cfg.Rate))
		if !at.Before(deadline) {
			break
		}
		if d := time.Until(at); d > 0 && sleep(ctx, d) != nil {
			break
		}
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
		wg.Add(1)
		go func(at time.Time) {
			defer wg.Done()
			defer func() { <-sem }()
			r.one(ctx, at)
		}(at)
	}
	wg.Wait()
	return time.Since(r.measureFrom)
}

// readBalance returns the client's balance (with retries).
func (r *runner) readBalance(ctx context.Context, c *clientState) (balance, error) {
	st, b, err := r.callRetry(ctx, c.cred, http.MethodGet, "/api/v1/wallet/balance", nil)
	if err != nil {
		return balance{}, fmt.Errorf("client %s: balance: %w", c.cred.ID, err)
	}
	if st != http.StatusOK {
		return balance{}, fmt.Errorf("client %s: balance answered %d: %s", c.cred.ID, st, snippet(b))
	}
	var resp struct {
		Data struct {
			Available *int64 `json:"available_cents"`
			Pending   *int64 `json:"pending_cents"`
		} `json:"data"`
	}
	if err := json.Unmarshal(b, &resp); err != nil || resp.Data.Available == nil || resp.Data.Pending == nil {
		return balance{}, fmt.Errorf("client %s: unreadable balance: %s", c.cred.ID, snippet(b))
	}
	return balance{available: *resp.Data.Available, pending: *resp.Data.Pending}, nil
}

func snippet(b []byte) string {
	if len(b) > 200 {
		return string(b[:200]) + "…"
	}
	return string(b)
}

// forEachClient runs fn for every client in parallel and returns the first error.
func (r *runner) forEachClient(ctx context.Context, fn func(ctx context.Context, c *clientState) error) error {
	var wg sync.WaitGroup
	errs := make([]error, len(r.clients))
	sem := make(chan struct{}, r.cfg.CheckConcurrency)
	for i, c := range r.clients {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			errs[i] = fn(ctx, c)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// baselineQuiet is how long a client that already has transactions must
// hold still (no pending balance, available unchanged) before its balance
// counts as the baseline: a completed payout that its bank returns changes
// available one payout delay later without ever showing as pending.
const baselineQuiet = 3 * time.Second

// hasHistory reports whether the client has any transaction yet.
func (r *runner) hasHistory(ctx context.Context, c *clientState) (bool, error) {
	st, b, err := r.callRetry(ctx, c.cred, http.MethodGet, "/api/v1/wallet/transactions?limit=1", nil)
	if err != nil {
		return false, fmt.Errorf("client %s: history: %w", c.cred.ID, err)
	}
	var resp struct {
		Data []json.RawMessage `json:"data"`
	}
	if st != http.StatusOK || json.Unmarshal(b, &resp) != nil {
		return false, fmt.Errorf("client %s: history answered %d: %s", c.cred.ID, st, snippet(b))
	}
	return len(resp.Data) > 0, nil
}

// baseline records each client's balance before the run, once nothing of
// earlier runs is still settling (or the predicted final balance would be
// off by whatever settles during this one).
func (r *runner) baseline(ctx context.Context) error {
	deadline := time.Now().Add(r.cfg.SettleTimeout)
	return r.forEachClient(ctx, func(ctx context.Context, c *clientState) error {
		used, err := r.hasHistory(ctx, c)
		if err != nil {
			return err
		}
		var prev *balance
		for {
			b, err := r.readBalance(ctx, c)
			if err != nil {
				return err
			}
			switch {
			case b.pending == 0 && !used:
				c.baseline = b
				return nil
			case b.pending == 0 && prev != nil && *prev == b:
				c.baseline = b
				return nil
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("client %s is still settling earlier operations after %s (pending_cents %d); let them finish first",
					c.cred.ID, r.cfg.SettleTimeout, b.pending)
			}
			wait := 200 * time.Millisecond
			if b.pending == 0 {
				wait = baselineQuiet
				prev = &b
			} else {
				prev = nil
			}
			if err := sleep(ctx, wait); err != nil {
				return err
			}
		}
	})
}

// fund credits every client with cfg.Fund: one charge, paid in the sandbox.
// Both requests are idempotent (external_id; paying twice credits once), so
// they are retried.
func (r *runner) fund(ctx context.Context) error {
	return r.forEachClient(ctx, func(ctx context.Context, c *clientState) error {
		ext := r.extID("fund")
		st, b, err := r.callRetry(ctx, c.cred, http.MethodPost, "/api/v1/gateway/request-qrcode", r.chargeJSON(ext, r.cfg.Fund))
		if err != nil {
			return fmt.Errorf("client %s: funding charge: %w", c.cred.ID, err)
		}
		var resp struct {
			PaymentID string `json:"payment_id"`
			QRCode    string `json:"qrcode"`
		}
		if st != http.StatusCreated || json.Unmarshal(b, &resp) != nil || resp.PaymentID == "" {
			return fmt.Errorf("client %s: funding charge answered %d: %s", c.cred.ID, st, snippet(b))
		}
		c.addCharge(&chargeRec{id: resp.PaymentID, ext: ext, amount: r.cfg.Fund}, false)
		if r.cfg.FundViaPSPSim != "" {
			return r.payAtPSPSim(ctx, c, resp.PaymentID, resp.QRCode)
		}
		st, b, err = r.callRetry(ctx, c.cred, http.MethodPost, "/api/v1/sandbox/charges/"+resp.PaymentID+"/pay", nil)
		if err != nil {
			c.setPay(resp.PaymentID, payUnknown)
			return fmt.Errorf("client %s: paying the funding charge: %w", c.cred.ID, err)
		}
		if st != http.StatusOK {
			c.setPay(resp.PaymentID, payRejected)
			hint := ""
			if st == http.StatusNotFound {
				hint = " (the bench needs a sandbox server, or --fund-via-psp-sim)"
			}
			return fmt.Errorf("client %s: paying the funding charge answered %d%s: %s", c.cred.ID, st, hint, snippet(b))
		}
		c.setPay(resp.PaymentID, payAcked)
		return nil
	})
}

// payAtPSPSim has the payer of pixgate psp-sim pay the funding charge id
// (POST /sim/pay with its copy-and-paste code, since a dynamic BR Code
// carries no txid), then waits until pixgate reads it PAID: the simulator
// reports the Pix by webhook before answering, and pixgate would otherwise
// find it when it next reads the PSP's list. A retried POST answered 409
// (the cob is no longer payable) may mean the first one went through, so
// the wait decides.
func (r *runner) payAtPSPSim(ctx context.Context, c *clientState, id, code string) error {
	sim := &http.Client{Timeout: r.cfg.RequestTimeout}
	for attempt := 0; ; attempt++ {
		st, b, err := postText(ctx, sim, r.cfg.FundViaPSPSim+"/sim/pay", code)
		if err == nil && (st == http.StatusOK || st == http.StatusConflict && attempt > 0) {
			break
		}
		if (err != nil || st >= 500) && attempt < 5 {
			if sleep(ctx, time.Duration(attempt+1)*200*time.Millisecond) != nil {
				c.setPay(id, payUnknown)
				return ctx.Err()
			}
			continue
		}
		if err != nil {
			c.setPay(id, payUnknown)
			return fmt.Errorf("client %s: paying the funding charge at the PSP simulator: %w", c.cred.ID, err)
		}
		if st >= 500 {
			c.setPay(id, payUnknown)
			return fmt.Errorf("client %s: the PSP simulator answered %d to paying the funding charge: %s", c.cred.ID, st, snippet(b))
		}
		c.setPay(id, payRejected)
		return fmt.Errorf("client %s: the PSP simulator answered %d to paying the funding charge: %s", c.cred.ID, st, snippet(b))
	}
	deadline := time.Now().Add(r.cfg.SettleTimeout)
	for {
		v, found, err := r.lookup(ctx, c, "payment_id", id)
		if err == nil && found && v.Status == "PAID" {
			c.setPay(id, payAcked)
			return nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			c.setPay(id, payUnknown)
			if err != nil {
				return fmt.Errorf("client %s: the funding charge paid at the PSP simulator: %w", c.cred.ID, err)
			}
			return fmt.Errorf("client %s: the funding charge paid at the PSP simulator reads %q after %s, not PAID",
				c.cred.ID, v.Status, r.cfg.SettleTimeout)
		}
		if err := sleep(ctx, 100*time.Millisecond); err != nil {
			c.setPay(id, payUnknown)
			return err
		}
	}
}

// postText POSTs body as text/plain to url and reads the whole answer.
func postText(ctx context.Context, client *http.Client, url, body string) (int, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Content-Type", "text/plain")
	resp, err := client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
}

// sink receives the webhooks of the bench's operations.
type sink struct {
	url   string
	srv   *http.Server
	count atomic.Int64
}

func startSink() (*sink, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("webhook receiver: %w", err)
	}
	s := &sink{url: "http://" + ln.Addr().String() + "/webhook"}
	s.srv = &http.Server{ReadHeaderTimeout: 5 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		_, _ = io.Copy(io.Discard, req.Body)
		s.count.Add(1)
		w.WriteHeader(http.StatusNoContent)
	})}
	go func() { _ = s.srv.Serve(ln) }()
	return s, nil
}

func (s *sink) close() { _ = s.srv.Close() }
