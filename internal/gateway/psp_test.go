package gateway_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/internal/cashin"
	"github.com/pixgate/pixgate/internal/gateway"
	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/provider"
	"github.com/pixgate/pixgate/internal/store"
	"github.com/pixgate/pixgate/internal/testkit"
)

// scriptedPSP is an in-memory PSP whose answers each test scripts: the
// gateway's side of the PSP integration (what it sends, when it reads before it
// sends again, what it credits) is tested here on both databases; the
// HTTP providers against the simulator are tested in their packages and
// end to end in cli.
type scriptedPSP struct {
	mu       sync.Mutex
	payouts  bool
	down     bool                  // every call fails (unknown outcome)
	cobs     map[string]pix.Amount // txid → amount
	removed  map[string]bool
	paid     map[string][]provider.Payment // txid → payments
	payments map[string]provider.Payment   // e2e → payment
	list     []provider.Payment            // what Received lists
	accepted map[string]provider.TransferState
	sends    map[string]int // accepted sends per transfer id
	calls    []string       // "send id", "status id"
	// next send's fault: "commit-then-fail", "fail", "reject", "block",
	// "rate-limited" (a 429 asking to wait retryAfter; nothing accepted)
	fault      string
	retryAfter time.Duration
	blocked    chan struct{}
}

func newScriptedPSP() *scriptedPSP {
	return &scriptedPSP{payouts: true, cobs: map[string]pix.Amount{}, removed: map[string]bool{}, paid: map[string][]provider.Payment{},
		payments: map[string]provider.Payment{}, accepted: map[string]provider.TransferState{}, sends: map[string]int{}}
}

var errPSPDown = errors.New("psp: 503 Service Unavailable")

func (p *scriptedPSP) Name() string { return "scripted" }
func (p *scriptedPSP) Capabilities() provider.Capabilities {
	return provider.Capabilities{Payouts: p.payouts, TxIDLength: 32}
}
func (p *scriptedPSP) Start(context.Context) error { return nil }

func (p *scriptedPSP) CreateCharge(_ context.Context, c provider.Charge) (string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.down {
		return "", errPSPDown
	}
	if len(c.TxID) != 32 || c.TTL <= 0 || c.PayerDocument == "" {
		return "", fmt.Errorf("bad cob: %w", provider.ErrRejected)
	}
	p.cobs[c.TxID] = c.Amount
	return "00020101021226830014br.gov.bcb.pix2561psp.example/qr/v2/" + c.TxID + "6304ABCD", nil
}

// pay makes a payer pay the cob txid; it returns the payment.
func (p *scriptedPSP) pay(txid string, amount pix.Amount, n int) provider.Payment {
	p.mu.Lock()
	defer p.mu.Unlock()
	pay := provider.Payment{TxID: txid, Amount: amount, EndToEndID: fmt.Sprintf("E12345678202611261200%011d", n), PaidAt: time.Now()}
	p.paid[txid] = append(p.paid[txid], pay)
	p.payments[pay.EndToEndID] = pay
	p.list = append(p.list, pay)
	return pay
}

func (p *scriptedPSP) ChargePayments(_ context.Context, txid string) ([]provider.Payment, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.down {
		return nil, errPSPDown
	}
	if _, ok := p.cobs[txid]; !ok {
		return nil, provider.ErrNotFound
	}
	return p.paid[txid], nil
}

func (p *scriptedPSP) CancelCharge(_ context.Context, txid string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.down {
		return errPSPDown
	}
	if len(p.paid[txid]) > 0 {
		return provider.ErrRejected
	}
	p.removed[txid] = true
	return nil
}

func (p *scriptedPSP) ConfirmPayment(_ context.Context, e2e string) (provider.Payment, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.down {
		return provider.Payment{}, errPSPDown
	}
	pay, ok := p.payments[e2e]
	if !ok {
		return provider.Payment{}, provider.ErrNotFound
	}
	return pay, nil
}

func (p *scriptedPSP) Received(context.Context, time.Time, time.Time) ([]provider.Payment, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.down {
		return nil, errPSPDown
	}
	return append([]provider.Payment(nil), p.list...), nil
}

