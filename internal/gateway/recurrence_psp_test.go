package gateway_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/internal/gateway"
	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/provider/apipix"
	"github.com/pixgate/pixgate/internal/pspsim"
	"github.com/pixgate/pixgate/internal/recurrence"
	"github.com/pixgate/pixgate/internal/testkit"
)

// recPSP is a production gateway running recurrences on the PSP simulator
// through the API Pix client (with a receiving account), both on one
// clock, with one client paying a 1% cash-in fee. Every exchange with the
// simulator is checked against BACEN's OpenAPI where it is at hand.
type recPSP struct {
	*duePSP
}

func newRecPSP(t *testing.T, open testkit.Opener, day string) *recPSP {
	t.Helper()
	return newRecPSPLogging(t, open, day, nil)
}

// newRecPSPLogging is newRecPSP with the gateway's log lines written to logs.
func newRecPSPLogging(t *testing.T, open testkit.Opener, day string, logs io.Writer) *recPSP {
	t.Helper()
	f := &duePSP{db: open(t), clock: &testkit.Clock{}, logs: logs}
	saoPauloNoon(t, f.clock, day)
	f.start(t, apipix.Account{Branch: "0001", Number: "123456", Type: "CORRENTE"})
	return &recPSP{f}
}

// read runs the readings of the PSP's changes (and of its received Pix)
// once more: a little later, so that the readings are due.
func (f *recPSP) read(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	f.clock.Advance(6 * time.Second)
	_, err := f.gw.Recurrences().Read(ctx, 0)
	require.NoError(t, err)
	f.clock.Advance(time.Minute)
	_, err = f.gw.Cashin().ReconcileReceived(ctx, 0)
	require.NoError(t, err)
}

// cycles runs the cycle job once more.
func (f *recPSP) cycles(t *testing.T) {
	t.Helper()
	f.clock.Advance(6 * time.Second)
	_, err := f.gw.Recurrences().RunCycles(context.Background(), 100)
	require.NoError(t, err)
}

func (f *recPSP) view(t *testing.T, id string) recurrence.View {
	t.Helper()
	v, err := f.gw.Recurrences().Get(context.Background(), f.c, id)
	require.NoError(t, err)
	return v
}

