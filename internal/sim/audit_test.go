package sim

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/internal/ledger"
	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/pspsim"
	"github.com/pixgate/pixgate/internal/store"
	"github.com/pixgate/pixgate/internal/store/storetest"
	"github.com/pixgate/pixgate/internal/testkit"
)

var auditT0 = time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)

// world is a small, consistent system at rest: in the database, a charge
// paid R$ 10.00 and refunded R$ 2.00, a payout of R$ 3.00 paid and one of
// R$ 1.00 that failed, a stray Pix of R$ 5.00 returned and one of R$ 0.50
// held, each change with its event delivered; and the PSP's books that
// agree with them.
type world struct {
	t        *testing.T
	db       *store.DB
	client   pix.Client
	charge   pix.Transaction
	paid     pix.Transaction // payout
	failed   pix.Transaction // payout
	refund   pix.Refund
	returned pix.UnmatchedReceipt
	held     pix.UnmatchedReceipt
	psp      pspFacts
	keys     []KeyRecord
	invalid  int
	extra    []Delivery
	// refused is an event type whose deliveries the receiver answered 500.
	refused string
	// infractions are the PSP's MED contests.
	infractions []pspsim.InfractionFact
}

func newWorld(t *testing.T, db *store.DB) *world {
	t.Helper()
	w := &world{t: t, db: db, client: storetest.NewClient(t, db)}
	id := w.client.ID
	w.charge = pix.Transaction{ID: uuid.NewString(), ClientID: id, Type: pix.TypeCashin, ExternalID: "c-1", RequestHash: "h",
		Status: pix.StatusPaid, Amount: 1000, PaidAmount: 1000, RefundedAmount: 200, CreatedAt: auditT0, ConfirmedAt: auditT0.Add(time.Second),
		ExpiresAt: auditT0.Add(time.Hour), TxID: "txidcharge1", EndToEndID: "E99999999202611201200chargepaid1"}
	w.paid = pix.Transaction{ID: uuid.NewString(), ClientID: id, Type: pix.TypeCashout, ExternalID: "p-1", IdempotencyKey: "k-p-1",
		RequestHash: "h", Status: pix.StatusPaid, Amount: 300, CreatedAt: auditT0.Add(2 * time.Second), ConfirmedAt: auditT0.Add(3 * time.Second)}
	w.failed = pix.Transaction{ID: uuid.NewString(), ClientID: id, Type: pix.TypeCashout, ExternalID: "p-2", RequestHash: "h",
		Status: pix.StatusCancelled, Amount: 100, CreatedAt: auditT0.Add(4 * time.Second)}
	w.refund = pix.Refund{ID: uuid.NewString(), ClientID: id, TransactionID: w.charge.ID, IdempotencyKey: "k-r-1", RequestHash: "h",
		Status: pix.RefundCompleted, Amount: 200, CreatedAt: auditT0.Add(5 * time.Second), SettledAt: auditT0.Add(6 * time.Second)}
	w.returned = pix.UnmatchedReceipt{ID: uuid.NewString(), PaymentEndToEndID: "E99999999202611201200strayretur1", Amount: 500,
		ReceivedAt: auditT0, RecordedAt: auditT0.Add(time.Second), Reason: pix.UnmatchedNoCharge, Status: pix.UnmatchedReturned,
		ReturnID: uuid.NewString(), ReturnedAt: auditT0.Add(2 * time.Second)}
	w.held = pix.UnmatchedReceipt{ID: uuid.NewString(), PaymentEndToEndID: "E99999999202611201200strayheld01", Amount: 50,
		ReceivedAt: auditT0, RecordedAt: auditT0.Add(time.Second), Reason: pix.UnmatchedNoCharge, Status: pix.UnmatchedHeld}

	for _, tx := range []pix.Transaction{w.charge, w.paid, w.failed} {
		w.insert(tx)
	}
	w.write(func(tx *store.Tx) error {
		_, err := tx.InsertRefund(context.Background(), w.refund)
		return err
	})
	for _, u := range []pix.UnmatchedReceipt{w.returned, w.held} {
		w.write(func(tx *store.Tx) error {
			_, err := tx.InsertUnmatched(context.Background(), u)
			return err
		})
	}
	w.post(id, w.charge.ID, ledger.CashinPaid(1000, 0))
	w.post(id, w.paid.ID, ledger.PayoutReserved(300, 0))
	w.post(id, w.paid.ID, ledger.PayoutCompleted(300, 0))
	w.post(id, w.failed.ID, ledger.PayoutReserved(100, 0))
	w.post(id, w.failed.ID, ledger.PayoutFailed(100, 0))
	w.post(id, w.charge.ID, ledger.RefundReserved(200))
	w.post(id, w.charge.ID, ledger.RefundCompleted(200))
	w.post(store.HouseID, w.returned.ID, ledger.UnmatchedReceived(500))
	w.post(store.HouseID, w.returned.ID, ledger.UnmatchedReturned(500))
	w.post(store.HouseID, w.held.ID, ledger.UnmatchedReceived(50))
	w.event(w.charge, pix.EventCashinPaid, "", "delivered")
	w.event(w.paid, pix.EventCashoutPaid, "", "delivered")
	w.event(w.failed, pix.EventCashoutFailed, "", "delivered")
	w.event(w.charge, pix.EventRefundCompleted, w.refund.ID, "delivered")

	w.psp = pspFacts{
		Pix: []pspPix{
			{E2E: w.charge.EndToEndID, TxID: w.charge.TxID, Valor: 1000,
				Devolucoes: []pspTransfer{{ID: hexID(w.refund.ID), Valor: 200, Status: pspsim.Devolvido}}},
			{E2E: w.returned.PaymentEndToEndID, Valor: 500,
				Devolucoes: []pspTransfer{
					{ID: hexID(uuid.NewString()), Valor: 500, Status: pspsim.NaoRealizado}, // a first return the PSP refused
					{ID: hexID(w.returned.ReturnID), Valor: 500, Status: pspsim.Devolvido}}},
			{E2E: w.held.PaymentEndToEndID, TxID: "othersystem", Valor: 50},
		},
		Sends: []pspTransfer{
			{ID: hexID(w.paid.ID), Valor: 300, Status: pspsim.Realizado},
			{ID: hexID(w.failed.ID), Valor: 100, Status: pspsim.NaoRealizado},
		},
		SendPuts: map[string]pspsim.Count{
			hexID(w.paid.ID):   {Puts: 1, Accepted: 1},
			hexID(w.failed.ID): {Puts: 1, Accepted: 1},
		},
		RefundPuts: map[string]pspsim.Count{
			hexID(w.refund.ID):         {Puts: 1, Accepted: 1},
			hexID(w.returned.ReturnID): {Puts: 1, Accepted: 1},
		},
	}
	w.keys = []KeyRecord{
		{Kind: "charge", Client: 0, Method: http.MethodPost, Path: "/api/v1/gateway/request-qrcode", ExtID: "c-1", Status: 201, ID: w.charge.ID},
		{Kind: "payout", Client: 0, Method: http.MethodPost, Path: "/api/v1/gateway/pix-payment", Key: "k-p-1", ExtID: "p-1", Status: 200, ID: w.paid.ID},
		{Kind: "payout", Client: 0, Method: http.MethodPost, Path: "/api/v1/gateway/pix-payment", ExtID: "p-2", Status: 0},
		{Kind: "refund", Client: 0, Method: http.MethodPost, Path: "/api/v1/gateway/refund", Key: "k-r-1", Status: 200, ID: w.refund.ID},
		{Kind: "payout", Client: 0, Method: http.MethodPost, Path: "/api/v1/gateway/pix-payment", Key: "k-none", Status: 422},
	}
	return w
}

