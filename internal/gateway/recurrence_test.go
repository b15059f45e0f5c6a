package gateway_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/internal/gateway"
	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/provider"
	"github.com/pixgate/pixgate/internal/provider/sandbox"
	"github.com/pixgate/pixgate/internal/recurrence"
	"github.com/pixgate/pixgate/internal/store"
	"github.com/pixgate/pixgate/internal/testkit"
)

// countingSandbox is the sandbox PSP counting the cycle charges it is
// asked to create, by txid; crashAfter, when set, is called after each
// creation (a test cancels the caller's context there: the process "dies"
// between the PSP's answer and the write).
type countingSandbox struct {
	*sandbox.Provider
	mu         sync.Mutex
	creates    map[string]int
	crashAfter func()
}

func (p *countingSandbox) CreateCycleCharge(ctx context.Context, c provider.CycleCharge) error {
	err := p.Provider.CreateCycleCharge(ctx, c)
	p.mu.Lock()
	p.creates[c.TxID]++
	crash := p.crashAfter
	p.mu.Unlock()
	if crash != nil {
		crash()
	}
	return err
}

// recNode is one pixgate node of a recurrence test: a sandbox gateway on
// the shared db and clock.
func recNode(t *testing.T, db *store.DB, clock *testkit.Clock) (*gateway.Service, *countingSandbox) {
	t.Helper()
	psp := &countingSandbox{Provider: sandbox.New(sandbox.Config{PixKey: "pix@pixgate.dev", MerchantName: "Loja", MerchantCity: "Recife",
		Now: clock.Now}), creates: map[string]int{}}
	gw, err := gateway.New(gateway.Config{DB: db, Env: "sandbox", ChargeTTL: time.Hour, Log: slog.New(slog.NewJSONHandler(io.Discard, nil)),
		Provider: psp, Now: clock.Now})
	require.NoError(t, err)
	return gw, psp
}

// saoPauloNoon sets clock to noon of day in São Paulo.
func saoPauloNoon(t *testing.T, clock *testkit.Clock, day string) {
	t.Helper()
	d, err := pix.ParseDate(day)
	require.NoError(t, err)
	loc, err := time.LoadLocation("America/Sao_Paulo")
	require.NoError(t, err)
	clock.Set(d.Start(loc).Add(12 * time.Hour))
}

func recurrenceRequest(ext, start, end, retry string) (*pix.RecurrenceRequest, []byte) {
	r := &pix.RecurrenceRequest{ExternalID: ext, Payer: &pix.RecurrencePayer{Name: "Maria Souza", Document: "52998224725"},
		Contract: "CTR-" + ext, Description: "Plano mensal", Frequency: "MONTHLY", StartDate: start, EndDate: end,
		Amount: json.RawMessage("49.90"), Retry: retry, PostbackURL: "https://merchant.example.com/rec"}
	b, err := json.Marshal(r)
	if err != nil {
		panic(err)
	}
	return r, b
}

// events returns the types of the events written for subject (a
// transaction or a recurrence), oldest first, with their bodies.
func eventsOf(t *testing.T, db *store.DB, subject string) ([]string, []map[string]any) {
	t.Helper()
	es, err := db.Events(context.Background(), subject)
	require.NoError(t, err)
	var types []string
	var bodies []map[string]any
	for _, e := range es {
		types = append(types, e.Type)
		var b map[string]any
		require.NoError(t, json.Unmarshal([]byte(e.Payload), &b))
		bodies = append(bodies, b)
	}
	return types, bodies
}