func (p *scriptedPSP) Send(ctx context.Context, t provider.Transfer) (provider.TransferState, error) {
	p.mu.Lock()
	p.calls = append(p.calls, "send "+t.ID)
	fault := p.fault
	p.fault = ""
	if fault == "block" {
		blocked := p.blocked
		p.mu.Unlock()
		close(blocked)
		<-ctx.Done() // the process dies during the send: no answer, nothing accepted
		return provider.TransferState{}, ctx.Err()
	}
	defer p.mu.Unlock()
	switch {
	case p.down || fault == "fail":
		return provider.TransferState{}, errPSPDown
	case fault == "reject":
		return provider.TransferState{}, fmt.Errorf("400 invalid key: %w", provider.ErrRejected)
	case fault == "rate-limited":
		return provider.TransferState{}, fmt.Errorf("429: %w", &provider.RateLimitedError{RetryAfter: p.retryAfter})
	case p.sends[t.ID] > 0:
		// Like the API Pix with a reused devolução id.
		return provider.TransferState{}, fmt.Errorf("400 id already used: %w", provider.ErrRejected)
	}
	if t.Refund && t.PaymentE2E == "" {
		return provider.TransferState{}, fmt.Errorf("refund of no payment: %w", provider.ErrRejected)
	}
	p.sends[t.ID]++
	st := provider.TransferState{ID: t.ID, Status: provider.Processing, EndToEndID: fmt.Sprintf("E99999999202611261200%011d", len(p.sends))}
	p.accepted[t.ID] = st
	if fault == "commit-then-fail" {
		return provider.TransferState{}, errPSPDown
	}
	return st, nil
}

func (p *scriptedPSP) Status(_ context.Context, t provider.Transfer) (provider.TransferState, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.calls = append(p.calls, "status "+t.ID)
	if p.down {
		return provider.TransferState{}, errPSPDown
	}
	st, ok := p.accepted[t.ID]
	if !ok {
		return provider.TransferState{}, provider.ErrNotFound
	}
	return st, nil
}

// finish makes the PSP report transfer id final.
func (p *scriptedPSP) finish(id string, status provider.Status) {
	p.mu.Lock()
	defer p.mu.Unlock()
	st := p.accepted[id]
	st.Status = status
	p.accepted[id] = st
}

func (p *scriptedPSP) set(fn func(p *scriptedPSP)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	fn(p)
}

func (p *scriptedPSP) callLog() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.calls...)
}

func (p *scriptedPSP) sent(id string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.sends[id]
}

// pspFixture is a production gateway on a scripted PSP, with one client.
type pspFixture struct {
	db    *store.DB
	gw    *gateway.Service
	psp   *scriptedPSP
	clock *testkit.Clock
	c     pix.Client
}

func newPSPFixture(t *testing.T, open testkit.Opener) *pspFixture {
	t.Helper()
	f := &pspFixture{db: open(t), psp: newScriptedPSP(), clock: &testkit.Clock{}}
	f.gw = f.node(t)
	ctx := context.Background()
	cred, err := createClient(ctx, f.db, f.gw, clientParams{Name: "m"})
	require.NoError(t, err)
	f.c, err = f.gw.Authenticate(ctx, cred.ClientID, cred.ClientSecret)
	require.NoError(t, err)
	return f
}

// node returns another gateway process on the same database and PSP.
func (f *pspFixture) node(t *testing.T) *gateway.Service {
	t.Helper()
	return f.nodeWith(t, f.psp)
}

// nodeWith returns another gateway process on the same database, with p
// as its PSP.
func (f *pspFixture) nodeWith(t *testing.T, p provider.Provider) *gateway.Service {
	t.Helper()
	gw, err := gateway.New(gateway.Config{DB: f.db, Env: "production", ChargeTTL: time.Hour, Log: slog.New(slog.NewJSONHandler(io.Discard, nil)),
		Provider: p, Now: f.clock.Now, ReconcileEvery: 20 * time.Second})
	require.NoError(t, err)
	return gw
}

