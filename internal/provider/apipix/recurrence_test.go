package apipix

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/provider"
	"github.com/pixgate/pixgate/internal/pspsim"
	"github.com/pixgate/pixgate/internal/testkit"
)

var testAccount = Account{Branch: "0001", Number: "123456", Type: "CORRENTE"}

func recurrence(t *testing.T, retry pix.RetryPolicy) provider.Recurrence {
	return provider.Recurrence{
		Payer:    pix.RecurrencePayer{Name: "Maria Souza", Document: "52998224725"},
		Contract: "CTR-1001", Description: "Plano mensal",
		Schedule: pix.Schedule{Frequency: pix.Monthly, Start: pixDate(t, "2026-12-10"), End: pixDate(t, "2027-12-10")},
		Amount:   4990, Retry: retry,
	}
}

func cycle(t *testing.T, idRec, txid, due string) provider.CycleCharge {
	return provider.CycleCharge{TxID: txid, RecurrenceID: idRec, DueDate: pixDate(t, due), Amount: 4990,
		Payer: provider.DuePayer{Name: "Maria Souza", Document: "52998224725", City: "São Paulo", State: "SP"}, Info: "Plano mensal 12/2026"}
}

// hookSink records the notifications the simulator posts.
type hookSink struct {
	mu     sync.Mutex
	paths  []string
	bodies []map[string]any
}

func (h *hookSink) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var body map[string]any
	_ = json.NewDecoder(r.Body).Decode(&body)
	h.mu.Lock()
	h.paths = append(h.paths, r.URL.Path)
	h.bodies = append(h.bodies, body)
	h.mu.Unlock()
}

func (h *hookSink) received() ([]string, []map[string]any) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.paths...), append([]map[string]any(nil), h.bodies...)
}