func TestRecurrenceCalendarAcrossMonthEnds(t *testing.T) {
	t.Parallel()
	testkit.Databases(t, func(t *testing.T, open testkit.Opener) {
		db := open(t)
		clock := &testkit.Clock{}
		saoPauloNoon(t, clock, "2027-01-15")
		gw, psp := recNode(t, db, clock)
		ctx := context.Background()
		c := merchant(t, db, gw, "m", 100)

		req, body := recurrenceRequest("sub-1", "2027-01-31", "2027-05-31", "NONE")
		created, replayed, err := gw.Recurrences().Create(ctx, c, gateway.Keyed(req, "", body))
		require.NoError(t, err)
		require.False(t, replayed)
		require.Equal(t, pix.RecurrenceCreated, created.Status)
		require.NotEmpty(t, created.QRCode)
		require.Equal(t, "2027-01-31", created.NextDueDate.String())

		// Nothing is charged before the payer approves.
		_, err = gw.Recurrences().RunCycles(ctx, 100)
		require.NoError(t, err)
		v, err := gw.Recurrences().Sandbox().Answer(ctx, c, created.RecurrenceID, recurrence.SandboxApprove)
		require.NoError(t, err)
		require.Equal(t, pix.RecurrenceApproved, v.Status)
		require.Empty(t, v.Charges)

		loc, err := time.LoadLocation("America/Sao_Paulo")
		require.NoError(t, err)
		createdOn := map[string]string{} // due date → the day its charge was created
		for day := 0; day < 140; day++ {
			// Twice a day: a second run the same day creates nothing more.
			for range 2 {
				_, err := gw.Recurrences().RunCycles(ctx, 100)
				require.NoError(t, err)
				clock.Advance(6 * time.Second) // past RecurrenceEvery
			}
			v, err := gw.Recurrences().Get(ctx, c, created.RecurrenceID)
			require.NoError(t, err)
			for _, ch := range v.Charges {
				if _, seen := createdOn[ch.DueDate.String()]; seen {
					continue
				}
				createdOn[ch.DueDate.String()] = gw.Today().String()
				require.Equal(t, pix.StatusPending, ch.Status)
				require.Equal(t, pix.Amount(4990), ch.Amount)
				// Paid at once, as a payer's bank would on the due date.
				tx, err := gw.Charge(ctx, c, ch.PaymentID)
				require.NoError(t, err)
				require.Equal(t, created.RecurrenceID, tx.RecurrenceID)
				require.Equal(t, pix.CycleExpiresAt(pix.RetryNone, ch.DueDate, loc).UTC(), tx.ExpiresAt.UTC())
				paid, err := gw.Sandbox().Pay(ctx, tx)
				require.NoError(t, err)
				require.Equal(t, pix.StatusPaid, paid.Status)
				require.Equal(t, pix.Amount(50), paid.Tax)
			}
			clock.Advance(24*time.Hour - 12*time.Second)
		}
		// Each cycle is due on the 31st or the month's last day, and was
		// created the first day of its window (10 days ahead).
		want := map[string]string{"2027-01-31": "2027-01-21", "2027-02-28": "2027-02-18", "2027-03-31": "2027-03-21",
			"2027-04-30": "2027-04-20", "2027-05-31": "2027-05-21"}
		require.Equal(t, want, createdOn)
		v, err = gw.Recurrences().Get(ctx, c, created.RecurrenceID)
		require.NoError(t, err)
		require.Equal(t, pix.RecurrenceFinished, v.Status)
		require.Nil(t, v.NextDueDate)
		require.Len(t, v.Charges, 5)
		for _, ch := range v.Charges {
			require.Equal(t, pix.StatusPaid, ch.Status)
			require.Equal(t, 1, ch.Attempts)
			types, bodies := eventsOf(t, db, ch.PaymentID)
			require.Equal(t, []string{pix.EventCashinPaid}, types)
			require.Equal(t, created.RecurrenceID, bodies[0]["recurrence_id"])
		}
		// One PSP creation per cycle, the job's second run included.
		require.Len(t, psp.creates, 5)
		for _, n := range psp.creates {
			require.Equal(t, 1, n)
		}
		bal, err := gw.Balance(ctx, c)
		require.NoError(t, err)
		require.Equal(t, pix.Amount(5*(4990-50)), bal.Available)
		// The last cycle paid, the recurrence finished with its event.
		es, err := db.Events(ctx, created.RecurrenceID)
		require.NoError(t, err)
		types, bodies := eventsOf(t, db, created.RecurrenceID)
		require.Equal(t, []string{pix.EventRecurrenceApproved, pix.EventRecurrenceFinished}, types)
		require.Equal(t, "https://merchant.example.com/rec", es[1].URL)
		require.Equal(t, created.RecurrenceID, bodies[1]["recurrence_id"])
		require.Equal(t, "sub-1", bodies[1]["external_id"])
		require.Equal(t, "FINISHED", bodies[1]["status"])
	})
}