// paidCharge creates a charge and has the PSP report its payment.
func (f *pspFixture) paidCharge(t *testing.T, ext, amount string, n int) pix.Transaction {
	t.Helper()
	ctx := context.Background()
	resp, _, err := f.gw.CreateCharge(ctx, f.c, gateway.Keyed(chargeRequestAmount(ext, amount), "", body(ext)))
	require.NoError(t, err)
	ch, err := f.gw.Charge(ctx, f.c, resp.PaymentID)
	require.NoError(t, err)
	pay := f.psp.pay(ch.TxID, ch.Amount, n)
	require.NoError(t, f.gw.Cashin().PSPReported(ctx, []cashin.ReportedPix{{EndToEndID: pay.EndToEndID, TxID: ch.TxID}}))
	ch, err = f.gw.Charge(ctx, f.c, resp.PaymentID)
	require.NoError(t, err)
	require.Equal(t, pix.StatusPaid, ch.Status)
	return ch
}

// body is a distinct JSON request body per key.
func body(key string) []byte { return []byte(`{"k":"` + key + `"}`) }

func (f *pspFixture) status(t *testing.T, id string) pix.Transaction {
	t.Helper()
	tr, err := f.gw.Lookup(context.Background(), f.c, id, "")
	require.NoError(t, err)
	return tr
}

// settle runs the payout and refund work due now.
func (f *pspFixture) settle(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	_, err := f.gw.Transfers().StepDue(ctx, pix.TransferPayout, 100)
	require.NoError(t, err)
	_, err = f.gw.Transfers().StepDue(ctx, pix.TransferRefund, 100)
	require.NoError(t, err)
}

func (f *pspFixture) available(t *testing.T) pix.Amount {
	t.Helper()
	b, err := f.gw.Balance(context.Background(), f.c)
	require.NoError(t, err)
	return b.Available
}

// The PSP down at charge time: 502's error, no charge exists, and the same
// external_id works once the PSP answers; the BR Code is the PSP's, verbatim.
func TestPSPChargeCreation(t *testing.T) {
	t.Parallel()
	testkit.Databases(t, func(t *testing.T, open testkit.Opener) {
		f := newPSPFixture(t, open)
		ctx := context.Background()
		f.psp.set(func(p *scriptedPSP) { p.down = true })
		_, _, err := f.gw.CreateCharge(ctx, f.c, gateway.Keyed(chargeRequest("c1"), "", body("c1")))
		require.Equal(t, pix.EProviderUnavailable, pix.ErrorCode(err))
		_, err = f.gw.Lookup(ctx, f.c, "", "c1")
		require.Equal(t, pix.ENotFound, pix.ErrorCode(err), "no charge exists after a 502")

		f.psp.set(func(p *scriptedPSP) { p.down = false })
		resp, replayed, err := f.gw.CreateCharge(ctx, f.c, gateway.Keyed(chargeRequest("c1"), "", body("c1")))
		require.NoError(t, err)
		require.False(t, replayed)
		ch := f.status(t, resp.PaymentID)
		require.Len(t, ch.TxID, 32)
		require.Equal(t, "00020101021226830014br.gov.bcb.pix2561psp.example/qr/v2/"+ch.TxID+"6304ABCD", resp.QRCode)
		require.NotEmpty(t, resp.QRCodeImage)

		// A replay is answered from the database: no second cob.
		f.psp.set(func(p *scriptedPSP) { p.down = true })
		again, replayed, err := f.gw.CreateCharge(ctx, f.c, gateway.Keyed(chargeRequest("c1"), "", body("c1")))
		require.NoError(t, err)
		require.True(t, replayed)
		require.Equal(t, resp.PaymentID, again.PaymentID)
		f.psp.set(func(p *scriptedPSP) { require.Len(t, p.cobs, 1) })
	})
}

