package e2e

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image/png"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/makiuchi-d/gozxing"
	zxingqr "github.com/makiuchi-d/gozxing/qrcode"
	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/internal/pspsim"
	"github.com/pixgate/pixgate/internal/testkit"
)

// e2eWebhookSecret is the <secret> of the PSP webhook URL of these tests.
const e2eWebhookSecret = "e2e_Webhook-secret-0123456789ABCDEFghij"

// pspE2E is one simulated PSP, one database, one merchant client and the
// serve processes pointed at them.
type pspE2E struct {
	db     string
	sim    *pspsim.Server
	conf   *testkit.Conformance // nil when BACEN's OpenAPI is not available
	env    map[string]string
	keyPEM []byte
	recv   *e2eReceiver
	c      testkit.Creds

	mu     sync.Mutex
	tokens map[string]bool // every Bearer token serve presented
	procs  []*proc         // every serve process started
}

// newPSPE2E starts a simulator whose transfers settle only on Settle,
// creates a production client with fees on db, and registers, before
// anything else, the end-of-test checks: no secret in any serve output
// and the OpenAPI conformance of every exchange.
func newPSPE2E(t *testing.T, db string) *pspE2E {
	t.Helper()
	e := &pspE2E{db: db, tokens: map[string]bool{}}
	if os.Getenv(testkit.BACENOpenAPIEnv) != "" || os.Getenv("CI") == "true" {
		e.conf = testkit.BACENValidator(t)
	} else {
		t.Logf("%s unset: the API Pix exchanges are not checked against the OpenAPI", testkit.BACENOpenAPIEnv)
	}
	e.sim = pspsim.New(pspsim.Options{SettleDelay: -1, ControlAddr: "127.0.0.1:0", Wrap: func(next http.Handler) http.Handler {
		if e.conf != nil {
			next = e.conf.Wrap(next)
		}
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok {
				e.mu.Lock()
				e.tokens[tok] = true
				e.mu.Unlock()
			}
			next.ServeHTTP(w, r)
		})
	}})
	require.NoError(t, e.sim.Start(t.Context()))
	t.Cleanup(e.sim.Close)
	t.Cleanup(func() { e.checkLogs(t) }) // runs after every process's kill (cleanups run last-in first-out)
	if e.conf != nil {
		t.Cleanup(func() { e.conf.Check(t) })
	}
	opts := e.sim.Options()
	e.keyPEM = opts.PKI.ClientKeyPEM
	files, err := opts.PKI.WriteFiles(t.TempDir())
	require.NoError(t, err)
	e.env = map[string]string{
		"PIXGATE_ENV":                    "production",
		"PIXGATE_PROVIDER":               "efi",
		"PIXGATE_RATE_LIMIT":             "1000000",
		"PIXGATE_WEBHOOK_ALLOW_PRIVATE":  "true",
		"PIXGATE_WEBHOOK_RETRY_SCHEDULE": "200ms,200ms,200ms",
		"PIXGATE_PSP_API_URL":            e.sim.URL(),
		"PIXGATE_PSP_CLIENT_ID":          opts.ClientID,
		"PIXGATE_PSP_CLIENT_SECRET":      opts.ClientSecret,
		"PIXGATE_PSP_CERT_FILE":          files.ClientCert,
		"PIXGATE_PSP_KEY_FILE":           files.ClientKey,
		"PIXGATE_PSP_CA_FILE":            files.CA,
		"PIXGATE_PSP_PIX_KEY":            opts.PixKey,
	}
	e.recv = newE2EReceiver(t)
	code, out, errOut := run(t, "clients", "create", "--database-url", db, "--name", "Loja E2E", "--env", "production",
		"--cashin-fee-percent", "1", "--payout-fee-fixed", "0.50")
	require.Equal(t, 0, code, errOut)
	e.c = testkit.DecodeOne(t, out, testkit.CredKeys...)
	return e
}

// e2eFreeAddr returns a loopback address nothing listens on.
func e2eFreeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	return addr
}