// scheduledPayout stores a payout scheduled for tomorrow, in status and
// send state, with event (when not "") delivered; nothing is reserved.
func (w *world) scheduledPayout(status pix.TxStatus, state, event string) pix.Transaction {
	w.t.Helper()
	p := w.failed
	p.ID, p.ExternalID, p.Status, p.SendState = uuid.NewString(), "sched-"+uuid.NewString()[:8], status, state
	p.Details = `{"description":"d","creditParty":{"keyType":"EMAIL","key":"a@b.co"},"scheduled_date":"` + tomorrow() + `"}`
	w.insert(p)
	if event != "" {
		w.event(p, event, "", "delivered")
	}
	return p
}

func (w *world) write(fn func(tx *store.Tx) error) {
	w.t.Helper()
	require.NoError(w.t, w.db.Write(context.Background(), fn))
}

func (w *world) insert(t pix.Transaction) {
	w.t.Helper()
	ok, err := w.db.InsertTransaction(context.Background(), t)
	require.NoError(w.t, err)
	require.True(w.t, ok)
}

func (w *world) post(clientID, txID string, p ledger.Posting) {
	w.t.Helper()
	w.write(func(tx *store.Tx) error {
		return tx.Post(context.Background(), uuid.NewString(), clientID, txID, p, auditT0.Add(time.Minute))
	})
}