// Reported payments: a forged one (unknown to the PSP) and a malformed one
// move nothing; a real one is credited once at the PSP's amount however
// often it is reported, by one node or two at once.
func TestPSPReportedPayments(t *testing.T) {
	t.Parallel()
	testkit.Databases(t, func(t *testing.T, open testkit.Opener) {
		f := newPSPFixture(t, open)
		ctx := context.Background()
		resp, _, err := f.gw.CreateCharge(ctx, f.c, gateway.Keyed(chargeRequest("c1"), "", body("c1")))
		require.NoError(t, err)
		ch := f.status(t, resp.PaymentID)

		forged := []cashin.ReportedPix{{EndToEndID: "E12345678202611261200999999999999", TxID: ch.TxID}, {EndToEndID: "short", TxID: ch.TxID}}
		require.NoError(t, f.gw.Cashin().PSPReported(ctx, forged))
		require.Equal(t, pix.StatusPending, f.status(t, ch.ID).Status)
		require.Zero(t, f.available(t))

		pay := f.psp.pay(ch.TxID, ch.Amount, 1)
		report := []cashin.ReportedPix{{EndToEndID: pay.EndToEndID, TxID: "forged-txid"}}
		other := f.node(t)
		var wg sync.WaitGroup
		nodes := []*gateway.Service{f.gw, other, f.gw, other}
		errs := make([]error, len(nodes))
		for i, gw := range nodes {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs[i] = gw.Cashin().PSPReported(ctx, report)
			}()
		}
		wg.Wait()
		for i, err := range errs {
			require.NoError(t, err, "report %d", i)
		}
		got := f.status(t, ch.ID)
		require.Equal(t, pix.StatusPaid, got.Status)
		require.Equal(t, pay.EndToEndID, got.EndToEndID)
		require.Equal(t, pix.Amount(1050), f.available(t))

		// The PSP unreachable while confirming: an error, so the PSP reports again.
		f.psp.set(func(p *scriptedPSP) { p.down = true })
		require.Error(t, f.gw.Cashin().PSPReported(ctx, report))
		require.NoError(t, f.db.CheckLedger(ctx))
	})
}

// A payment for a charge already CANCELLED is credited and the charge
// becomes PAID: money received is never lost.
func TestPSPPaymentOfCancelledCharge(t *testing.T) {
	t.Parallel()
	testkit.Databases(t, func(t *testing.T, open testkit.Opener) {
		f := newPSPFixture(t, open)
		ctx := context.Background()
		resp, _, err := f.gw.CreateCharge(ctx, f.c, gateway.Keyed(chargeRequest("c1"), "", body("c1")))
		require.NoError(t, err)
		ch := f.status(t, resp.PaymentID)
		f.clock.Advance(2 * time.Hour)
		n, err := f.gw.Cashin().ExpireDue(ctx, 10)
		require.NoError(t, err)
		require.Equal(t, 1, n)
		require.Equal(t, pix.StatusCancelled, f.status(t, ch.ID).Status)
		f.psp.set(func(p *scriptedPSP) { require.True(t, p.removed[ch.TxID], "the cob was removed at the PSP") })

		pay := f.psp.pay(ch.TxID, ch.Amount, 7)
		require.NoError(t, f.gw.Cashin().PSPReported(ctx, []cashin.ReportedPix{{EndToEndID: pay.EndToEndID}}))
		require.Equal(t, pix.StatusPaid, f.status(t, ch.ID).Status)
		require.Equal(t, pix.Amount(1050), f.available(t))
		require.NoError(t, f.db.CheckLedger(ctx))
	})
}