func TestRecurrenceCycleJobCreatesEachCycleOnceAcrossCrashesAndNodes(t *testing.T) {
	t.Parallel()
	testkit.Databases(t, func(t *testing.T, open testkit.Opener) {
		db := open(t)
		clock := &testkit.Clock{}
		saoPauloNoon(t, clock, "2027-03-01")
		gw1, psp1 := recNode(t, db, clock)
		gw2, psp2 := recNode(t, db, clock)
		ctx := context.Background()
		c := merchant(t, db, gw1, "m", 0)

		var ids []string
		for _, ext := range []string{"a", "b", "c"} {
			req, body := recurrenceRequest(ext, "2027-03-05", "", "THREE_IN_SEVEN_DAYS")
			created, _, err := gw1.Recurrences().Create(ctx, c, gateway.Keyed(req, "", body))
			require.NoError(t, err)
			_, err = gw1.Recurrences().Sandbox().Answer(ctx, c, created.RecurrenceID, recurrence.SandboxApprove)
			require.NoError(t, err)
			ids = append(ids, created.RecurrenceID)
		}

		// Node 1 dies after the PSP created each cycle's charge, before it
		// stored it: nothing is stored, and no calendar moved.
		crashCtx, crash := context.WithCancel(ctx)
		psp1.crashAfter = crash
		_, err := gw1.Recurrences().RunCycles(crashCtx, 100)
		require.Error(t, err)
		require.Len(t, psp1.creates, 1, "the first creation crashed the node")
		for _, id := range ids {
			v, err := gw1.Recurrences().Get(ctx, c, id)
			require.NoError(t, err)
			require.Empty(t, v.Charges)
		}

		// Both nodes run the job at once, again and again: each cycle in
		// the window is created once, under the txid the dead node used.
		psp1.crashAfter = nil
		for range 5 {
			clock.Advance(6 * time.Second)
			var wg sync.WaitGroup
			for _, gw := range []*gateway.Service{gw1, gw2} {
				wg.Add(1)
				go func() {
					defer wg.Done()
					_, _ = gw.Recurrences().RunCycles(ctx, 100)
				}()
			}
			wg.Wait()
		}
		for _, id := range ids {
			v, err := gw1.Recurrences().Get(ctx, c, id)
			require.NoError(t, err)
			require.Len(t, v.Charges, 1, "recurrence %s", id)
			require.Equal(t, "2027-03-05", v.Charges[0].DueDate.String())
			require.Equal(t, "2027-04-05", v.NextDueDate.String())
		}
		for txid := range psp1.creates {
			tx, err := db.TransactionByTxID(ctx, txid)
			require.NoError(t, err, "the crashed creation's txid is the stored one")
			require.Contains(t, ids, tx.RecurrenceID)
		}
		total := 0
		for _, p := range []*countingSandbox{psp1, psp2} {
			for _, n := range p.creates {
				total += n
			}
		}
		require.Equal(t, 4, total, "one crashed creation and one per cycle: the job runs on one node at a time")
	})
}