// event writes an event of t (of refund refundID when not "") in status.
func (w *world) event(t pix.Transaction, typ, refundID, status string) pix.Event {
	w.t.Helper()
	body, err := json.Marshal(map[string]any{"event": typ, "payment_id": t.ID, "refund_id": refundID})
	require.NoError(w.t, err)
	e := pix.Event{ID: "evt_" + strings.ReplaceAll(uuid.NewString(), "-", ""), ClientID: t.ClientID, TransactionID: t.ID, Type: typ,
		URL: "http://127.0.0.1:1/hook", Payload: string(body), CreatedAt: auditT0.Add(time.Minute)}
	w.write(func(tx *store.Tx) error {
		if err := tx.InsertEvent(context.Background(), e); err != nil {
			return err
		}
		return store.RawExec(context.Background(), tx, `UPDATE events SET status = $2, attempts = 1 WHERE id = $1`, e.ID, status)
	})
	return e
}

// input is the auditor's input: every delivered event reached the
// receiver once, validly signed and answered 204 (500 if refused).
func (w *world) input() AuditInput {
	w.t.Helper()
	events, err := w.db.AllEvents(context.Background())
	require.NoError(w.t, err)
	var ds []Delivery
	for _, e := range events {
		if e.Status == "delivered" {
			status := http.StatusNoContent
			if e.Type == w.refused {
				status = http.StatusInternalServerError
			}
			ds = append(ds, Delivery{Client: 0, WebhookID: e.ID, Event: e.Type, PaymentID: e.TransactionID, Valid: true,
				Status: status, At: auditT0.Add(time.Minute)})
		}
	}
	return AuditInput{DB: w.db, Deliveries: append(ds, w.extra...), InvalidSignatures: w.invalid,
		Clients: []Credentials{{ClientID: w.client.ID}}, Keys: w.keys, PSP: pspsim.State{Infractions: w.infractions}}
}

// medReturn records a MED return of amount of the charge by devolução
// returnID, from available, as pixgate does, with its delivered
// pix.dispute.closed; it returns the dispute.
func (w *world) medReturn(amount pix.Amount, returnID string) pix.Dispute {
	w.t.Helper()
	ctx := context.Background()
	at := auditT0.Add(time.Minute)
	d := pix.Dispute{ID: uuid.NewString(), ClientID: w.client.ID, PaymentID: w.charge.ID, Amount: amount, Reason: pix.ReasonFraud,
		Status: pix.DisputeOpen, RespondBy: at, OpenedAt: at}
	w.write(func(tx *store.Tx) error {
		if err := tx.OpenMEDAccounts(ctx, w.client.ID); err != nil {
			return err
		}
		if err := tx.InsertDispute(ctx, d); err != nil {
			return err
		}
		d.Status, d.ClosedAt, d.Outcome, d.ReturnedAmount, d.ReturnID = pix.DisputeClosed, &at, pix.OutcomeReturned, amount, returnID
		return tx.CloseDispute(ctx, d)
	})
	p, err := ledger.MedReturned(amount, 0, amount)
	require.NoError(w.t, err)
	w.post(w.client.ID, w.charge.ID, p)
	body, err := json.Marshal(map[string]any{"event": pix.EventDisputeClosed, "payment_id": w.charge.ID, "dispute_id": d.ID})
	require.NoError(w.t, err)
	e := pix.Event{ID: "evt_" + strings.ReplaceAll(uuid.NewString(), "-", ""), ClientID: w.client.ID, TransactionID: w.charge.ID,
		Type: pix.EventDisputeClosed, URL: "http://127.0.0.1:1/hook", Payload: string(body), CreatedAt: at}
	w.write(func(tx *store.Tx) error {
		if err := tx.InsertEvent(ctx, e); err != nil {
			return err
		}
		return store.RawExec(ctx, tx, `UPDATE events SET status = 'delivered', attempts = 1 WHERE id = $1`, e.ID)
	})
	return d
}

func (w *world) audit() map[string]Check {
	w.t.Helper()
	checks := audit(context.Background(), w.input(), w.psp)
	require.Len(w.t, checks, len(allChecks))
	out := map[string]Check{}
	for _, c := range checks {
		out[c.Name] = c
	}
	return out
}