// Expiry reads the cob first: a charge paid at the PSP whose webhook never
// came is credited, not cancelled; with the PSP down nothing is cancelled.
func TestPSPExpiryReadsTheCobFirst(t *testing.T) {
	t.Parallel()
	testkit.Databases(t, func(t *testing.T, open testkit.Opener) {
		f := newPSPFixture(t, open)
		ctx := context.Background()
		resp, _, err := f.gw.CreateCharge(ctx, f.c, gateway.Keyed(chargeRequest("c1"), "", body("c1")))
		require.NoError(t, err)
		ch := f.status(t, resp.PaymentID)
		f.psp.pay(ch.TxID, ch.Amount, 3)
		resp2, _, err := f.gw.CreateCharge(ctx, f.c, gateway.Keyed(chargeRequest("c2"), "", body("c2")))
		require.NoError(t, err)

		f.clock.Advance(2 * time.Hour)
		f.psp.set(func(p *scriptedPSP) { p.down = true })
		n, err := f.gw.Cashin().ExpireDue(ctx, 10)
		require.NoError(t, err)
		require.Zero(t, n)
		require.Equal(t, pix.StatusPending, f.status(t, resp2.PaymentID).Status)

		f.psp.set(func(p *scriptedPSP) { p.down = false })
		f.clock.Advance(time.Minute) // past the retry wait
		n, err = f.gw.Cashin().ExpireDue(ctx, 10)
		require.NoError(t, err)
		require.Equal(t, 1, n)
		require.Equal(t, pix.StatusPaid, f.status(t, ch.ID).Status)
		require.Equal(t, pix.StatusCancelled, f.status(t, resp2.PaymentID).Status)
	})
}

// A payment whose webhook never arrives is found by the reading of the
// PSP's list, taken by one node per interval, and credited once.
func TestPSPReconcileReceived(t *testing.T) {
	t.Parallel()
	testkit.Databases(t, func(t *testing.T, open testkit.Opener) {
		f := newPSPFixture(t, open)
		ctx := context.Background()
		resp, _, err := f.gw.CreateCharge(ctx, f.c, gateway.Keyed(chargeRequest("c1"), "", body("c1")))
		require.NoError(t, err)
		ch := f.status(t, resp.PaymentID)
		f.psp.pay(ch.TxID, ch.Amount, 4)

		other := f.node(t)
		n1, err := f.gw.Cashin().ReconcileReceived(ctx, 0)
		require.NoError(t, err)
		n2, err := other.Cashin().ReconcileReceived(ctx, 0)
		require.NoError(t, err)
		require.Equal(t, 1, n1+n2, "one node reads per interval")
		require.Equal(t, pix.StatusPaid, f.status(t, ch.ID).Status)

		f.clock.Advance(21 * time.Second)
		n2, err = other.Cashin().ReconcileReceived(ctx, 0)
		require.NoError(t, err)
		require.Equal(t, 1, n2, "the next interval reads again")
		require.Equal(t, pix.Amount(1050), f.available(t), "credited once")
		require.NoError(t, f.db.CheckLedger(ctx))
	})
}

// payoutFixture funds the client with one paid charge of 100.00.
func payoutFixture(t *testing.T, open testkit.Opener) *pspFixture {
	f := newPSPFixture(t, open)
	f.paidCharge(t, "fund", "100.00", 100)
	return f
}

func createPayout(t *testing.T, f *pspFixture, ext string) string {
	t.Helper()
	resp, _, err := f.gw.CreatePayout(context.Background(), f.c, gateway.Keyed(payoutRequest(ext), ext, body(ext)))
	require.NoError(t, err)
	return resp.TransactionID
}

// A payout whose PUT the PSP commits and then answers 500 is read before
// anything is sent again, and completes having been sent once.
func TestPSPPayoutCommittedThenFailed(t *testing.T) {
	t.Parallel()
	testkit.Databases(t, func(t *testing.T, open testkit.Opener) {
		f := payoutFixture(t, open)
		f.psp.set(func(p *scriptedPSP) { p.fault = "commit-then-fail" })
		id := createPayout(t, f, "p1")
		f.settle(t)
		require.Equal(t, 1, f.psp.sent(id))
		require.Equal(t, pix.StatusPending, f.status(t, id).Status)

		for range 3 { // later steps read the status, and never send again
			f.clock.Advance(time.Minute)
			f.settle(t)
		}
		require.Equal(t, []string{"send " + id, "status " + id, "status " + id, "status " + id}, f.psp.callLog())
		f.psp.finish(id, provider.Completed)
		f.clock.Advance(time.Minute)
		f.settle(t)
		got := f.status(t, id)
		require.Equal(t, pix.StatusPaid, got.Status)
		require.NotEmpty(t, got.EndToEndID)
		require.Equal(t, 1, f.psp.sent(id))
		require.Equal(t, pix.Amount(10000-100), f.available(t))
		require.NoError(t, f.db.CheckLedger(context.Background()))
	})
}