func TestRecurrenceFailedDebitsRetryThenCancel(t *testing.T) {
	t.Parallel()
	testkit.Databases(t, func(t *testing.T, open testkit.Opener) {
		db := open(t)
		clock := &testkit.Clock{}
		saoPauloNoon(t, clock, "2027-06-01")
		gw, _ := recNode(t, db, clock)
		ctx := context.Background()
		c := merchant(t, db, gw, "m", 0)

		cycle := func(ext, retry string) (string, string) {
			req, body := recurrenceRequest(ext, "2027-06-20", "", retry)
			created, _, err := gw.Recurrences().Create(ctx, c, gateway.Keyed(req, "", body))
			require.NoError(t, err)
			_, err = gw.Recurrences().Sandbox().Answer(ctx, c, created.RecurrenceID, recurrence.SandboxApprove)
			require.NoError(t, err)
			// next-cycle creates the charge before its window opens.
			tx, due, err := gw.Recurrences().Sandbox().NextCycle(ctx, c, created.RecurrenceID)
			require.NoError(t, err)
			require.Equal(t, "2027-06-20", due.String())
			require.Equal(t, created.RecurrenceID, tx.RecurrenceID)
			return created.RecurrenceID, tx.ID
		}

		// NONE: the first failed debit cancels the charge.
		recID, pay := cycle("none", "NONE")
		tx, err := gw.Recurrences().Sandbox().FailCharge(ctx, c, pay)
		require.NoError(t, err)
		require.Equal(t, pix.StatusCancelled, tx.Status)
		types, bodies := eventsOf(t, db, recID)
		require.Equal(t, []string{pix.EventRecurrenceApproved, pix.EventRecurrenceChargeFailed}, types)
		require.Equal(t, pay, bodies[1]["payment_id"])
		require.EqualValues(t, 1, bodies[1]["attempts"])
		require.Equal(t, "APPROVED", bodies[1]["status"])
		types, bodies = eventsOf(t, db, pay)
		require.Equal(t, []string{pix.EventCashinCancelled}, types)
		require.Equal(t, recID, bodies[0]["recurrence_id"])
		_, err = gw.Recurrences().Sandbox().FailCharge(ctx, c, pay)
		requireCode(t, err, pix.EUnprocessable)

		// THREE_IN_SEVEN_DAYS: three retries, then cancelled.
		recID, pay = cycle("three", "THREE_IN_SEVEN_DAYS")
		for attempt := 1; attempt <= 3; attempt++ {
			tx, err := gw.Recurrences().Sandbox().FailCharge(ctx, c, pay)
			require.NoError(t, err)
			require.Equal(t, pix.StatusPending, tx.Status, "attempt %d", attempt)
			cy, err := db.Cycle(ctx, pay)
			require.NoError(t, err)
			require.Equal(t, attempt, cy.Attempts)
			require.Equal(t, pix.RetryDays(pix.RetryThreeInSevenDays, cy.DueDate)[attempt-1], cy.RetryOn)
			// The job asks the PSP for the retry.
			clock.Advance(6 * time.Second)
			_, err = gw.Recurrences().RunCycles(ctx, 100)
			require.NoError(t, err)
			cy, err = db.Cycle(ctx, pay)
			require.NoError(t, err)
			require.True(t, cy.RetryOn.IsZero())
		}
		tx, err = gw.Recurrences().Sandbox().FailCharge(ctx, c, pay)
		require.NoError(t, err)
		require.Equal(t, pix.StatusCancelled, tx.Status)
		v, err := gw.Recurrences().Get(ctx, c, recID)
		require.NoError(t, err)
		require.Equal(t, 4, v.Charges[0].Attempts)
		require.Equal(t, pix.RecurrenceApproved, v.Status, "a failed cycle does not end the recurrence")
		types, bodies = eventsOf(t, db, recID)
		require.Equal(t, []string{pix.EventRecurrenceApproved, pix.EventRecurrenceChargeFailed}, types)
		require.EqualValues(t, 4, bodies[1]["attempts"])

		// A charge that is no cycle's has no debit to fail.
		ch, _, err := gw.CreateCharge(ctx, c, gateway.Keyed(chargeRequest("plain"), "", body("plain")))
		require.NoError(t, err)
		_, err = gw.Recurrences().Sandbox().FailCharge(ctx, c, ch.PaymentID)
		requireCode(t, err, pix.EUnprocessable)
	})
}