// failing lists the checks that found a violation, sorted.
func failing(checks map[string]Check) []string {
	var out []string
	for name, c := range checks {
		if len(c.Violations) > 0 {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

// TestAuditConsistent: a consistent system passes every check, and each
// check counts what it looked at.
func TestAuditConsistent(t *testing.T) {
	t.Parallel()
	testkit.Databases(t, func(t *testing.T, open testkit.Opener) {
		w := newWorld(t, open(t))
		checks := w.audit()
		require.Empty(t, failing(checks), "%v", checks)
		for name, n := range map[string]int{
			checkOnce:       2 + 1 + 1 + 2 + 3, // payouts, refund, return; the PSP's sends and devoluções
			checkFinal:      3,
			checkAccounted:  3,
			checkPaid:       3,
			checkUnmatched:  3,
			checkBalance:    3, // the total, the client's and the house's settlement
			checkLedger:     10,
			checkKeys:       5,
			checkDelivered:  4,
			checkReported:   4,
			checkStatements: 0, // no API to call
		} {
			require.Equal(t, n, checks[name].Checked, name)
		}
		ok, moving, err := Settled(context.Background(), AuditInput{DB: w.db, PSP: pspsim.State{}})
		require.NoError(t, err)
		require.True(t, ok, moving)
	})
}

// TestAuditCatches: each planted inconsistency is found, by the checks
// it concerns and no other.
func TestAuditCatches(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		plant func(w *world)
		fails []string
	}{
		{"a send accepted twice", func(w *world) {
			w.psp.SendPuts[hexID(w.paid.ID)] = pspsim.Count{Puts: 2, Accepted: 2}
		}, []string{checkOnce}},
		{"a send PUT again without a reading, refused as a duplicate", func(w *world) {
			w.psp.SendPuts[hexID(w.paid.ID)] = pspsim.Count{Puts: 2, Accepted: 1}
		}, []string{checkOnce}},
		{"a payout resent under another id", func(w *world) {
			w.psp.Sends = append(w.psp.Sends, pspTransfer{ID: "0badc0de", Valor: 300, Status: pspsim.Realizado})
		}, []string{checkOnce, checkBalance}},
		{"a MED return as the PSP made it", func(w *world) {
			w.medReturn(300, "MEDreturn1")
			w.psp.Pix[0].Devolucoes = append(w.psp.Pix[0].Devolucoes, pspTransfer{ID: "medreturn1", Valor: 300, Status: pspsim.Devolvido})
		}, nil},
		{"a MED return the PSP never made", func(w *world) {
			w.medReturn(300, "MEDreturn1")
		}, []string{checkBalance, checkDisputes}},
		{"a MED return recorded for another amount", func(w *world) {
			w.medReturn(300, "MEDreturn1")
			w.psp.Pix[0].Devolucoes = append(w.psp.Pix[0].Devolucoes, pspTransfer{ID: "medreturn1", Valor: 250, Status: pspsim.Devolvido})
		}, []string{checkBalance, checkDisputes}},
		{"an infraction open at the PSP that no dispute holds", func(w *world) {
			w.infractions = []pspsim.InfractionFact{{ID: "inf1", EndToEndID: w.charge.EndToEndID, Valor: "2.00", Status: pspsim.InfracaoAberta}}
		}, []string{checkDisputes}},
		{"a block that no open dispute holds", func(w *world) {
			w.write(func(tx *store.Tx) error { return tx.OpenMEDAccounts(context.Background(), w.client.ID) })
			w.post(w.client.ID, w.charge.ID, ledger.DisputeBlocked(100))
		}, []string{checkDisputes}},
		{"a transfer out that nobody received", func(w *world) {
			tr := pix.Transaction{ID: uuid.NewString(), ClientID: w.client.ID, Type: pix.TypeTransfer, RequestHash: "h", Status: pix.StatusPaid,
				Amount: 100, CreatedAt: auditT0.Add(time.Minute), ConfirmedAt: auditT0.Add(time.Minute), CounterpartyAccountID: uuid.NewString()}
			w.insert(tr)
			w.write(func(tx *store.Tx) error { return tx.OpenTransferAccounts(context.Background(), w.client.ID) })
			w.post(w.client.ID, tr.ID, ledger.TransferOut(100))
		}, []string{checkFamilies}},
		{"a devolução no refund names", func(w *world) {
			w.psp.Pix[0].Devolucoes = append(w.psp.Pix[0].Devolucoes, pspTransfer{ID: "0badc0de", Valor: 200, Status: pspsim.Devolvido})
		}, []string{checkOnce, checkBalance, checkDisputes}},
		{"a Pix never credited", func(w *world) {
			w.psp.Pix = append(w.psp.Pix, pspPix{E2E: "E99999999202611201200uncredited1", TxID: "txidlost", Valor: 700})
		}, []string{checkBalance, checkAccounted}},
		{"a credit without a PSP payment", func(w *world) {
			c := w.charge
			c.ID, c.ExternalID, c.TxID, c.EndToEndID, c.PaidAmount = uuid.NewString(), "c-2", "txidcharge2", "E99999999202611201200nosuchpix1", 400
			w.insert(c)
			w.post(c.ClientID, c.ID, ledger.CashinPaid(400, 0))
			w.event(c, pix.EventCashinPaid, "", "delivered")
		}, []string{checkBalance, checkPaid}},
		{"a duplicate report credited twice", func(w *world) {
			w.post(w.client.ID, w.charge.ID, ledger.CashinPaid(1000, 0))
		}, []string{checkBalance}},
		{"a charge credited with another payment's amount", func(w *world) {
			w.psp.Pix[0].Valor = 1100
		}, []string{checkBalance, checkPaid}},
		{"a failed payout whose send was made", func(w *world) {
			w.psp.Sends[1].Status = pspsim.Realizado
		}, []string{checkBalance, checkFinal}},
		{"a payout still pending", func(w *world) {
			p := w.failed
			p.ID, p.ExternalID, p.Status = uuid.NewString(), "p-3", pix.StatusPending
			w.insert(p)
			w.post(p.ClientID, p.ID, ledger.PayoutReserved(100, 0))
		}, []string{checkFinal}},
		{"a payout scheduled for tomorrow, waiting, never sent", func(w *world) {
			w.scheduledPayout(pix.StatusPending, pix.SendScheduled, "")
		}, nil},
		{"a scheduled payout cancelled before its day, never sent", func(w *world) {
			w.scheduledPayout(pix.StatusCancelled, pix.SendDone, pix.EventCashoutCancelled)
		}, nil},
		{"a scheduled payout sent before its day", func(w *world) {
			p := w.scheduledPayout(pix.StatusPending, pix.SendScheduled, "")
			w.psp.Sends = append(w.psp.Sends, pspTransfer{ID: hexID(p.ID), Valor: p.Amount, Status: pspsim.NaoRealizado})
		}, []string{checkFinal}},
		{"a cancelled scheduled payout sent", func(w *world) {
			p := w.scheduledPayout(pix.StatusCancelled, pix.SendDone, pix.EventCashoutCancelled)
			w.psp.Sends = append(w.psp.Sends, pspTransfer{ID: hexID(p.ID), Valor: p.Amount, Status: pspsim.NaoRealizado})
		}, []string{checkFinal}},
		{"a batch reported complete twice", func(w *world) {
			batch := pix.Transaction{ID: uuid.NewString(), ClientID: w.client.ID}
			w.event(batch, pix.EventBatchCompleted, "", "delivered")
			w.event(batch, pix.EventBatchCompleted, "", "delivered")
		}, []string{checkReported}},
		{"a refund completed that the PSP refused", func(w *world) {
			w.psp.Pix[0].Devolucoes[0].Status = pspsim.NaoRealizado
		}, []string{checkBalance, checkFinal}},
		{"a held receipt the PSP returned", func(w *world) {
			w.psp.Pix[2].Devolucoes = []pspTransfer{{ID: hexID(uuid.NewString()), Valor: 50, Status: pspsim.Devolvido}}
		}, []string{checkBalance, checkOnce, checkUnmatched}},
		{"money in suspense that no receipt holds", func(w *world) {
			w.post(store.HouseID, "nothing", ledger.UnmatchedReceived(10))
		}, []string{checkBalance, checkUnmatched}},
		{"an account that disagrees with its entries", func(w *world) {
			w.write(func(tx *store.Tx) error {
				return store.RawExec(context.Background(), tx, `UPDATE accounts SET balance = balance + 1 WHERE id = $1`,
					store.AccountID(w.client.ID, ledger.Fees))
			})
		}, []string{checkLedger}},
		{"a key that maps to two transactions", func(w *world) {
			w.keys = append(w.keys, KeyRecord{Kind: "payout", Client: 0, Key: "k-p-1", ExtID: "p-2", Status: 0})
		}, []string{checkKeys}},
		{"a key answered for another transaction", func(w *world) {
			w.keys[3].ID = uuid.NewString()
		}, []string{checkKeys}},
		{"an event not delivered", func(w *world) {
			w.event(w.charge, pix.EventCashinPaid, "", "failed")
		}, []string{checkDelivered, checkReported}},
		{"an event delivered that the receiver never accepted", func(w *world) {
			w.refused = pix.EventCashoutFailed
		}, []string{checkDelivered}},
		{"an invalid signature", func(w *world) {
			w.invalid = 1
			w.extra = []Delivery{{Client: 0, WebhookID: "evt_forged", Valid: false, Status: http.StatusUnauthorized}}
		}, []string{checkDelivered}},
		{"a charge paid after it expired (not a violation)", func(w *world) {
			w.event(w.charge, pix.EventCashinCancelled, "", "delivered")
		}, nil},
		{"a charge reported cancelled twice", func(w *world) {
			w.event(w.charge, pix.EventCashinCancelled, "", "delivered")
			w.event(w.charge, pix.EventCashinCancelled, "", "delivered")
		}, []string{checkReported}},
		{"an event lost", func(w *world) {
			w.write(func(tx *store.Tx) error {
				return store.RawExec(context.Background(), tx, `DELETE FROM events WHERE type = $1`, pix.EventCashoutPaid)
			})
		}, []string{checkReported}},
	}
	testkit.Databases(t, func(t *testing.T, open testkit.Opener) {
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				t.Parallel()
				w := newWorld(t, open(t))
				tc.plant(w)
				want := append([]string(nil), tc.fails...)
				sort.Strings(want)
				checks := w.audit()
				require.Equal(t, want, failing(checks), "%v", checks)
			})
		}
	})
}