// A send lost before the PSP took it (500, nothing committed) is read,
// found unknown to the PSP, and sent again; a send refused (4xx) by a PSP
// that does not know it fails the payout and returns the funds; a final
// NAO_REALIZADO does the same.
func TestPSPPayoutLostRefusedFailed(t *testing.T) {
	t.Parallel()
	testkit.Databases(t, func(t *testing.T, open testkit.Opener) {
		f := payoutFixture(t, open)
		f.psp.set(func(p *scriptedPSP) { p.fault = "fail" })
		lost := createPayout(t, f, "lost")
		f.settle(t)
		require.Zero(t, f.psp.sent(lost))
		f.clock.Advance(time.Minute)
		f.settle(t)
		require.Equal(t, 1, f.psp.sent(lost))
		require.Equal(t, []string{"send " + lost, "status " + lost, "send " + lost}, f.psp.callLog())

		f.psp.set(func(p *scriptedPSP) { p.fault = "reject" })
		refused := createPayout(t, f, "refused")
		f.settle(t)
		require.Equal(t, pix.StatusCancelled, f.status(t, refused).Status)

		failed := createPayout(t, f, "failed")
		f.settle(t)
		f.psp.finish(failed, provider.Failed)
		f.psp.finish(lost, provider.Completed)
		f.clock.Advance(time.Minute)
		f.settle(t)
		require.Equal(t, pix.StatusCancelled, f.status(t, failed).Status)
		require.Equal(t, pix.StatusPaid, f.status(t, lost).Status)
		require.Equal(t, pix.Amount(10000-100), f.available(t), "only the completed payout's 1.00 left")
		require.NoError(t, f.db.CheckLedger(context.Background()))
	})
}

// A payout whose send the PSP refuses for its rate (429) neither fails nor
// is read first: it goes back to to_send and is sent once the PSP's wait
// (at most a minute) is over, and the refusal does not slow the polling
// that follows.
func TestPSPPayoutRateLimited(t *testing.T) {
	t.Parallel()
	testkit.Databases(t, func(t *testing.T, open testkit.Opener) {
		f := payoutFixture(t, open)
		f.psp.set(func(p *scriptedPSP) { p.fault, p.retryAfter = "rate-limited", 5*time.Second })
		id := createPayout(t, f, "p1")
		f.settle(t)
		require.Equal(t, pix.StatusPending, f.status(t, id).Status, "a 429 does not fail the payout")
		require.Zero(t, f.psp.sent(id))
		f.clock.Advance(4 * time.Second)
		f.settle(t)
		require.Equal(t, []string{"send " + id}, f.psp.callLog(), "nothing before the PSP's wait is over")

		f.clock.Advance(time.Second + time.Millisecond)
		f.settle(t)
		require.Equal(t, []string{"send " + id, "send " + id}, f.psp.callLog(), "sent again without a reading: nothing was done")
		require.Equal(t, 1, f.psp.sent(id))
		f.psp.finish(id, provider.Completed)
		f.clock.Advance(time.Second) // the first reading's wait: the 429 was not an attempt
		f.settle(t)
		got := f.status(t, id)
		require.Equal(t, pix.StatusPaid, got.Status)
		require.Equal(t, 1, f.psp.sent(id))

		// A Retry-After of an hour is waited a minute at most.
		f.psp.set(func(p *scriptedPSP) { p.fault, p.retryAfter = "rate-limited", time.Hour })
		long := createPayout(t, f, "p2")
		f.settle(t)
		f.clock.Advance(59 * time.Second)
		f.settle(t)
		require.Zero(t, f.psp.sent(long))
		f.clock.Advance(time.Second + time.Millisecond)
		f.settle(t)
		require.Equal(t, 1, f.psp.sent(long))
		require.Equal(t, pix.StatusPending, f.status(t, long).Status)
		require.Equal(t, pix.Amount(10000-200), f.available(t))
		require.NoError(t, f.db.CheckLedger(context.Background()))
	})
}