// TestRecurrencesAtThePSP runs both journeys against the simulator: the
// payer's approval read from the PSP's list (or a webhook's report read
// back), each cycle's cobr created by the job, a failed debit retried
// (POST /cobr/{txid}/retentativa), the debit credited once from the PSP's
// confirmed Pix with the fee, and the merchant's cancellation at the PSP.
func TestRecurrencesAtThePSP(t *testing.T) {
	t.Parallel()
	testkit.Databases(t, func(t *testing.T, open testkit.Opener) {
		f := newRecPSP(t, open, "2026-12-01")
		ctx := context.Background()

		// Journey 2.
		req, body := recurrenceRequest("j2", "2026-12-05", "", "THREE_IN_SEVEN_DAYS")
		created, _, err := f.gw.Recurrences().Create(ctx, f.c, gateway.Keyed(req, "", body))
		require.NoError(t, err)
		st, err := f.psp.Recurrence(ctx, pspIDOf(t, f, created.RecurrenceID))
		require.NoError(t, err)
		require.Equal(t, pix.RecurrenceCreated, st.Status)
		pspID := st.ID

		// A webhook's report is read back: nothing moves while the PSP says CREATED.
		require.NoError(t, f.gw.Recurrences().Reported(ctx, []string{pspID}))
		require.Equal(t, pix.RecurrenceCreated, f.view(t, created.RecurrenceID).Status)
		_, err = f.sim.ApproveRec(ctx, pspID)
		require.NoError(t, err)
		f.read(t)
		v := f.view(t, created.RecurrenceID)
		require.Equal(t, pix.RecurrenceApproved, v.Status)

		// The first cycle's cobr, created by the job; a failed debit is retried.
		f.cycles(t)
		v = f.view(t, created.RecurrenceID)
		require.Len(t, v.Charges, 1)
		charge, err := f.gw.Charge(ctx, f.c, v.Charges[0].PaymentID)
		require.NoError(t, err)
		cs, err := f.psp.CycleCharge(ctx, charge.TxID)
		require.NoError(t, err)
		require.Equal(t, "2026-12-05", cs.DueDate.String())
		require.NoError(t, f.sim.FailCobR(ctx, charge.TxID))
		require.NoError(t, f.gw.Recurrences().CyclesReported(ctx, []string{charge.TxID}))
		cy, err := f.db.Cycle(ctx, charge.ID)
		require.NoError(t, err)
		require.Equal(t, 1, cy.Attempts)
		// 2026-12-05 is a Saturday: the debit moved to Monday the 7th, and
		// the first retry is the day after it.
		require.Equal(t, "2026-12-08", cy.RetryOn.String())
		f.cycles(t)
		cy, err = f.db.Cycle(ctx, charge.ID)
		require.NoError(t, err)
		require.True(t, cy.RetryOn.IsZero(), "the retry was asked for")
		retried := false
		for _, r := range f.sim.Requests() {
			t.Log(r.Method, r.Path, r.Status)
			retried = retried || (r.Method == http.MethodPost && r.Path == "/v2/cobr/"+charge.TxID+"/retentativa/2026-12-08" && r.Status < 300)
		}
		require.True(t, retried)

		// The retry is debited: credited once, whichever reading sees it.
		_, err = f.sim.DebitCobR(ctx, charge.TxID)
		require.NoError(t, err)
		f.read(t)
		f.read(t)
		charge, err = f.gw.Charge(ctx, f.c, charge.ID)
		require.NoError(t, err)
		require.Equal(t, pix.StatusPaid, charge.Status)
		require.Equal(t, pix.Amount(50), charge.Tax)
		require.Equal(t, 2, f.view(t, created.RecurrenceID).Charges[0].Attempts)
		bal, err := f.gw.Balance(ctx, f.c)
		require.NoError(t, err)
		require.Equal(t, pix.Amount(4990-50), bal.Available)
		types, bodies := eventsOf(t, f.db, charge.ID)
		require.Equal(t, []string{pix.EventCashinPaid}, types)
		require.Equal(t, created.RecurrenceID, bodies[0]["recurrence_id"])

		// The merchant cancels: at the PSP first.
		v, err = f.gw.Recurrences().Cancel(ctx, f.c, created.RecurrenceID)
		require.NoError(t, err)
		require.Equal(t, pix.RecurrenceCancelled, v.Status)
		st, err = f.psp.Recurrence(ctx, pspID)
		require.NoError(t, err)
		require.Equal(t, pix.RecurrenceCancelled, st.Status)
		f.read(t)
		require.Equal(t, pix.RecurrenceCancelled, f.view(t, created.RecurrenceID).Status)
		types, _ = eventsOf(t, f.db, created.RecurrenceID)
		require.Equal(t, []string{pix.EventRecurrenceApproved, pix.EventRecurrenceCancelled}, types)

		// Journey 3: one scan pays the first payment and approves.
		req, _ = recurrenceRequest("j3", "2026-12-07", "2027-01-07", "NONE")
		req.FirstPayment = json.RawMessage("10.00")
		body, err = json.Marshal(req)
		require.NoError(t, err)
		created, _, err = f.gw.Recurrences().Create(ctx, f.c, gateway.Keyed(req, "", body))
		require.NoError(t, err)
		require.NotNil(t, created.FirstPaymentID)
		_, err = f.sim.ApproveRec(ctx, pspIDOf(t, f, created.RecurrenceID))
		require.NoError(t, err)
		f.read(t)
		first, err := f.gw.Charge(ctx, f.c, *created.FirstPaymentID)
		require.NoError(t, err)
		require.Equal(t, pix.StatusPaid, first.Status)
		require.Equal(t, pix.RecurrenceApproved, f.view(t, created.RecurrenceID).Status)

		// The payer cancels at their bank: read from the PSP's list.
		f.cycles(t)
		require.Len(t, f.view(t, created.RecurrenceID).Charges, 1)
		require.NoError(t, f.sim.CancelRecByPayer(ctx, pspIDOf(t, f, created.RecurrenceID)))
		f.read(t)
		v = f.view(t, created.RecurrenceID)
		require.Equal(t, pix.RecurrenceCancelled, v.Status)
		require.Equal(t, pix.CancelledByPayer, *v.CancelledBy)
		require.Equal(t, pix.StatusCancelled, v.Charges[0].Status, "its cycle charge not yet debited goes with it")
	})
}

// pspIDOf is the PSP's idRec of the recurrence id.
func pspIDOf(t *testing.T, f *recPSP, id string) string {
	t.Helper()
	r, err := f.db.Recurrence(context.Background(), f.c.ID, id)
	require.NoError(t, err)
	return r.PSPID
}