// TestSettled: the system is not settled while a charge or a payout is pending, an
// event waits for delivery, a transfer is in processing at the PSP or a
// PSP payment is not in the books; it says which.
func TestSettled(t *testing.T) {
	t.Parallel()
	testkit.Databases(t, func(t *testing.T, open testkit.Opener) {
		ctx := context.Background()
		w := newWorld(t, open(t))
		var st pspsim.State
		require.NoError(t, json.Unmarshal([]byte(`{"pix":[
			{"endToEndId":"`+w.charge.EndToEndID+`","valor":"10.00"},
			{"endToEndId":"`+w.returned.PaymentEndToEndID+`","valor":"5.00","devolucoes":[{"id":"d1","valor":"5.00","status":"DEVOLVIDO"}]},
			{"endToEndId":"`+w.held.PaymentEndToEndID+`","valor":"0.50"}],
			"sends":[{"idEnvio":"a1","valor":"3.00","status":"REALIZADO"}]}`), &st))
		in := AuditInput{DB: w.db, PSP: st}
		ok, moving, err := Settled(ctx, in)
		require.NoError(t, err)
		require.True(t, ok, moving)

		p := w.failed
		p.ID, p.ExternalID, p.Status = uuid.NewString(), "p-3", pix.StatusPending
		w.insert(p)
		c := w.charge
		c.ID, c.ExternalID, c.Status, c.TxID, c.EndToEndID, c.PaidAmount, c.ConfirmedAt = uuid.NewString(), "c-pending", pix.StatusPending, "", "", 0, time.Time{}
		w.insert(c)
		w.event(w.paid, pix.EventCashoutPaid, "", "pending")
		w.event(w.paid, pix.EventCashoutPaid, "", "failed") // failed for good: moves no more
		in.PSP.Pix = append(in.PSP.Pix, st.Pix[0])
		in.PSP.Pix[len(in.PSP.Pix)-1].EndToEndID = "E99999999202611201200uncredited1"
		in.PSP.Sends[0].Status = pspsim.EmProcessamento
		ok, moving, err = Settled(ctx, in)
		require.NoError(t, err)
		require.False(t, ok)
		require.Equal(t, "1 charges pending, 1 payouts pending, 1 PSP transfers in processing, 1 PSP payments not yet in the books, 1 events not yet delivered", moving)
	})
}