// A node that dies during a send leaves the payout "unknown", committed
// before the send; once its hold lapses another node reads the PSP first
// and, the PSP not knowing it, sends it — once.
func TestPSPPayoutNodeDiesDuringSend(t *testing.T) {
	t.Parallel()
	testkit.Databases(t, func(t *testing.T, open testkit.Opener) {
		f := payoutFixture(t, open)
		blocked := make(chan struct{})
		f.psp.set(func(p *scriptedPSP) { p.fault, p.blocked = "block", blocked })
		id := createPayout(t, f, "p1")
		ctx, die := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() {
			defer close(done)
			_, _ = f.gw.Transfers().StepDue(ctx, pix.TransferPayout, 10) // the dying node
		}()
		<-blocked
		// The hold is taken: another node finds nothing to do.
		other := f.node(t)
		_, err := other.Transfers().StepDue(context.Background(), pix.TransferPayout, 10)
		require.NoError(t, err)
		require.Equal(t, []string{"send " + id}, f.psp.callLog())
		die()
		<-done

		f.clock.Advance(2 * time.Minute)
		_, err = other.Transfers().StepDue(context.Background(), pix.TransferPayout, 10)
		require.NoError(t, err)
		require.Equal(t, []string{"send " + id, "status " + id, "send " + id}, f.psp.callLog())
		require.Equal(t, 1, f.psp.sent(id))
	})
}

// Refunds: sent once after the commit; a resend refused as a reused id is
// not taken for a failure (the PSP knows the refund); completed by polling
// or by the PSP reporting the payment with its devolução.
func TestPSPRefunds(t *testing.T) {
	t.Parallel()
	testkit.Databases(t, func(t *testing.T, open testkit.Opener) {
		f := newPSPFixture(t, open)
		ctx := context.Background()
		ch := f.paidCharge(t, "c1", "10.00", 1)
		f.psp.set(func(p *scriptedPSP) { p.fault = "commit-then-fail" })
		r1, _, err := f.gw.CreateRefund(ctx, f.c, gateway.Keyed(&gateway.RefundRequest{PaymentID: ch.ID, Amount: []byte("4.00"), Reason: "a"}, "r1", body("r1")))
		require.NoError(t, err)
		f.settle(t)
		require.Equal(t, 1, f.psp.sent(r1.RefundID))
		f.clock.Advance(time.Minute)
		f.settle(t)
		require.Equal(t, 1, f.psp.sent(r1.RefundID))
		view, err := f.gw.Refund(ctx, f.c, r1.RefundID)
		require.NoError(t, err)
		require.Equal(t, pix.RefundPending, view.Status)

		f.psp.finish(r1.RefundID, provider.Completed)
		f.clock.Advance(time.Minute)
		f.settle(t)
		view, err = f.gw.Refund(ctx, f.c, r1.RefundID)
		require.NoError(t, err)
		require.Equal(t, pix.RefundCompleted, view.Status)

		// The rest, completed by the PSP's report of the payment with its devoluções.
		r2, _, err := f.gw.CreateRefund(ctx, f.c, gateway.Keyed(&gateway.RefundRequest{PaymentID: ch.ID, Reason: "b"}, "r2", body("r2")))
		require.NoError(t, err)
		f.settle(t)
		require.Equal(t, 1, f.psp.sent(r2.RefundID))
		f.psp.set(func(p *scriptedPSP) {
			pay := p.payments[ch.EndToEndID]
			pay.Refunds = []provider.TransferState{{ID: provider.HexID(r2.RefundID), Status: provider.Completed, EndToEndID: "D12345678202611261200000000000002"}}
			p.payments[ch.EndToEndID] = pay
		})
		require.NoError(t, f.gw.Cashin().PSPReported(ctx, []cashin.ReportedPix{{EndToEndID: ch.EndToEndID}}))
		require.Equal(t, pix.StatusRefunded, f.status(t, ch.ID).Status)
		require.Zero(t, f.available(t))
		f.clock.Advance(time.Minute)
		f.settle(t) // the refund is final: nothing more is read or sent
		require.Equal(t, 1, f.psp.sent(r2.RefundID))
		require.NoError(t, f.db.CheckLedger(ctx))
	})
}