func TestRecurrenceAnswersAndCancellation(t *testing.T) {
	t.Parallel()
	testkit.Databases(t, func(t *testing.T, open testkit.Opener) {
		db := open(t)
		clock := &testkit.Clock{}
		saoPauloNoon(t, clock, "2027-06-01")
		gw, _ := recNode(t, db, clock)
		ctx := context.Background()
		c, other := merchant(t, db, gw, "m", 0), merchant(t, db, gw, "o", 0)
		create := func(ext string) string {
			req, body := recurrenceRequest(ext, "2027-06-10", "", "NONE")
			created, _, err := gw.Recurrences().Create(ctx, c, gateway.Keyed(req, "", body))
			require.NoError(t, err)
			return created.RecurrenceID
		}

		// Another client's recurrence is unknown to a client.
		id := create("rej")
		_, err := gw.Recurrences().Get(ctx, other, id)
		requireCode(t, err, pix.ENotFound)
		_, err = gw.Recurrences().Cancel(ctx, other, id)
		requireCode(t, err, pix.ENotFound)

		// Rejected: final, no cancellation.
		v, err := gw.Recurrences().Sandbox().Answer(ctx, c, id, recurrence.SandboxReject)
		require.NoError(t, err)
		require.Equal(t, pix.RecurrenceRejected, v.Status)
		require.Nil(t, v.NextDueDate)
		_, err = gw.Recurrences().Sandbox().Answer(ctx, c, id, recurrence.SandboxApprove)
		requireCode(t, err, pix.EUnprocessable)
		_, err = gw.Recurrences().Cancel(ctx, c, id)
		requireCode(t, err, pix.EUnprocessable)

		// Cancelled by the merchant: its pending cycle charge too; a paid one stays.
		id = create("cancel")
		_, err = gw.Recurrences().Sandbox().Answer(ctx, c, id, recurrence.SandboxCancelByPayer)
		requireCode(t, err, pix.EUnprocessable) // not approved yet
		_, err = gw.Recurrences().Sandbox().Answer(ctx, c, id, recurrence.SandboxApprove)
		require.NoError(t, err)
		first, _, err := gw.Recurrences().Sandbox().NextCycle(ctx, c, id)
		require.NoError(t, err)
		_, err = gw.Sandbox().Pay(ctx, first)
		require.NoError(t, err)
		second, _, err := gw.Recurrences().Sandbox().NextCycle(ctx, c, id)
		require.NoError(t, err)
		v, err = gw.Recurrences().Cancel(ctx, c, id)
		require.NoError(t, err)
		require.Equal(t, pix.RecurrenceCancelled, v.Status)
		require.Equal(t, pix.CancelledByMerchant, *v.CancelledBy)
		require.Len(t, v.Charges, 2)
		require.Equal(t, pix.StatusPaid, v.Charges[0].Status)
		require.Equal(t, pix.StatusCancelled, v.Charges[1].Status)
		types, bodies := eventsOf(t, db, id)
		require.Equal(t, []string{pix.EventRecurrenceApproved, pix.EventRecurrenceCancelled}, types)
		require.Equal(t, "merchant", bodies[1]["cancelled_by"])
		require.Equal(t, "CANCELLED", bodies[1]["status"])
		types, _ = eventsOf(t, db, second.ID)
		require.Equal(t, []string{pix.EventCashinCancelled}, types)
		_, err = gw.Recurrences().Cancel(ctx, c, id)
		requireCode(t, err, pix.EUnprocessable)
		_, _, err = gw.Recurrences().Sandbox().NextCycle(ctx, c, id)
		requireCode(t, err, pix.EUnprocessable)

		// Cancelled by the payer at their bank.
		id = create("payer")
		_, err = gw.Recurrences().Sandbox().Answer(ctx, c, id, recurrence.SandboxApprove)
		require.NoError(t, err)
		v, err = gw.Recurrences().Sandbox().Answer(ctx, c, id, recurrence.SandboxCancelByPayer)
		require.NoError(t, err)
		require.Equal(t, pix.CancelledByPayer, *v.CancelledBy)

		// Unanswered for 7 days: EXPIRED by the job.
		id = create("late")
		clock.Advance(pix.ApprovalDays*24*time.Hour + time.Minute)
		_, err = gw.Recurrences().RunCycles(ctx, 100)
		require.NoError(t, err)
		v, err = gw.Recurrences().Get(ctx, c, id)
		require.NoError(t, err)
		require.Equal(t, pix.RecurrenceExpired, v.Status)
		types, _ = eventsOf(t, db, id)
		require.Equal(t, []string{pix.EventRecurrenceExpired}, types)
	})
}