// TestPSPFacts: the PSP's state (as GET /sim/state shows it) is read in
// centavos with ids in lower case; an amount that cannot be read is a
// violation of the balance check rather than a zero.
func TestPSPFacts(t *testing.T) {
	t.Parallel()
	var st pspsim.State
	require.NoError(t, json.Unmarshal([]byte(`{
		"pix":[{"endToEndId":"E1","txid":"T1","valor":"25.90","devolucoes":[{"id":"ABC","valor":"0.10","status":"DEVOLVIDO"}]},
		       {"endToEndId":"E2","valor":"ten"}],
		"sends":[{"idEnvio":"DEF","valor":"1.00","status":"REALIZADO"}],
		"send_puts":{"DEF":{"puts":3,"accepted":1}},
		"refund_puts":{"ABC":{"puts":1,"accepted":1}}}`), &st))
	f := pspFactsOf(st)
	require.Equal(t, []pspPix{
		{E2E: "E1", TxID: "T1", Valor: 2590, Devolucoes: []pspTransfer{{ID: "abc", Valor: 10, Status: pspsim.Devolvido}}},
		{E2E: "E2"},
	}, f.Pix)
	require.Equal(t, []pspTransfer{{ID: "def", Valor: 100, Status: pspsim.Realizado}}, f.Sends)
	require.Equal(t, pspsim.Count{Puts: 3, Accepted: 1}, f.SendPuts["def"])
	require.Equal(t, pspsim.Count{Puts: 1, Accepted: 1}, f.RefundPuts["abc"])
	require.Len(t, f.Problems, 1)
	require.Contains(t, f.Problems[0], "E2")
	require.NotEmpty(t, auditBalance(books{}, f).Violations)
}