// A provider without payouts (apipix) answers a payout 422 "Payouts are not available with this provider".
func TestPSPWithoutPayouts(t *testing.T) {
	t.Parallel()
	f := newPSPFixture(t, func(t *testing.T) *store.DB { return testkit.OpenSQLite(t) })
	f.psp.payouts = false
	gw := f.node(t)
	_, _, err := gw.CreatePayout(context.Background(), f.c, gateway.Keyed(payoutRequest("p"), "p", body("p")))
	require.Equal(t, pix.EUnprocessable, pix.ErrorCode(err))
	var pe *pix.Error
	require.ErrorAs(t, err, &pe)
	require.Equal(t, "Payouts are not available with this provider", pe.Message)
}

// listingPSP is the scripted PSP that also lists the payouts sent from its
// account, as Efí does.
type listingPSP struct {
	*scriptedPSP
	listings int
}

func (p *listingPSP) SentBetween(_ context.Context, _, _ time.Time) ([]provider.TransferState, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.listings++
	p.calls = append(p.calls, "list")
	var out []provider.TransferState
	for _, st := range p.accepted {
		out = append(out, st)
	}
	return out, nil
}

// With a PSP that lists its sent payouts, one reading of the list settles
// many payouts (each once, its money and event written once), and a payout
// the list leaves processing is still read on its own later.
func TestPSPSentListSettlesPayouts(t *testing.T) {
	t.Parallel()
	testkit.Databases(t, func(t *testing.T, open testkit.Opener) {
		f := payoutFixture(t, open)
		lp := &listingPSP{scriptedPSP: f.psp}
		f.gw = f.nodeWith(t, lp)
		ctx := context.Background()
		var ids []string
		for i := range 5 {
			ids = append(ids, createPayout(t, f, fmt.Sprint("l", i)))
		}
		f.settle(t)
		for _, id := range ids[:4] {
			f.psp.finish(id, provider.Completed)
		}
		f.psp.finish(ids[3], provider.Failed)
		f.clock.Advance(time.Second)
		n, err := f.gw.Transfers().ReadSent(ctx, 0)
		require.NoError(t, err)
		require.Equal(t, 4, n)
		for i, id := range ids {
			want := []pix.TxStatus{pix.StatusPaid, pix.StatusPaid, pix.StatusPaid, pix.StatusCancelled, pix.StatusPending}[i]
			require.Equal(t, want, f.status(t, id).Status, "payout %d", i)
		}
		for _, c := range f.psp.callLog() {
			require.NotContains(t, c, "status ", "no payout was read on its own: %v", f.psp.callLog())
		}
		n, err = f.gw.Transfers().ReadSent(ctx, 0)
		require.NoError(t, err)
		require.Zero(t, n, "one reading per interval")
		require.Equal(t, 1, lp.listings)

		// The next reading settles nothing twice.
		f.clock.Advance(time.Second)
		n, err = f.gw.Transfers().ReadSent(ctx, 0)
		require.NoError(t, err)
		require.Zero(t, n)
		// The payout the list left processing is read on its own once due.
		f.psp.finish(ids[4], provider.Completed)
		f.clock.Advance(3 * time.Second)
		f.settle(t)
		require.Equal(t, pix.StatusPaid, f.status(t, ids[4]).Status)
		require.Contains(t, f.psp.callLog(), "status "+ids[4])
		for _, id := range ids {
			require.Equal(t, 1, f.psp.sent(id))
		}
		require.Equal(t, pix.Amount(10000-4*100), f.available(t), "four completed, one failed and given back")
		require.NoError(t, f.db.CheckLedger(ctx))
	})
}