func TestRecurrenceCreateValidatesAndReplays(t *testing.T) {
	t.Parallel()
	testkit.Databases(t, func(t *testing.T, open testkit.Opener) {
		db := open(t)
		clock := &testkit.Clock{}
		saoPauloNoon(t, clock, "2027-06-01")
		gw, _ := recNode(t, db, clock)
		ctx := context.Background()
		c := merchant(t, db, gw, "m", 100)

		req, body := recurrenceRequest("sub-1", "2027-06-02", "2027-05-01", "SOMETIMES")
		_, _, err := gw.Recurrences().Create(ctx, c, gateway.Keyed(req, "", body))
		var pe *pix.Error
		require.ErrorAs(t, err, &pe)
		require.Equal(t, pix.EInvalid, pe.Code)
		fields := map[string]bool{}
		for _, d := range pe.Details {
			fields[d.Field] = true
		}
		require.Equal(t, map[string]bool{"start_date": true, "retry": true}, fields)

		// Journey 3, replayed by external_id and refused with another body.
		req, _ = recurrenceRequest("sub-2", "2027-06-10", "", "NONE")
		req.FirstPayment = json.RawMessage("10.00")
		body, err = json.Marshal(req)
		require.NoError(t, err)
		created, replayed, err := gw.Recurrences().Create(ctx, c, gateway.Keyed(req, "k-1", body))
		require.NoError(t, err)
		require.False(t, replayed)
		require.NotNil(t, created.FirstPaymentID)
		again, replayed, err := gw.Recurrences().Create(ctx, c, gateway.Keyed(req, "k-1", body))
		require.NoError(t, err)
		require.True(t, replayed)
		require.Equal(t, created, again)
		req2, body2 := recurrenceRequest("sub-2", "2027-06-11", "", "NONE")
		_, _, err = gw.Recurrences().Create(ctx, c, gateway.Keyed(req2, "", body2))
		requireCode(t, err, pix.EIdempotencyMismatch)

		// Approving pays the first payment, an ordinary charge of the recurrence.
		first, err := gw.Charge(ctx, c, *created.FirstPaymentID)
		require.NoError(t, err)
		require.Equal(t, pix.Amount(1000), first.Amount)
		require.Equal(t, created.QRCode, first.QRCode)
		_, err = gw.Recurrences().Sandbox().Answer(ctx, c, created.RecurrenceID, recurrence.SandboxApprove)
		require.NoError(t, err)
		first, err = gw.Charge(ctx, c, first.ID)
		require.NoError(t, err)
		require.Equal(t, pix.StatusPaid, first.Status)
		require.Equal(t, created.RecurrenceID, first.RecurrenceID)
		bal, err := gw.Balance(ctx, c)
		require.NoError(t, err)
		require.Equal(t, pix.Amount(990), bal.Available)
	})
}

// merchant creates client name on gw, with a cash-in fee of feeBP basis
// points, and returns it authenticated.
func merchant(t *testing.T, db *store.DB, gw *gateway.Service, name string, feeBP int64) pix.Client {
	t.Helper()
	ctx := context.Background()
	cred, err := createClient(ctx, db, gw, clientParams{Name: name, CashinFee: pix.FeeRule{PercentBP: feeBP}})
	require.NoError(t, err)
	c, err := gw.Authenticate(ctx, cred.ClientID, cred.ClientSecret)
	require.NoError(t, err)
	return c
}

// requireCode requires err to be a *pix.Error of code.
func requireCode(t *testing.T, err error, code pix.Code) {
	t.Helper()
	var pe *pix.Error
	require.ErrorAs(t, err, &pe)
	require.Equal(t, code, pe.Code, pe.Message)
}

// noAccount is the sandbox as a PSP with no receiving account configured:
// it refuses recurrences as unsupported (apipix does so).
type noAccount struct{ *countingSandbox }

func (noAccount) CreateRecurrence(context.Context, provider.Recurrence) (provider.RecurrenceCreated, error) {
	return provider.RecurrenceCreated{}, provider.ErrUnsupported
}