// TestAuditKeysReplay: replays are compared with the first answer: same
// status, same JSON (key order aside), marked Idempotent-Replayed; a
// creation that holds no transaction is not sent again.
func TestAuditKeysReplay(t *testing.T) {
	t.Parallel()
	paid := pix.Transaction{ID: "p-id", ClientID: "cli", Type: pix.TypeCashout, IdempotencyKey: "k1", ExternalID: "e1"}
	b := books{Txs: []pix.Transaction{paid}}
	first := []byte(`{"statusCode":200,"transaction_id":"p-id","external_id":"e1","amount":3,"tax":0,"status":"PENDING"}`)
	rec := KeyRecord{Kind: "payout", Client: 0, Method: http.MethodPost, Path: "/api/v1/gateway/pix-payment", Key: "k1", ExtID: "e1",
		Body: []byte(`{}`), Status: 200, Response: first, ID: "p-id"}
	for _, tc := range []struct {
		name     string
		rec      KeyRecord
		status   int
		body     string
		replayed bool
		calls    int
		ok       bool
	}{
		{"the same answer in another key order", rec, 200,
			`{"status":"PENDING","tax":0,"amount":3,"external_id":"e1","transaction_id":"p-id","statusCode":200}`, true, 1, true},
		{"another status", rec, 201, string(first), true, 1, false},
		{"another body", rec, 200, strings.Replace(string(first), "PENDING", "PAID", 1), true, 1, false},
		{"not marked as a replay", rec, 200, string(first), false, 1, false},
		{"a server error", rec, 500, `{}`, false, 1, false},
		{"an unknown outcome replayed", KeyRecord{Kind: "payout", Key: "k1", Body: []byte(`{}`)}, 200, string(first), true, 1, true},
		{"an unknown outcome answered for another transaction", KeyRecord{Kind: "payout", Key: "k1", Body: []byte(`{}`)}, 200,
			strings.Replace(string(first), "p-id", "other", 1), true, 1, false},
		{"a refusal that holds nothing is not sent again", KeyRecord{Kind: "payout", Key: "k2", Body: []byte(`{}`), Status: 422}, 500, `{}`, false, 0, true},
		{"a key without one is not sent again", KeyRecord{Kind: "payout", Body: []byte(`{}`), Status: 200}, 500, `{}`, false, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			calls := 0
			in := AuditInput{Clients: []Credentials{{ClientID: "cli"}}, Keys: []KeyRecord{tc.rec},
				Call: func(_ context.Context, client int, method, path string, header map[string]string, body []byte) (int, http.Header, []byte, error) {
					calls++
					if client != 0 || method != tc.rec.Method || path != tc.rec.Path || string(body) != string(tc.rec.Body) || header["Idempotency-Key"] != tc.rec.Key {
						return 0, nil, nil, fmt.Errorf("unexpected request %d %s %s %v %s", client, method, path, header, body)
					}
					h := http.Header{}
					if tc.replayed {
						h.Set("Idempotent-Replayed", "true")
					}
					return tc.status, h, []byte(tc.body), nil
				}}
			c := auditKeys(context.Background(), in, b)
			require.Equal(t, tc.calls, calls)
			require.Equal(t, tc.ok, len(c.Violations) == 0, "%v", c.Violations)
		})
	}
}

