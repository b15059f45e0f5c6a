package sim

import (
	"context"
	"encoding/json"
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
	"github.com/pixgate/pixgate/internal/testkit"
)

// recWorld is the world plus an approved recurrence whose first cycle's
// charge was debited and credited (R$ 8.00) and whose second waits for
// its debit, with the PSP's rec and cobrs that agree.
type recWorld struct {
	*world
	rec            pix.Recurrence
	paid, pending  pix.Transaction
	paidE2E, idRec string
}

func newRecWorld(t *testing.T, db *store.DB) *recWorld {
	t.Helper()
	w := &recWorld{world: newWorld(t, db), idRec: "RR9999999920261120abcdefghijk"}
	ctx := context.Background()
	id := w.client.ID
	start := pix.Date{Year: 2026, Month: time.December, Day: 1}
	w.rec = pix.Recurrence{ID: uuid.NewString(), ClientID: id, ExternalID: "r-1", RequestHash: "h", PSPID: w.idRec,
		Status: pix.RecurrenceApproved, Payer: pix.RecurrencePayer{Name: "Maria", Document: "52998224725"}, Contract: "c", Description: "d",
		Schedule: pix.Schedule{Frequency: pix.Monthly, Start: start}, Amount: 800, Retry: pix.RetryNone, QRCode: "qr",
		CallbackURL: "http://127.0.0.1:1/hook", NextCycle: 3, NextDue: pix.Date{Year: 2100, Month: time.January, Day: 1},
		CreatedAt: auditT0, UpdatedAt: auditT0}
	w.write(func(tx *store.Tx) error {
		_, err := tx.InsertRecurrence(ctx, w.rec)
		return err
	})
	w.paidE2E = "E99999999202611201200cyclepaid01"
	fee := min(w.client.CashinFee.Fee(800), 800)
	w.paid = pix.Transaction{ID: uuid.NewString(), ClientID: id, Type: pix.TypeCashin, RequestHash: "cycle", Status: pix.StatusPaid,
		Amount: 800, PaidAmount: 800, Tax: fee, CreatedAt: auditT0, ConfirmedAt: auditT0.Add(time.Second), ExpiresAt: auditT0.Add(240 * time.Hour),
		TxID: "cyclecharge00000000000000000001", EndToEndID: w.paidE2E, RecurrenceID: w.rec.ID}
	w.pending = w.paid
	w.pending.ID, w.pending.Status, w.pending.PaidAmount, w.pending.ConfirmedAt, w.pending.EndToEndID, w.pending.TxID =
		uuid.NewString(), pix.StatusPending, 0, time.Time{}, "", "cyclecharge00000000000000000002"
	for n, t := range []pix.Transaction{w.paid, w.pending} {
		w.insert(t)
		w.write(func(tx *store.Tx) error {
			return tx.InsertCycle(ctx, pix.Cycle{PaymentID: t.ID, RecurrenceID: w.rec.ID, Number: n + 1, DueDate: start.AddDays(30 * n), UpdatedAt: auditT0})
		})
	}
	w.post(id, w.paid.ID, ledger.CashinPaid(800, fee))
	w.event(w.paid, pix.EventCashinPaid, "", "delivered")
	w.recEvent(pix.EventRecurrenceApproved)
	w.psp.Pix = append(w.psp.Pix, pspPix{E2E: w.paidE2E, TxID: w.paid.TxID, Valor: 800})
	w.psp.Recs = map[string]pspsim.RecFact{w.idRec: {IDRec: w.idRec, Status: pspsim.RecAprovada}}
	w.psp.CobRs = []pspCobR{
		{TxID: w.paid.TxID, IDRec: w.idRec, Due: start.String(), Status: pspsim.CobRConcluida, Valor: 800, Attempts: 1, Pix: []string{w.paidE2E}},
		{TxID: w.pending.TxID, IDRec: w.idRec, Due: start.AddDays(30).String(), Status: pspsim.CobRAtiva, Valor: 800, Attempts: 1},
	}
	return w
}

// recEvent writes a delivered pix.recurrence.* event of the recurrence.
func (w *recWorld) recEvent(typ string) {
	w.t.Helper()
	body, err := json.Marshal(map[string]any{"event": typ, "recurrence_id": w.rec.ID})
	require.NoError(w.t, err)
	e := pix.Event{ID: "evt_" + strings.ReplaceAll(uuid.NewString(), "-", ""), ClientID: w.client.ID, TransactionID: w.rec.ID, Type: typ,
		URL: "http://127.0.0.1:1/hook", Payload: string(body), CreatedAt: auditT0.Add(time.Minute)}
	w.write(func(tx *store.Tx) error {
		if err := tx.InsertEvent(context.Background(), e); err != nil {
			return err
		}
		return store.RawExec(context.Background(), tx, `UPDATE events SET status = 'delivered', attempts = 1 WHERE id = $1`, e.ID)
	})
}