// TestRecurrencePayerCancelWinsOverARefusedCycle: the payer cancels at
// their bank before the last cycle's charge is created, and pixgate has
// not read it yet; the PSP then refuses that charge. The refusal is read
// back: the recurrence ends CANCELLED by the payer with its event, not
// FINISHED with the cycle skipped. A recurrence whose last cycle is paid
// ends FINISHED with pix.recurrence.finished.
func TestRecurrencePayerCancelWinsOverARefusedCycle(t *testing.T) {
	t.Parallel()
	testkit.Databases(t, func(t *testing.T, open testkit.Opener) {
		f := newRecPSP(t, open, "2026-12-01")
		ctx := context.Background()

		req, body := recurrenceRequest("once", "2026-12-07", "2026-12-07", "NONE")
		created, _, err := f.gw.Recurrences().Create(ctx, f.c, gateway.Keyed(req, "", body))
		require.NoError(t, err)
		pspID := pspIDOf(t, f, created.RecurrenceID)
		_, err = f.sim.ApproveRec(ctx, pspID)
		require.NoError(t, err)
		f.read(t)
		require.Equal(t, pix.RecurrenceApproved, f.view(t, created.RecurrenceID).Status)

		require.NoError(t, f.sim.CancelRecByPayer(ctx, pspID))
		f.cycles(t)
		v := f.view(t, created.RecurrenceID)
		require.Equal(t, pix.RecurrenceCancelled, v.Status)
		require.NotNil(t, v.CancelledBy)
		require.Equal(t, pix.CancelledByPayer, *v.CancelledBy)
		require.Empty(t, v.Charges)
		types, bodies := eventsOf(t, f.db, created.RecurrenceID)
		require.Equal(t, []string{pix.EventRecurrenceApproved, pix.EventRecurrenceCancelled}, types)
		require.Equal(t, "payer", bodies[1]["cancelled_by"])
		f.read(t)
		f.cycles(t)
		require.Equal(t, pix.RecurrenceCancelled, f.view(t, created.RecurrenceID).Status)

		// The same calendar, debited: FINISHED, with its event.
		req, body = recurrenceRequest("paid", "2026-12-07", "2026-12-07", "NONE")
		created, _, err = f.gw.Recurrences().Create(ctx, f.c, gateway.Keyed(req, "", body))
		require.NoError(t, err)
		_, err = f.sim.ApproveRec(ctx, pspIDOf(t, f, created.RecurrenceID))
		require.NoError(t, err)
		f.read(t)
		f.cycles(t)
		v = f.view(t, created.RecurrenceID)
		require.Len(t, v.Charges, 1)
		charge, err := f.gw.Charge(ctx, f.c, v.Charges[0].PaymentID)
		require.NoError(t, err)
		_, err = f.sim.DebitCobR(ctx, charge.TxID)
		require.NoError(t, err)
		f.read(t)
		require.Equal(t, pix.RecurrenceFinished, f.view(t, created.RecurrenceID).Status)
		es, err := f.db.Events(ctx, created.RecurrenceID)
		require.NoError(t, err)
		types, bodies = eventsOf(t, f.db, created.RecurrenceID)
		require.Equal(t, []string{pix.EventRecurrenceApproved, pix.EventRecurrenceFinished}, types)
		require.Equal(t, "https://merchant.example.com/rec", es[1].URL)
		require.Equal(t, "paid", bodies[1]["external_id"])
		require.Equal(t, "FINISHED", bodies[1]["status"])
	})
}

// TestOrphanRecurrenceWithdrawn: a create whose reading of the QR code
// fails leaves at the PSP a recurrence that no row holds. The readings
// leave it alone while a create could still be storing it, then withdraw
// it (CANCELADA), logging that once however many readings list it after.
func TestOrphanRecurrenceWithdrawn(t *testing.T) {
	t.Parallel()
	testkit.Databases(t, func(t *testing.T, open testkit.Opener) {
		var logs syncBuffer
		f := newRecPSPLogging(t, open, "2026-12-01", &logs)
		ctx := context.Background()
		f.sim.AddFault(pspsim.Fault{Method: http.MethodGet, PathPrefix: "/v2/rec/", Kind: pspsim.FaultError, Times: 100})
		req, body := recurrenceRequest("lost", "2026-12-07", "", "NONE")
		_, _, err := f.gw.Recurrences().Create(ctx, f.c, gateway.Keyed(req, "", body))
		requireCode(t, err, pix.EProviderUnavailable)
		f.sim.ClearFaults()
		recs := f.sim.State().Recs
		require.Len(t, recs, 1)
		orphan := recs[0].IDRec
		require.Equal(t, pspsim.RecCriada, recs[0].Status)
		logs.Reset() // the failed create's lines name the orphan too

		f.read(t)
		require.Equal(t, pspsim.RecCriada, f.sim.State().Recs[0].Status, "young: a create may still be storing it")
		f.read(t)
		require.Equal(t, pspsim.RecCancelada, f.sim.State().Recs[0].Status)
		for range 5 {
			f.read(t)
		}
		require.Equal(t, 1, strings.Count(logs.String(), orphan), logs.String())
		require.Equal(t, 1, strings.Count(logs.String(), "withdrew at the PSP a recurrence"), logs.String())
	})
}

// syncBuffer is a bytes.Buffer that log lines may be written to from
// several goroutines.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func (b *syncBuffer) Reset() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf.Reset()
}