// ledgerAPI answers statements and balances from a list of movements of
// one client, as pixgate would; skipAtFrom plants a boundary bug: a
// movement at exactly a window's from is left out of that window.
type ledgerAPI struct {
	moves      []time.Time
	amounts    []int64
	skipAtFrom bool
	calls      int
}

func (l *ledgerAPI) call(_ context.Context, _ int, method, path string, _ map[string]string, _ []byte) (int, http.Header, []byte, error) {
	l.calls++
	u, err := url.Parse(path)
	if err != nil || method != http.MethodGet {
		return 0, nil, nil, fmt.Errorf("unexpected %s %s", method, path)
	}
	var bal int64
	for _, a := range l.amounts {
		bal += a
	}
	if u.Path == "/api/v1/wallet/balance" {
		return 200, nil, []byte(fmt.Sprintf(`{"data":{"available_cents":%d}}`, bal)), nil
	}
	from, err1 := time.Parse(time.RFC3339Nano, u.Query().Get("from"))
	to, err2 := time.Parse(time.RFC3339Nano, u.Query().Get("to"))
	if u.Path != "/api/v1/wallet/statement" || err1 != nil || err2 != nil || u.Query().Get("format") != "json" {
		return 0, nil, nil, fmt.Errorf("unexpected %s", path)
	}
	var opening, run int64
	var ms []map[string]any
	for i, at := range l.moves {
		switch {
		case at.Before(from):
			opening += l.amounts[i]
			run = opening
		case at.Before(to) && !(l.skipAtFrom && at.Equal(from)):
			run += l.amounts[i]
			ms = append(ms, map[string]any{"at": stamp(at), "transaction_id": fmt.Sprint(i), "type": "charge", "amount_cents": l.amounts[i], "balance_cents": run})
		}
	}
	closing := opening
	for _, m := range ms {
		closing += m["amount_cents"].(int64)
	}
	body, _ := json.Marshal(map[string]any{"data": map[string]any{"opening_balance_cents": opening, "closing_balance_cents": closing, "movements": ms}})
	return 200, nil, body, nil
}

// TestAuditStatements: the statement check reads the whole window and
// pieces of it split at the client's transactions, and catches a window
// that drops the movement at its opening instant.
func TestAuditStatements(t *testing.T) {
	t.Parallel()
	start := time.Now().UTC().Add(-10 * time.Minute).Truncate(time.Millisecond)
	var txs []pix.Transaction
	api := &ledgerAPI{}
	for i := range 8 {
		at := start.Add(time.Duration(i) * time.Second)
		txs = append(txs, pix.Transaction{ID: fmt.Sprint(i), ClientID: "cli", CreatedAt: at})
		api.moves, api.amounts = append(api.moves, at), append(api.amounts, int64(100*(i+1)))
	}
	b := books{Txs: txs}
	in := AuditInput{Clients: []Credentials{{ClientID: "cli"}}, Call: api.call}
	c := auditStatements(context.Background(), in, b)
	require.Empty(t, c.Violations)
	require.Equal(t, 1+4, c.Checked, "the whole window and four pieces")
	require.Equal(t, 1+1+4, api.calls, "and the balance")

	api.skipAtFrom = true
	c = auditStatements(context.Background(), in, b)
	require.NotEmpty(t, c.Violations)
	require.Contains(t, strings.Join(c.Violations, "\n"), "opens at")
}

// TestVerifyStatement: each movement's balance runs from the opening to
// the closing balance.
func TestVerifyStatement(t *testing.T) {
	t.Parallel()
	var s statementData
	require.NoError(t, json.Unmarshal([]byte(`{"opening_balance_cents":100,"closing_balance_cents":250,"movements":[
		{"amount_cents":200,"balance_cents":300},{"amount_cents":-50,"balance_cents":250}]}`), &s))
	require.Empty(t, verifyStatement(s))
	s.Movements[0].Balance = 310
	require.Len(t, verifyStatement(s), 2, "the movement that shows a wrong balance, and the next one, which runs from it")
	s.Movements[0].Balance = 300
	s.Closing = 260
	require.Len(t, verifyStatement(s), 1)
}