// TestAuditRecurrences: a consistent recurrence passes; each planted
// inconsistency of a recurrence or its cycles is found, by the checks it
// concerns and no other.
func TestAuditRecurrences(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		plant func(w *recWorld)
		fails []string
	}{
		{"consistent", func(*recWorld) {}, nil},
		{"a cycle registered twice at the PSP under another txid", func(w *recWorld) {
			c := w.psp.CobRs[1]
			c.TxID = "cyclecharge0000000000000000dup2"
			w.psp.CobRs = append(w.psp.CobRs, c)
		}, []string{checkCycles}},
		{"a cycle whose charge the PSP does not hold", func(w *recWorld) {
			w.psp.CobRs = w.psp.CobRs[:1]
		}, []string{checkCycles}},
		{"a cycle charge for another amount than its cobr", func(w *recWorld) {
			w.psp.CobRs[1].Valor = 900
		}, []string{checkCycles}},
		{"a cycle charge paid that the PSP did not debit", func(w *recWorld) {
			w.psp.CobRs[0].Status, w.psp.CobRs[0].Pix = pspsim.CobRAtiva, nil
		}, []string{checkCycleMove}},
		{"a cobr debited but its charge still pending", func(w *recWorld) {
			w.psp.CobRs[1].Status = pspsim.CobRConcluida
		}, []string{checkCycleMove}},
		{"a cycle charge credited with a wrong fee", func(w *recWorld) {
			w.write(func(tx *store.Tx) error {
				return store.RawExec(context.Background(), tx, `UPDATE transactions SET tax = tax + 1 WHERE id = $1`, w.paid.ID)
			})
		}, []string{checkCycleMove}},
		{"a recurrence approved here, rejected at the PSP", func(w *recWorld) {
			w.psp.Recs[w.idRec] = pspsim.RecFact{IDRec: w.idRec, Status: pspsim.RecRejeitada}
		}, []string{checkRecStatus}},
		{"an approved recurrence at the PSP that no row names", func(w *recWorld) {
			w.psp.Recs["RRother"] = pspsim.RecFact{IDRec: "RRother", Status: pspsim.RecAprovada}
		}, []string{checkRecStatus}},
		{"a recurrence left behind by a crash, never approved (not a violation)", func(w *recWorld) {
			w.psp.Recs["RRother"] = pspsim.RecFact{IDRec: "RRother", Status: pspsim.RecCriada}
		}, nil},
		{"a recurrence's approval reported twice", func(w *recWorld) {
			w.recEvent(pix.EventRecurrenceApproved)
		}, []string{checkReported}},
		{"a failed cycle not reported", func(w *recWorld) {
			w.psp.CobRs[1].Status = pspsim.CobRExpirada
			w.write(func(tx *store.Tx) error {
				return store.RawExec(context.Background(), tx, `UPDATE transactions SET status = 'CANCELLED' WHERE id = $1`, w.pending.ID)
			})
			w.event(w.pending, pix.EventCashinCancelled, "", "delivered")
		}, []string{checkReported}},
	}
	testkit.Databases(t, func(t *testing.T, open testkit.Opener) {
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				t.Parallel()
				w := newRecWorld(t, open(t))
				tc.plant(w)
				want := append([]string(nil), tc.fails...)
				sort.Strings(want)
				checks := w.audit()
				require.Equal(t, want, failing(checks), "%v", checks)
				if tc.fails == nil {
					require.Equal(t, 2+2, checks[checkCycles].Checked)
					require.Equal(t, 2, checks[checkCycleMove].Checked)
				}
			})
		}
	})
}

// TestSettledRecurrences: a cycle charge waiting days for its debit is not
// what is still moving; a cycle charge that disagrees with its cobr (a
// charge pending as well), a
// recurrence that disagrees with the PSP's and an approved recurrence
// whose next cycle's charge window is open are.
func TestSettledRecurrences(t *testing.T) {
	t.Parallel()
	testkit.Databases(t, func(t *testing.T, open testkit.Opener) {
		ctx := context.Background()
		w := newRecWorld(t, open(t))
		st := pspsim.State{
			Recs: []pspsim.RecFact{{IDRec: w.idRec, Status: pspsim.RecAprovada}},
			CobRs: []pspsim.CobRFact{
				{TxID: w.paid.TxID, IDRec: w.idRec, Status: pspsim.CobRConcluida, Valor: "8.00", Pix: []string{w.paidE2E}},
				{TxID: w.pending.TxID, IDRec: w.idRec, Status: pspsim.CobRAtiva, Valor: "8.00"},
			},
		}
		ok, moving, err := Settled(ctx, AuditInput{DB: w.db, PSP: st})
		require.NoError(t, err)
		require.True(t, ok, moving)

		st.Recs[0].Status = pspsim.RecCancelada
		st.CobRs[1].Status = pspsim.CobRCancelada
		st.CobRs = append(st.CobRs, pspsim.CobRFact{TxID: "orphan", IDRec: w.idRec, Status: pspsim.CobRAtiva, Valor: "8.00"})
		w.write(func(tx *store.Tx) error {
			return store.RawExec(ctx, tx, `UPDATE recurrences SET next_due = $2 WHERE id = $1`, w.rec.ID,
				pix.DateOf(time.Now().In(saoPaulo)).AddDays(5).String())
		})
		ok, moving, err = Settled(ctx, AuditInput{DB: w.db, PSP: st})
		require.NoError(t, err)
		require.False(t, ok)
		require.Equal(t, "1 charges pending, 1 recurrences not yet as the PSP says, 1 cycle charges not yet as their cobr says, "+
			"1 cycles whose charge is still to create, 1 PSP cycle charges not yet in the books", moving)
	})
}