// start runs `pixgate serve` on addr (a free one when empty) with the PSP
// webhook URL pointing at hookAddr (addr itself when empty), and waits
// until it answers /healthz and the simulator has its webhook URL.
func (e *pspE2E) start(t *testing.T, addr, hookAddr string) *proc {
	t.Helper()
	if addr == "" {
		addr = e2eFreeAddr(t)
	}
	if hookAddr == "" {
		hookAddr = addr
	}
	hookURL := "http://" + hookAddr + "/psp/webhook/" + e2eWebhookSecret
	cmd := exec.Command(buildPixgate(t), "serve", "--addr", addr, "--database-url", e.db)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "PIXGATE_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	for k, v := range e.env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	cmd.Env = append(cmd.Env, "PIXGATE_PSP_WEBHOOK_URL="+hookURL)
	p := &proc{cmd: cmd, addr: addr, stdout: &testkit.Buffer{}, stderr: &testkit.Buffer{}, exited: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = p.stdout, p.stderr
	require.NoError(t, cmd.Start())
	go func() { _ = cmd.Wait(); close(p.exited) }()
	e.mu.Lock()
	e.procs = append(e.procs, p)
	e.mu.Unlock()
	t.Cleanup(p.kill)
	e2eWait(t, 30*time.Second, "serve answers /healthz", func() bool {
		resp, err := testHTTP.Get("http://" + addr + "/healthz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}, p)
	e2eWait(t, 30*time.Second, "the PSP webhook is registered", func() bool { return e.sim.State().Webhook == hookURL }, p)
	return p
}

// checkLogs requires that no line any serve process wrote holds the PSP's
// client secret, an access token the simulator issued, the webhook secret,
// the client key or the merchant's API secret.
func (e *pspE2E) checkLogs(t *testing.T) {
	t.Helper()
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.procs) == 0 {
		return
	}
	secrets := map[string]string{
		"the PSP client secret":       e.env["PIXGATE_PSP_CLIENT_SECRET"],
		"the PSP webhook secret":      e2eWebhookSecret,
		"a private key":               "PRIVATE KEY",
		"the merchant client secret":  e.c.ClientSecret,
		"the merchant webhook secret": e.c.WebhookSecret,
		"most of the webhook secret":  e2eWebhookSecret[:32],
	}
	for i, line := range strings.Split(string(e.keyPEM), "\n") {
		if len(line) >= 32 && !strings.HasPrefix(line, "-----") {
			secrets[fmt.Sprintf("line %d of the client key", i)] = line
		}
	}
	require.NotEmpty(t, e.tokens, "serve presented no access token to the PSP")
	for tok := range e.tokens {
		secrets[fmt.Sprintf("the access token %.4s…", tok)] = tok
	}
	for i, p := range e.procs {
		p.kill()
		out := p.stdout.String() + p.stderr.String()
		require.Contains(t, out, `"msg":"listening"`, "process %d wrote nothing", i)
		// Not even a wrong guess at the secret path is written out.
		for rest := out; ; {
			_, after, ok := strings.Cut(rest, "/psp/webhook/")
			if !ok {
				break
			}
			require.True(t, strings.HasPrefix(after, "{secret}"), "serve process %d logged a PSP webhook path: …%.80s", i, after)
			rest = after
		}
		for what, s := range secrets {
			require.NotEmpty(t, s, what)
			if idx := strings.Index(out, s); idx >= 0 {
				start := strings.LastIndex(out[:idx], "\n") + 1
				end := idx + strings.Index(out[idx:]+"\n", "\n")
				t.Errorf("serve process %d logged %s:\n%s", i, what, out[start:end])
			}
		}
	}
}

// e2eReceiver is the merchant's webhook receiver.
type e2eReceiver struct {
	url  string
	mu   sync.Mutex
	byID map[string]map[string]any // body by webhook-id
}

func newE2EReceiver(t *testing.T) *e2eReceiver {
	t.Helper()
	r := &e2eReceiver{byID: map[string]map[string]any{}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		var body map[string]any
		_ = json.NewDecoder(req.Body).Decode(&body)
		r.mu.Lock()
		r.byID[req.Header.Get("webhook-id")] = body
		r.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(srv.Close)
	r.url = srv.URL + "/hook"
	return r
}

// count is how many distinct events named event the receiver got for the
// transaction id.
func (r *e2eReceiver) count(event, id string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, b := range r.byID {
		if b["event"] == event && (b["payment_id"] == id || b["transaction_id"] == id) {
			n++
		}
	}
	return n
}

// e2eWait polls cond until it holds, failing after within or when one of
// procs exits.
func e2eWait(t *testing.T, within time.Duration, what string, cond func() bool, procs ...*proc) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		for _, p := range procs {
			select {
			case <-p.exited:
				t.Fatalf("serve exited before %s; stderr:\n%s", what, p.stderr.String())
			default:
			}
		}
		if time.Now().After(deadline) {
			var logs strings.Builder
			for _, p := range procs {
				logs.WriteString(p.stderr.String())
			}
			t.Fatalf("%s: not within %s; serve's stderr:\n%s", what, within, logs.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

var e2eHTTP = &http.Client{Timeout: 30 * time.Second}

// call sends one authenticated JSON request and returns the status, the
// decoded body and the raw body; header is pairs of name and value.
func (e *pspE2E) call(t *testing.T, p *proc, method, path string, body any, header ...string) (int, map[string]any, string) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		require.NoError(t, err)
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequestWithContext(t.Context(), method, "http://"+p.addr+path, rd)
	require.NoError(t, err)
	req.Header.Set("stpi", e.c.ClientID)
	req.Header.Set("stps", e.c.ClientSecret)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := e2eHTTP.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	var out map[string]any
	_ = json.Unmarshal(raw, &out)
	return resp.StatusCode, out, string(raw)
}

// charge creates a charge of amount reais and returns its payment_id and
// the txid of its cob at the PSP, whose pixCopiaECola is the qrcode
// verbatim and which the QR image encodes.
func (e *pspE2E) charge(t *testing.T, p *proc, ext string, amount float64) (id, txid string) {
	t.Helper()
	body := charge(ext, amount)
	body["postbackUrl"] = e.recv.url
	status, resp, raw := e.call(t, p, "POST", "/api/v1/gateway/request-qrcode", body)
	require.Equal(t, http.StatusCreated, status, "%s; stderr:\n%s", raw, p.stderr.String())
	require.Equal(t, "PENDING", resp["status"])
	code, _ := resp["qrcode"].(string)
	require.NotEmpty(t, code)
	require.Equal(t, code, e2eDecodeQR(t, resp["qrcode_image"].(string)), "qrcode_image encodes qrcode")
	var found int
	for _, cob := range e.sim.State().Cobs {
		if cob.PixCopiaECola == code {
			found++
			txid = cob.TxID
		}
	}
	require.Equal(t, 1, found, "one cob at the PSP whose pixCopiaECola is the qrcode verbatim")
	return resp["payment_id"].(string), txid
}

// e2eDecodeQR decodes the plain-Base64 PNG of a QR code.
func e2eDecodeQR(t *testing.T, b64 string) string {
	t.Helper()
	raw, err := base64.StdEncoding.DecodeString(b64)
	require.NoError(t, err, "qrcode_image is plain Base64")
	img, err := png.Decode(bytes.NewReader(raw))
	require.NoError(t, err, "qrcode_image is a PNG")
	bmp, err := gozxing.NewBinaryBitmapFromImage(img)
	require.NoError(t, err)
	res, err := zxingqr.NewQRCodeReader().Decode(bmp, nil)
	require.NoError(t, err, "qrcode_image holds a QR code")
	return res.GetText()
}

// status is the lookup status of transaction id.
func (e *pspE2E) status(t *testing.T, p *proc, id string) string {
	t.Helper()
	code, resp, raw := e.call(t, p, "POST", "/api/v1/wallet/transaction", map[string]any{"payment_id": id})
	require.Equal(t, http.StatusOK, code, raw)
	return resp["data"].(map[string]any)["status"].(string)
}

// waitStatus waits until transaction id reads want.
func (e *pspE2E) waitStatus(t *testing.T, p *proc, id, want string, within time.Duration) {
	t.Helper()
	e2eWait(t, within, id+" reads "+want, func() bool { return e.status(t, p, id) == want }, p)
}

// balance returns the client's available and pending centavos.
func (e *pspE2E) balance(t *testing.T, p *proc) (available, pending int64) {
	t.Helper()
	code, resp, raw := e.call(t, p, "GET", "/api/v1/wallet/balance", nil)
	require.Equal(t, http.StatusOK, code, raw)
	d := resp["data"].(map[string]any)
	return int64(d["available_cents"].(float64)), int64(d["pending_cents"].(float64))
}

// pay has the simulator's payer pay txid and returns the end-to-end id.
func (e *pspE2E) pay(t *testing.T, txid string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	e2e, err := e.sim.Pay(ctx, txid)
	require.NoError(t, err)
	require.Len(t, e2e, 32)
	return e2e
}

// delivery is the simulator's webhook delivery of end-to-end id e2e.
func (e *pspE2E) delivery(t *testing.T, e2e string) pspsim.Delivery {
	t.Helper()
	for _, d := range e.sim.Deliveries() {
		if len(d.EndToEndIDs) == 1 && d.EndToEndIDs[0] == e2e {
			return d
		}
	}
	t.Fatalf("the simulator made no delivery of %s", e2e)
	return pspsim.Delivery{}
}

// payPageShowsE2E requires the pay page of charge id to show the end-to-end id.
func payPageShowsE2E(t *testing.T, p *proc, id, e2e string) {
	t.Helper()
	resp, err := testHTTP.Get("http://" + p.addr + "/pay/" + id)
	require.NoError(t, err)
	defer resp.Body.Close()
	html, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Contains(t, string(html), `data-testid="end-to-end-id">`+e2e+`<`)
}

// requests counts the simulator's requests with method (any when empty)
// whose path starts with prefix, and of them those answered with status
// (any when 0).
func (e *pspE2E) requests(method, prefix string, status int) int {
	n := 0
	for _, r := range e.sim.Requests() {
		if (method == "" || r.Method == method) && strings.HasPrefix(r.Path, prefix) && (status == 0 || r.Status == status) {
			n++
		}
	}
	return n
}

// listings counts the readings of Efí's list of sent Pix answered 200.
func (e *pspE2E) listings() int {
	n := 0
	for _, r := range e.sim.Requests() {
		if r.Method == http.MethodGet && r.Path == "/v2/gn/pix/enviados" && r.Status == http.StatusOK {
			n++
		}
	}
	return n
}

// readings counts the readings of the PSP's received list (GET /pix)
// answered 200.
func (e *pspE2E) readings() int {
	n := 0
	for _, r := range e.sim.Requests() {
		if r.Method == http.MethodGet && r.Path == "/v2/pix" && r.Status == http.StatusOK {
			n++
		}
	}
	return n
}

// e2eEvents counts the recorded events of type event of transaction id.
func e2eEvents(t *testing.T, dbURL, id, event string) int {
	t.Helper()
	evs, err := testkit.OpenURL(t, dbURL).Events(t.Context(), id)
	require.NoError(t, err)
	n := 0
	for _, ev := range evs {
		if ev.Type == event {
			n++
		}
	}
	return n
}

func e2eCheckLedger(t *testing.T, dbURL string) {
	t.Helper()
	require.NoError(t, testkit.OpenURL(t, dbURL).CheckLedger(t.Context()))
}

// TestPSPE2ECashIn: a charge is a cob at the PSP whose pixCopiaECola is
// the qrcode; the PSP's payment reaches serve by webhook and is credited
// with the PSP's end-to-end id; a PSP that is down makes the charge a 502
// that leaves nothing behind; an expired token is renewed on the 401; a
// payment whose webhook is lost is credited by the reading of the PSP's
// received list (cashin.DefaultReconcileEvery, 20 s: serve has no setting
// for it, so this test waits up to that long).
func TestPSPE2ECashIn(t *testing.T) {
	t.Parallel()
	testkit.ForEachDatabaseURL(t, func(t *testing.T, db string) {
		e := newPSPE2E(t, db)
		n := e.start(t, "", "")
		opts := e.sim.Options()

		// Charge → cob.
		id, txid := e.charge(t, n, "e2e-cashin-1", 25.90)
		var cob = e.sim.State().Cobs[0]
		require.Equal(t, txid, cob.TxID)
		require.Regexp(t, `^[a-zA-Z0-9]{26,35}$`, txid)
		require.Equal(t, pspsim.CobAtiva, cob.Status)
		require.Equal(t, "25.90", cob.Valor.Original)
		require.Equal(t, opts.PixKey, cob.Chave)
		require.Equal(t, 86400, cob.Calendario.Expiracao, "PIXGATE_CHARGE_TTL (24h) in seconds")
		require.NotNil(t, cob.Devedor)
		require.Equal(t, "52998224725", cob.Devedor.CPF)
		require.Equal(t, "Maria", cob.Devedor.Nome)
		require.Equal(t, "Pedido", cob.SolicitacaoPagador)
		require.Equal(t, "PENDING", e.status(t, n, id))

		// Pay → the PSP's webhook → PAID with the PSP's end-to-end id.
		e2e := e.pay(t, txid)
		require.Equal(t, http.StatusOK, e.delivery(t, e2e).Status)
		e.waitStatus(t, n, id, "PAID", 20*time.Second)
		payPageShowsE2E(t, n, id, e2e)
		require.Positive(t, e.requests("GET", "/v2/pix/"+e2e, http.StatusOK), "the reported Pix was read back from the PSP")
		avail, pending := e.balance(t, n)
		require.Equal(t, int64(2590-26), avail, "25.90 less the 1%% fee")
		require.Zero(t, pending)
		e2eWait(t, 20*time.Second, "pix.cashin.paid delivered", func() bool { return e.recv.count("pix.cashin.paid", id) == 1 }, n)

		// PSP down: 502, nothing created; the same external_id works later.
		e.sim.SetDown(true)
		status, _, raw := e.call(t, n, "POST", "/api/v1/gateway/request-qrcode", charge("e2e-down", 12))
		require.Equal(t, http.StatusBadGateway, status, raw)
		require.Equal(t, `{"statusCode":502,"message":"Payment provider unavailable","error":"Bad Gateway"}`, strings.TrimSpace(raw))
		status, _, raw = e.call(t, n, "POST", "/api/v1/wallet/transaction", map[string]any{"external_id": "e2e-down"})
		require.Equal(t, http.StatusNotFound, status, "no charge exists after a 502: %s", raw)
		require.Contains(t, n.stderr.String(), "the PSP did not create a charge", "the 502 is logged")
		cobs := len(e.sim.State().Cobs)
		e.sim.SetDown(false)
		downID, _ := e.charge(t, n, "e2e-down", 12)
		require.Len(t, e.sim.State().Cobs, cobs+1)
		require.Equal(t, "PENDING", e.status(t, n, downID))

		// Token expiry: the next call gets a 401, a new token, and succeeds.
		// (The background reading of the received list may be the call
		// that meets the 401 first: any path counts.)
		tokens := e.requests("POST", "/oauth/token", http.StatusOK)
		require.Positive(t, tokens)
		refused := e.requests("", "/", http.StatusUnauthorized)
		e.sim.ExpireTokens()
		tokID, _ := e.charge(t, n, "e2e-token", 3)
		require.Equal(t, "PENDING", e.status(t, n, tokID))
		require.Greater(t, e.requests("POST", "/oauth/token", http.StatusOK), tokens, "a new token was fetched")
		require.Greater(t, e.requests("", "/", http.StatusUnauthorized), refused, "the old token was refused")

		// Lost webhook: credited by the reading of the received list.
		lostID, lostTx := e.charge(t, n, "e2e-lost", 7.5)
		e.sim.LoseWebhooks(1)
		lostE2E := e.pay(t, lostTx)
		require.True(t, e.delivery(t, lostE2E).Lost)
		readings := e.readings()
		e.waitStatus(t, n, lostID, "PAID", 90*time.Second)
		require.Greater(t, e.readings(), readings, "credited by a reading of the PSP's received list")
		payPageShowsE2E(t, n, lostID, lostE2E)
		avail, pending = e.balance(t, n)
		require.Equal(t, int64(2590-26+750-8), avail)
		require.Zero(t, pending)
		require.Equal(t, 1, e2eEvents(t, db, lostID, "pix.cashin.paid"))
		e2eCheckLedger(t, db)
	})
}

// TestPSPE2EPayoutAndRefunds: a payout the PSP committed while its answer
// never came, with serve SIGKILLed at that moment and restarted, is read
// before any resend (after the 30 s hold of the step), sent exactly once
// and completes; refunds are devoluções at the PSP, created once, even
// when the PSP commits one and answers 500, and complete on settlement.
func TestPSPE2EPayoutAndRefunds(t *testing.T) {
	t.Parallel()
	testkit.ForEachDatabaseURL(t, func(t *testing.T, db string) {
		e := newPSPE2E(t, db)
		n := e.start(t, "", "")

		// Funds: two paid charges (1% cash-in fee).
		fundID, fundTx := e.charge(t, n, "e2e-fund", 100)
		refID, refTx := e.charge(t, n, "e2e-refundable", 20)
		e.pay(t, fundTx)
		refE2E := e.pay(t, refTx)
		e.waitStatus(t, n, fundID, "PAID", 20*time.Second)
		e.waitStatus(t, n, refID, "PAID", 20*time.Second)
		avail, _ := e.balance(t, n)
		require.Equal(t, int64(9900+1980), avail)

		// The PSP commits the send and never answers; serve dies then.
		e.sim.AddFault(pspsim.Fault{Method: "PUT", PathPrefix: "/v3/gn/pix/", Kind: pspsim.FaultCommitThenHang})
		status, resp, raw := e.call(t, n, "POST", "/api/v1/gateway/pix-payment", map[string]any{
			"amount": 30, "description": "Fornecedor", "callbackUrl": e.recv.url,
			"creditParty": map[string]any{"name": "Fornecedor", "keyType": "EVP", "key": uuid.NewString()}},
			"Idempotency-Key", "e2e-payout-1")
		require.Equal(t, http.StatusOK, status, raw)
		payoutID := resp["transaction_id"].(string)
		idEnvio := strings.ReplaceAll(payoutID, "-", "")
		e2eWait(t, 20*time.Second, "the PSP accepted the send", func() bool { return e.sim.SendCount(idEnvio).Accepted == 1 }, n)
		n.kill()
		require.Equal(t, pspsim.Count{Puts: 1, Accepted: 1}, e.sim.SendCount(idEnvio))
		ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
		e.sim.Settle(ctx) // the send is REALIZADO at the PSP
		cancel()

		n = e.start(t, n.addr, "")
		require.Equal(t, "PENDING", e.status(t, n, payoutID))
		avail, pending := e.balance(t, n)
		require.Equal(t, int64(11880-3050), avail, "amount and tax reserved")
		require.Equal(t, int64(3050), pending)

		// While the send's step is held: refunds, one of them committed by
		// the PSP and answered 500.
		refund := func(key string, amount float64) string {
			t.Helper()
			status, resp, raw := e.call(t, n, "POST", "/api/v1/gateway/refund",
				map[string]any{"payment_id": refID, "amount": amount, "reason": "Devolução"}, "Idempotency-Key", key)
			require.Equal(t, http.StatusOK, status, raw)
			require.Equal(t, "PENDING", resp["status"])
			return resp["refund_id"].(string)
		}
		refundStatus := func(id string) string {
			t.Helper()
			status, resp, raw := e.call(t, n, "GET", "/api/v1/gateway/refunds/"+id, nil)
			require.Equal(t, http.StatusOK, status, raw)
			return resp["data"].(map[string]any)["status"].(string)
		}
		settleRefund := func(id string) {
			t.Helper()
			hex := strings.ReplaceAll(id, "-", "")
			e2eWait(t, 20*time.Second, "the PSP created the devolução", func() bool { return e.sim.RefundCount(hex).Accepted == 1 }, n)
			// Read back from the PSP (EM_PROCESSAMENTO) before settlement.
			e2eWait(t, 20*time.Second, "the devolução was read", func() bool {
				return e.requests("GET", "/v2/pix/"+refE2E+"/devolucao/"+hex, http.StatusOK) > 0
			}, n)
			require.Equal(t, "PENDING", refundStatus(id))
			ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
			e.sim.Settle(ctx)
			cancel()
			e2eWait(t, 30*time.Second, "refund "+id+" completed", func() bool { return refundStatus(id) == "COMPLETED" }, n)
			require.Equal(t, pspsim.Count{Puts: 1, Accepted: 1}, e.sim.RefundCount(hex), "one devolução sent once")
			e2eWait(t, 20*time.Second, "pix.refund.completed delivered", func() bool {
				return e.recv.countRefund("pix.refund.completed", id) == 1
			}, n)
		}
		r1 := refund("e2e-refund-1", 5)
		settleRefund(r1)

		e.sim.AddFault(pspsim.Fault{Method: "PUT", PathPrefix: "/v2/pix/", Kind: pspsim.FaultCommitThenError})
		r2 := refund("e2e-refund-2", 5)
		settleRefund(r2)
		require.Positive(t, e.requests("PUT", "/v2/pix/"+refE2E+"/devolucao/"+strings.ReplaceAll(r2, "-", ""),
			http.StatusInternalServerError), "the committed devolução was answered 500")
		require.Equal(t, "PAID", e.status(t, n, refID), "partly refunded")

		// The payout: read after the hold, found REALIZADO, never resent.
		e.waitStatus(t, n, payoutID, "PAID", 120*time.Second)
		require.Equal(t, pspsim.Count{Puts: 1, Accepted: 1}, e.sim.SendCount(idEnvio), "sent exactly once")
		// Read before any resend: on its own, or in Efí's list of sent Pix.
		require.Positive(t, e.requests("GET", "/v2/gn/pix/enviados/id-envio/"+idEnvio, http.StatusOK)+
			e.listings(), "read before any resend")
		require.Equal(t, 1, e2eEvents(t, db, payoutID, "pix.cashout.paid"))
		e2eWait(t, 20*time.Second, "pix.cashout.paid delivered", func() bool { return e.recv.count("pix.cashout.paid", payoutID) == 1 }, n)
		avail, pending = e.balance(t, n)
		require.Equal(t, int64(11880-3050-1000), avail)
		require.Zero(t, pending)
		e2eCheckLedger(t, db)
	})
}

// countRefund is how many distinct events named event the receiver got
// for refund id.
func (r *e2eReceiver) countRefund(event, id string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, b := range r.byID {
		if b["event"] == event && b["refund_id"] == id {
			n++
		}
	}
	return n
}

// e2ePost POSTs body to serve's path without credentials.
func e2ePost(t *testing.T, p *proc, path string, body []byte) (int, string) {
	t.Helper()
	resp, err := testHTTP.Post("http://"+p.addr+path, "application/json", bytes.NewReader(body))
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(raw)
}

// TestPSPE2EWebhooks: the PSP's webhook path is secret (any other answers
// 404), a forged report of a payment the PSP does not know moves nothing,
// and the PSP's real report sent to two nodes on the same database at once,
// and again, credits the payment once.
func TestPSPE2EWebhooks(t *testing.T) {
	t.Parallel()
	testkit.ForEachDatabaseURL(t, func(t *testing.T, db string) {
		e := newPSPE2E(t, db)
		a := e.start(t, "", "")
		b := e.start(t, "", a.addr)

		id, txid := e.charge(t, a, "e2e-hook", 40)
		forged, err := json.Marshal(map[string]any{"pix": []any{map[string]any{
			"endToEndId": "E" + (rand.Text() + rand.Text())[:31], "txid": txid,
			"valor": "40.00", "horario": time.Now().UTC().Format(time.RFC3339)}}})
		require.NoError(t, err)

		for _, secret := range []string{"wrong_secret-0123456789abcdefghijklmn", e2eWebhookSecret + "x", e2eWebhookSecret[:32], strings.ToLower(e2eWebhookSecret)} {
			status, raw := e2ePost(t, a, "/psp/webhook/"+secret+"/pix", forged)
			require.Equal(t, http.StatusNotFound, status, "secret %q: %s", secret, raw)
			require.NotContains(t, raw, e2eWebhookSecret)
		}

		// Forged: well-formed, at the right path, for a real txid, with an
		// end-to-end id the PSP never issued.
		reads := e.requests("GET", "/v2/pix/", http.StatusNotFound)
		status, raw := e2ePost(t, a, "/psp/webhook/"+e2eWebhookSecret+"/pix", forged)
		require.Equal(t, http.StatusOK, status, raw)
		require.Greater(t, e.requests("GET", "/v2/pix/", http.StatusNotFound), reads, "the forged Pix was looked up at the PSP")
		require.Equal(t, "PENDING", e.status(t, a, id))
		avail, _ := e.balance(t, a)
		require.Zero(t, avail)

		// The real report, its delivery lost, sent by us to both nodes at
		// once and then again.
		e.sim.LoseWebhooks(1)
		e2e := e.pay(t, txid)
		require.True(t, e.delivery(t, e2e).Lost)
		var real []byte
		for _, p := range e.sim.State().Pix {
			if p.EndToEndID == e2e {
				real, err = json.Marshal(map[string]any{"pix": []any{p}})
				require.NoError(t, err)
			}
		}
		require.NotNil(t, real)
		var wg sync.WaitGroup
		statuses := make([]int, 2)
		for i, p := range []*proc{a, b} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				resp, err := testHTTP.Post("http://"+p.addr+"/psp/webhook/"+e2eWebhookSecret+"/pix", "application/json", bytes.NewReader(real))
				if err == nil {
					statuses[i] = resp.StatusCode
					resp.Body.Close()
				}
			}()
		}
		wg.Wait()
		require.Equal(t, []int{http.StatusOK, http.StatusOK}, statuses, "a: %s\nb: %s", a.stderr.String(), b.stderr.String())
		status, raw = e2ePost(t, b, "/psp/webhook/"+e2eWebhookSecret+"/pix", real)
		require.Equal(t, http.StatusOK, status, raw)
		require.Equal(t, "PAID", e.status(t, a, id))
		require.Equal(t, "PAID", e.status(t, b, id))
		payPageShowsE2E(t, b, id, e2e)
		avail, pending := e.balance(t, b)
		require.Equal(t, int64(4000-40), avail, "credited once")
		require.Zero(t, pending)
		require.Equal(t, 1, e2eEvents(t, db, id, "pix.cashin.paid"))
		e2eWait(t, 20*time.Second, "pix.cashin.paid delivered", func() bool { return e.recv.count("pix.cashin.paid", id) >= 1 }, a, b)
		time.Sleep(time.Second) // any second event would be delivered by now
		require.Equal(t, 1, e.recv.count("pix.cashin.paid", id), "one event")
		e2eCheckLedger(t, db)
	})
}