// TestRecurrencesNeedAProviderThatRunsThem: a provider without
// recurrences, or a PSP without the receiving account every cycle charge
// names, refuses them with a 422, and nothing is stored.
func TestRecurrencesNeedAProviderThatRunsThem(t *testing.T) {
	t.Parallel()
	testkit.Databases(t, func(t *testing.T, open testkit.Opener) {
		db := open(t)
		clock := &testkit.Clock{}
		saoPauloNoon(t, clock, "2027-06-01")
		_, psp := recNode(t, db, clock)
		ctx := context.Background()
		for name, p := range map[string]provider.Provider{
			"no recurrences": struct{ provider.Provider }{psp.Provider},
			"no account":     noAccount{psp},
		} {
			gw, err := gateway.New(gateway.Config{DB: db, Env: "sandbox", ChargeTTL: time.Hour,
				Log: slog.New(slog.NewJSONHandler(io.Discard, nil)), Provider: p, Now: clock.Now})
			require.NoError(t, err)
			c := merchant(t, db, gw, name, 0)
			req, body := recurrenceRequest("r", "2027-06-10", "", "NONE")
			_, _, err = gw.Recurrences().Create(ctx, c, gateway.Keyed(req, "", body))
			requireCode(t, err, pix.EUnprocessable)
			require.Contains(t, err.Error(), "Recurrences are not available with this provider", name)
			_, err = db.RecurrenceByExternalID(ctx, c.ID, "r")
			require.ErrorIs(t, err, store.ErrNotFound, name)
		}
	})
}

// TestRecurrenceFarFutureRowsFailOnlyThemselves: rows written by earlier
// versions — a next cycle stored past 9999-12-31 (10000-01-07, which
// sorts as text before every real date) and a date that cannot be read at
// all — no longer stop the cycle job for every client: the job creates
// the other recurrences' cycles, the far one is listed, shown and
// cancelled (no next_due_date), and a new recurrence whose calendar would
// pass the last cycle day is refused.
func TestRecurrenceFarFutureRowsFailOnlyThemselves(t *testing.T) {
	t.Parallel()
	testkit.Databases(t, func(t *testing.T, open testkit.Opener) {
		db := open(t)
		clock := &testkit.Clock{}
		saoPauloNoon(t, clock, "2027-03-01")
		gw, _ := recNode(t, db, clock)
		ctx := context.Background()
		c := merchant(t, db, gw, "m", 0)
		ids := map[string]string{}
		for _, ext := range []string{"far", "garbled", "good"} {
			req, body := recurrenceRequest(ext, "2027-03-05", "", "NONE")
			created, _, err := gw.Recurrences().Create(ctx, c, gateway.Keyed(req, "", body))
			require.NoError(t, err)
			_, err = gw.Recurrences().Sandbox().Answer(ctx, c, created.RecurrenceID, recurrence.SandboxApprove)
			require.NoError(t, err)
			ids[ext] = created.RecurrenceID
		}
		require.NoError(t, db.Write(ctx, func(tx *store.Tx) error {
			if err := store.RawExec(ctx, tx, `UPDATE recurrences SET next_due = '10000-01-07' WHERE id = $1`, ids["far"]); err != nil {
				return err
			}
			return store.RawExec(ctx, tx, `UPDATE recurrences SET next_due = '2027-03-00' WHERE id = $1`, ids["garbled"])
		}))

		clock.Advance(6 * time.Second)
		created, err := gw.Recurrences().RunCycles(ctx, 2)
		require.Error(t, err, "the unreadable row reports itself")
		require.Equal(t, 1, created, "the good recurrence's cycle is created all the same")
		v, err := gw.Recurrences().Get(ctx, c, ids["good"])
		require.NoError(t, err)
		require.Len(t, v.Charges, 1)

		// The far row, unlike the garbled one, reads: listed (as the panel
		// and the API list it), shown and cancelled.
		require.NoError(t, db.Write(ctx, func(tx *store.Tx) error {
			return store.RawExec(ctx, tx, `UPDATE recurrences SET status = 'CANCELLED' WHERE id = $1`, ids["garbled"])
		}))
		rows, _, err := db.RecurrenceHistory(ctx, store.RecurrenceFilter{ClientID: c.ID, Status: pix.RecurrenceApproved, Limit: 10})
		require.NoError(t, err)
		require.Len(t, rows, 2)
		v, err = gw.Recurrences().Get(ctx, c, ids["far"])
		require.NoError(t, err)
		require.Nil(t, v.NextDueDate)
		v, err = gw.Recurrences().Cancel(ctx, c, ids["far"])
		require.NoError(t, err)
		require.Equal(t, pix.RecurrenceCancelled, v.Status)

		req, body := recurrenceRequest("late", "9999-12-31", "", "NONE")
		_, _, err = gw.Recurrences().Create(ctx, c, gateway.Keyed(req, "", body))
		requireCode(t, err, pix.EInvalid)
	})
}