// startRecSim starts the simulator, its exchanges checked against BACEN's
// OpenAPI, and a client with a receiving account and a webhook URL on a
// sink.
func startRecSim(t *testing.T) (*pspsim.Server, *Client, *testkit.Conformance, *hookSink) {
	t.Helper()
	v := testkit.BACENValidator(t)
	sim := pspsim.New(pspsim.Options{Wrap: v.Wrap, Now: func() time.Time { return simNow }})
	require.NoError(t, sim.Start(context.Background()))
	t.Cleanup(sim.Close)
	hooks := &hookSink{}
	srv := httptest.NewServer(hooks)
	t.Cleanup(srv.Close)
	o := sim.Options()
	c, err := New(Config{APIURL: sim.URL(), ClientID: o.ClientID, ClientSecret: o.ClientSecret,
		CertPEM: o.PKI.ClientCertPEM, KeyPEM: o.PKI.ClientKeyPEM, CAPEM: o.PKI.CAPEM, PixKey: o.PixKey,
		WebhookURL: srv.URL + "/psp/webhook/secret", Account: testAccount, Log: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	return sim, c, v, hooks
}

// TestRecurrencesAgainstTheSimulator drives both journeys, the payer's
// approval, a cycle debited, a failed attempt retried, the end of a cycle
// whose retries all failed, and cancellations at the simulator over mutual
// TLS, every request and answer checked against BACEN's OpenAPI, and every
// notification against its callback.
func TestRecurrencesAgainstTheSimulator(t *testing.T) {
	t.Parallel()
	sim, c, v, hooks := startRecSim(t)
	ctx := context.Background()
	require.NoError(t, c.StartRecurrences(ctx))

	// Journey 2: authorization only.
	created, err := c.CreateRecurrence(ctx, recurrence(t, pix.RetryThreeInSevenDays))
	require.NoError(t, err)
	require.Regexp(t, `^RR[0-9A-Za-z]{27}$`, created.ID)
	require.Contains(t, created.QRCode, "/qr/v2/rec/")
	st, err := c.Recurrence(ctx, created.ID)
	require.NoError(t, err)
	require.Equal(t, pix.RecurrenceCreated, st.Status)
	require.Equal(t, simNow, st.UpdatedAt)

	// A cycle before approval is refused.
	err = c.CreateCycleCharge(ctx, cycle(t, created.ID, "pixgateCycle00000000000000000001", "2026-12-10"))
	require.ErrorIs(t, err, provider.ErrRejected)

	_, err = sim.ApproveRec(ctx, created.ID)
	require.NoError(t, err)
	st, err = c.Recurrence(ctx, created.ID)
	require.NoError(t, err)
	require.Equal(t, provider.RecurrenceState{ID: created.ID, Status: pix.RecurrenceApproved, UpdatedAt: simNow}, st)

	// Cycle 1 is debited on its day.
	first := cycle(t, created.ID, "pixgateCycle00000000000000000001", "2026-12-10")
	require.NoError(t, c.CreateCycleCharge(ctx, first))
	require.NoError(t, c.CreateCycleCharge(ctx, first), "created again: the same cobr is success")
	other := first
	other.Amount = 5000
	require.ErrorIs(t, c.CreateCycleCharge(ctx, other), provider.ErrRejected, "not ours: another amount")
	cs, err := c.CycleCharge(ctx, first.TxID)
	require.NoError(t, err)
	require.Equal(t, provider.CyclePending, cs.Status)
	require.Equal(t, []provider.Attempt{{Date: pixDate(t, "2026-12-10"), Status: provider.AttemptScheduled}}, cs.Attempts)
	e2e, err := sim.DebitCobR(ctx, first.TxID)
	require.NoError(t, err)
	cs, err = c.CycleCharge(ctx, first.TxID)
	require.NoError(t, err)
	require.Equal(t, provider.CyclePaid, cs.Status)
	require.Equal(t, []provider.Payment{{TxID: first.TxID, Amount: 4990, EndToEndID: e2e, PaidAt: simNow,
		PayerName: pspsim.SimulatedPayerName, PayerDocument: pspsim.SimulatedPayerCPF}}, cs.Payments)
	paid, err := c.ConfirmPayment(ctx, e2e)
	require.NoError(t, err)
	require.Equal(t, pix.Amount(4990), paid.Amount)
	require.Equal(t, first.TxID, paid.TxID)

	// Cycle 2 (due Saturday the 5th: debited Monday the 7th) fails, is
	// retried on the 1st, 3rd and 5th day after its due date, and the last
	// retry is debited.
	second := cycle(t, created.ID, "pixgateCycle00000000000000000002", "2026-12-05")
	require.NoError(t, c.CreateCycleCharge(ctx, second))
	require.NoError(t, sim.FailCobR(ctx, second.TxID))
	days := pix.RetryDays(pix.RetryThreeInSevenDays, pixDate(t, "2026-12-07"))
	for i, day := range days {
		cs, err = c.RetryCycleCharge(ctx, second.TxID, day)
		require.NoError(t, err)
		require.Equal(t, provider.CyclePending, cs.Status)
		require.Equal(t, i+1, cs.FailedAttempts())
		again, err := c.RetryCycleCharge(ctx, second.TxID, day)
		require.NoError(t, err, "a retry asked twice (an answer lost) is the same retry")
		require.Equal(t, cs.Attempts, again.Attempts)
		if i < len(days)-1 {
			require.NoError(t, sim.FailCobR(ctx, second.TxID))
		}
	}
	e2e, err = sim.DebitCobR(ctx, second.TxID)
	require.NoError(t, err)
	cs, err = c.CycleCharge(ctx, second.TxID)
	require.NoError(t, err)
	require.Equal(t, provider.CyclePaid, cs.Status)
	require.Equal(t, 3, cs.FailedAttempts())
	require.Len(t, cs.Attempts, 4)
	require.Equal(t, provider.Attempt{Date: pixDate(t, "2026-12-07"), Status: provider.AttemptFailed, Reason: "AM02 Débito recusado pelo simulador"}, cs.Attempts[0])
	require.Equal(t, provider.Attempt{Date: days[2], Retry: true, Status: provider.AttemptPaid}, cs.Attempts[3])
	require.Equal(t, e2e, cs.Payments[0].EndToEndID)

	// Cycle 3 fails for good: every retry fails.
	third := cycle(t, created.ID, "pixgateCycle00000000000000000003", "2026-12-09")
	require.NoError(t, c.CreateCycleCharge(ctx, third))
	require.NoError(t, sim.FailCobR(ctx, third.TxID))
	for _, day := range pix.RetryDays(pix.RetryThreeInSevenDays, pixDate(t, "2026-12-09")) {
		_, err = c.RetryCycleCharge(ctx, third.TxID, day)
		require.NoError(t, err)
		require.NoError(t, sim.FailCobR(ctx, third.TxID))
	}
	cs, err = c.CycleCharge(ctx, third.TxID)
	require.NoError(t, err)
	require.Equal(t, provider.CycleFailed, cs.Status)
	require.Equal(t, 4, cs.FailedAttempts())
	_, err = c.RetryCycleCharge(ctx, third.TxID, pixDate(t, "2026-12-15"))
	require.ErrorIs(t, err, provider.ErrRejected, "no retry is left")

	// Cycle 4 is cancelled by the merchant before its day.
	fourth := cycle(t, created.ID, "pixgateCycle00000000000000000004", "2026-12-11")
	require.NoError(t, c.CreateCycleCharge(ctx, fourth))
	require.NoError(t, c.CancelCycleCharge(ctx, fourth.TxID))
	require.NoError(t, c.CancelCycleCharge(ctx, fourth.TxID), "cancelled already (an answer lost) is cancelled")
	require.ErrorIs(t, c.CancelCycleCharge(ctx, first.TxID), provider.ErrRejected, "a paid cycle cannot be cancelled")
	require.ErrorIs(t, c.CancelCycleCharge(ctx, "pixgateCycle00000000000000000009"), provider.ErrNotFound)
	_, err = c.CycleCharge(ctx, "pixgateCycle00000000000000000009")
	require.ErrorIs(t, err, provider.ErrNotFound)

	// Polling sees every cycle and the recurrence.
	from, to := simNow.Add(-time.Minute), simNow.Add(time.Minute)
	list, err := c.CycleChargesChanged(ctx, from, to)
	require.NoError(t, err)
	statuses := map[string]provider.CycleStatus{}
	for _, s := range list {
		statuses[s.TxID] = s.Status
	}
	require.Equal(t, map[string]provider.CycleStatus{first.TxID: provider.CyclePaid, second.TxID: provider.CyclePaid,
		third.TxID: provider.CycleFailed, fourth.TxID: provider.CycleCancelled}, statuses)
	recs, err := c.RecurrencesChanged(ctx, from, to)
	require.NoError(t, err)
	require.Len(t, recs, 1)
	require.Equal(t, pix.RecurrenceApproved, recs[0].Status)
	none, err := c.RecurrencesChanged(ctx, simNow.Add(time.Hour), simNow.Add(2*time.Hour))
	require.NoError(t, err)
	require.Empty(t, none)

	// The merchant cancels it; cancelling again is success.
	fifth := cycle(t, created.ID, "pixgateCycle00000000000000000005", "2026-12-10")
	require.NoError(t, c.CreateCycleCharge(ctx, fifth))
	require.NoError(t, c.CancelRecurrence(ctx, created.ID))
	require.NoError(t, c.CancelRecurrence(ctx, created.ID))
	st, err = c.Recurrence(ctx, created.ID)
	require.NoError(t, err)
	require.Equal(t, pix.RecurrenceCancelled, st.Status)
	require.Equal(t, pix.CancelledByMerchant, st.CancelledBy)
	cs, err = c.CycleCharge(ctx, fifth.TxID)
	require.NoError(t, err)
	require.Equal(t, provider.CycleCancelled, cs.Status, "its open cycle goes with it")

	// Journey 3: the first payment and the authorization in one code.
	j3 := recurrence(t, pix.RetryNone)
	j3.FirstPayment, j3.FirstTxID, j3.FirstTTL = 2990, "pixgateFirst00000000000000000001", time.Hour
	created3, err := c.CreateRecurrence(ctx, j3)
	require.NoError(t, err)
	require.Regexp(t, `^RN`, created3.ID)
	require.Contains(t, created3.QRCode, "540529.90", "the cob's amount")
	require.Contains(t, created3.QRCode, "/qr/v2/rec/", "and the recurrence's location")
	pays, err := c.ChargePayments(ctx, j3.FirstTxID)
	require.NoError(t, err)
	require.Empty(t, pays)
	e2e, err = sim.ApproveRec(ctx, created3.ID)
	require.NoError(t, err)
	pays, err = c.ChargePayments(ctx, j3.FirstTxID)
	require.NoError(t, err)
	require.Equal(t, []provider.Payment{{TxID: j3.FirstTxID, Amount: 2990, EndToEndID: e2e, PaidAt: simNow,
		PayerName: "Maria Souza", PayerDocument: "52998224725"}}, pays)
	st, err = c.Recurrence(ctx, created3.ID)
	require.NoError(t, err)
	require.Equal(t, provider.RecurrenceState{ID: created3.ID, Status: pix.RecurrenceApproved, FirstTxID: j3.FirstTxID, UpdatedAt: simNow}, st)
	// Without retries a failed debit ends the cycle at once.
	c3 := cycle(t, created3.ID, "pixgateCycle00000000000000000006", "2026-12-10")
	require.NoError(t, c.CreateCycleCharge(ctx, c3))
	require.NoError(t, sim.FailCobR(ctx, c3.TxID))
	cs, err = c.CycleCharge(ctx, c3.TxID)
	require.NoError(t, err)
	require.Equal(t, provider.CycleFailed, cs.Status)
	_, err = c.RetryCycleCharge(ctx, c3.TxID, pixDate(t, "2026-12-11"))
	require.ErrorIs(t, err, provider.ErrRejected, "NAO_PERMITE")
	// The payer cancels at their bank.
	require.NoError(t, sim.CancelRecByPayer(ctx, created3.ID))
	st, err = c.Recurrence(ctx, created3.ID)
	require.NoError(t, err)
	require.Equal(t, pix.RecurrenceCancelled, st.Status)
	require.Equal(t, pix.CancelledByPayer, st.CancelledBy)

	// Rejected by the payer.
	rejected, err := c.CreateRecurrence(ctx, recurrence(t, pix.RetryNone))
	require.NoError(t, err)
	require.NoError(t, sim.RejectRec(ctx, rejected.ID))
	st, err = c.Recurrence(ctx, rejected.ID)
	require.NoError(t, err)
	require.Equal(t, pix.RecurrenceRejected, st.Status)
	require.ErrorIs(t, c.CancelRecurrence(ctx, rejected.ID), provider.ErrRejected, "a rejected recurrence is not cancelled")
	_, err = c.Recurrence(ctx, "RR999999992026120100000000000")
	require.ErrorIs(t, err, provider.ErrNotFound)

	v.Check(t)
	// Every notification arrived where BACEN's callbacks say, in their shape.
	paths, bodies := hooks.received()
	kinds := map[string]int{}
	for i, p := range paths {
		kinds[p]++
		switch p {
		case "/psp/webhook/secret/rec":
			v.CheckCallback(t, "/webhookrec", "rec", bodies[i])
		case "/psp/webhook/secret/cobr":
			v.CheckCallback(t, "/webhookcobr", "cobr", bodies[i])
		}
	}
	require.Positive(t, kinds["/psp/webhook/secret/rec"])
	require.Positive(t, kinds["/psp/webhook/secret/cobr"])
	v.Check(t)
}

// TestRecurrenceRequestShapes: what goes on the wire for a recurrence and
// a cycle charge, field by field.
func TestRecurrenceRequestShapes(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.c.account = testAccount
	idRec := "RR9999999920261201abcdefghijk"
	e.psp.setHandler(func(w http.ResponseWriter, r *http.Request, _ []byte) {
		switch {
		case r.Method == http.MethodPost && r.URL.Path == "/v2/locrec":
			writeJSON(w, http.StatusCreated, `{"id":7,"location":"psp.example/qr/v2/rec/1","tipo":"rec","criacao":"2026-12-01T15:00:00Z"}`)
		case r.Method == http.MethodPost:
			writeJSON(w, http.StatusCreated, fmt.Sprintf(`{"idRec":%q,"status":"CRIADA"}`, idRec))
		case r.Method == http.MethodGet:
			writeJSON(w, http.StatusOK, fmt.Sprintf(`{"idRec":%q,"status":"CRIADA","dadosQR":{"jornada":"JORNADA_2","pixCopiaECola":%q}}`, idRec, brCode))
		default:
			writeJSON(w, http.StatusCreated, `{}`)
		}
	})
	ctx := context.Background()
	r := recurrence(t, pix.RetryThreeInSevenDays)
	r.Payer.Document = "11222333000181"
	got, err := e.c.CreateRecurrence(ctx, r)
	require.NoError(t, err)
	require.Equal(t, provider.RecurrenceCreated{ID: idRec, QRCode: brCode}, got)
	calls := e.psp.apiCalls()
	require.Len(t, calls, 3)
	require.Equal(t, "POST /v2/locrec", calls[0].Method+" "+calls[0].Path)
	require.Equal(t, "POST /v2/rec", calls[1].Method+" "+calls[1].Path)
	require.Equal(t, map[string]any{
		"vinculo": map[string]any{"contrato": "CTR-1001", "objeto": "Plano mensal",
			"devedor": map[string]any{"cnpj": "11222333000181", "nome": "Maria Souza"}},
		"calendario":          map[string]any{"dataInicial": "2026-12-10", "dataFinal": "2027-12-10", "periodicidade": "MENSAL"},
		"valor":               map[string]any{"valorRec": "49.90"},
		"politicaRetentativa": "PERMITE_3R_7D",
		"loc":                 float64(7),
	}, decodeBody(t, calls[1].Body))
	require.Equal(t, "GET /v2/rec/"+idRec, calls[2].Method+" "+calls[2].Path)

	// Without a receiving account no cycle charge can be made, so no
	// recurrence is taken either, and the PSP is not called.
	none := newEnv(t)
	_, err = none.c.CreateRecurrence(ctx, r)
	require.ErrorIs(t, err, provider.ErrUnsupported)
	err = none.c.CreateCycleCharge(ctx, cycle(t, idRec, txid, "2026-12-10"))
	require.ErrorIs(t, err, provider.ErrUnsupported)
	require.Empty(t, none.psp.apiCalls())

	withAccount := newEnv(t)
	withAccount.c.account = testAccount
	withAccount.psp.setHandler(func(w http.ResponseWriter, _ *http.Request, _ []byte) { writeJSON(w, http.StatusCreated, `{}`) })
	ch := cycle(t, idRec, txid, "2026-12-10")
	ch.Payer.Street, ch.Payer.Number, ch.Payer.ZipCode = "Rua A", "10", "01001000"
	require.NoError(t, withAccount.c.CreateCycleCharge(ctx, ch))
	calls = withAccount.psp.apiCalls()
	require.Len(t, calls, 1)
	require.Equal(t, "PUT /v2/cobr/"+txid, calls[0].Method+" "+calls[0].Path)
	require.Equal(t, map[string]any{
		"idRec": idRec, "infoAdicional": "Plano mensal 12/2026",
		"calendario": map[string]any{"dataDeVencimento": "2026-12-10"},
		"valor":      map[string]any{"original": "49.90"}, "ajusteDiaUtil": true,
		"devedor": map[string]any{"cpf": "52998224725", "nome": "Maria Souza", "logradouro": "Rua A, 10", "cidade": "São Paulo",
			"uf": "SP", "cep": "01001000"},
		"recebedor": map[string]any{"agencia": "0001", "conta": "123456", "tipoConta": "CORRENTE"},
	}, decodeBody(t, calls[0].Body))

	for name, mod := range map[string]func(*provider.Recurrence){
		"document":    func(r *provider.Recurrence) { r.Payer.Document = "52998224724" },
		"contract":    func(r *provider.Recurrence) { r.Contract = "" },
		"frequency":   func(r *provider.Recurrence) { r.Schedule.Frequency = "DAILY" },
		"retry":       func(r *provider.Recurrence) { r.Retry = "" },
		"end":         func(r *provider.Recurrence) { r.Schedule.End = pixDate(t, "2026-12-09") },
		"amount":      func(r *provider.Recurrence) { r.Amount = 0 },
		"first txid":  func(r *provider.Recurrence) { r.FirstPayment, r.FirstTxID = 100, "short" },
		"description": func(r *provider.Recurrence) { r.Description = "123456789012345678901234567890123456" },
	} {
		r := recurrence(t, pix.RetryNone)
		mod(&r)
		_, err := withAccount.c.CreateRecurrence(ctx, r)
		require.ErrorIs(t, err, provider.ErrRejected, name)
	}
	require.Len(t, withAccount.psp.apiCalls(), 1, "nothing sent for a bad recurrence")
	_, err = New(Config{APIURL: "https://psp.example/v2", ClientID: "a", ClientSecret: "b", CertPEM: e.psp.pki.ClientCertPEM,
		KeyPEM: e.psp.pki.ClientKeyPEM, PixKey: "k", Account: Account{Number: "1", Type: "SAVINGS"}})
	require.ErrorContains(t, err, "account")
}
