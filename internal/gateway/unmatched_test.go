package gateway_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/internal/cashin"
	"github.com/pixgate/pixgate/internal/gateway"
	"github.com/pixgate/pixgate/internal/ledger"
	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/provider"
	"github.com/pixgate/pixgate/internal/store"
	"github.com/pixgate/pixgate/internal/testkit"
)

// feeClient creates a client of f's gateway with a cash-in fee of 1 % plus
// R$ 0.10.
func (f *pspFixture) feeClient(t *testing.T) pix.Client {
	t.Helper()
	ctx := context.Background()
	cred, err := createClient(ctx, f.db, f.gw, clientParams{Name: "fees", CashinFee: pix.FeeRule{PercentBP: 100, Fixed: 10}})
	require.NoError(t, err)
	c, err := f.gw.Authenticate(ctx, cred.ClientID, cred.ClientSecret)
	require.NoError(t, err)
	return c
}

// paidEvent is the pix.cashin.paid event of charge id, decoded.
func paidEvent(t *testing.T, db *store.DB, id string) map[string]any {
	t.Helper()
	events, err := db.Events(context.Background(), id)
	require.NoError(t, err)
	for _, e := range events {
		if e.Type == pix.EventCashinPaid {
			var body map[string]any
			require.NoError(t, json.Unmarshal([]byte(e.Payload), &body))
			return body
		}
	}
	t.Fatalf("charge %s has no %s event", id, pix.EventCashinPaid)
	return nil
}

func (f *pspFixture) house(t *testing.T) (settlement, suspense pix.Amount) {
	t.Helper()
	b, err := f.db.HouseBalances(context.Background())
	require.NoError(t, err)
	return b[ledger.Settlement], b[ledger.Suspense]
}

// A PSP that confirms another amount than the charge's: the charge is
// PAID with paid_amount, the fee is computed on what was received, the
// event's value is what was received and amount_mismatch says so; a
// refund returns at most what was paid.
func TestPSPPaidAmountDiffers(t *testing.T) {
	t.Parallel()
	testkit.Databases(t, func(t *testing.T, open testkit.Opener) {
		f := newPSPFixture(t, open)
		ctx := context.Background()
		c := f.feeClient(t)
		pay := func(ext, amount string, paid pix.Amount, n int) pix.Transaction {
			resp, _, err := f.gw.CreateCharge(ctx, c, gateway.Keyed(chargeRequestAmount(ext, amount), "", body(ext)))
			require.NoError(t, err)
			ch, err := f.gw.Charge(ctx, c, resp.PaymentID)
			require.NoError(t, err)
			p := f.psp.pay(ch.TxID, paid, n)
			require.NoError(t, f.gw.Cashin().PSPReported(ctx, []cashin.ReportedPix{{EndToEndID: p.EndToEndID}}))
			ch, err = f.gw.Charge(ctx, c, resp.PaymentID)
			require.NoError(t, err)
			return ch
		}
		balance := func() pix.Amount {
			b, err := f.gw.Balance(ctx, c)
			require.NoError(t, err)
			return b.Available
		}

		// R$ 0.01 for R$ 100.00: the fee (1 % + 0.10) is capped at the 0.01 received.
		under := pay("under", "100.00", 1, 1)
		require.Equal(t, pix.StatusPaid, under.Status)
		require.Equal(t, pix.Amount(10000), under.Amount)
		require.Equal(t, pix.Amount(1), under.PaidAmount)
		require.Equal(t, pix.Amount(1), under.Tax)
		require.Zero(t, balance())
		v := gateway.View(under, pix.Date{})
		require.NotNil(t, v.PaidAmount)
		require.Equal(t, pix.Amount(1), *v.PaidAmount)
		require.True(t, *v.AmountMismatch)
		ev := paidEvent(t, f.db, under.ID)
		require.Equal(t, 0.01, ev["value"])
		require.Equal(t, 0.01, ev["paid_amount"])
		require.Equal(t, 0.01, ev["tax"])
		require.Equal(t, true, ev["amount_mismatch"])

		// R$ 500.00 for R$ 100.00: 500 credited less 1 % + 0.10.
		over := pay("over", "100.00", 50000, 2)
		require.Equal(t, pix.Amount(50000), over.PaidAmount)
		require.Equal(t, pix.Amount(510), over.Tax)
		require.Equal(t, pix.Amount(49490), balance())
		ev = paidEvent(t, f.db, over.ID)
		require.Equal(t, 500.0, ev["value"])
		require.Equal(t, 5.1, ev["tax"])
		require.Equal(t, true, ev["amount_mismatch"])

		// The exact amount: no mismatch, the fee of the charge.
		exact := pay("exact", "10.00", 1000, 3)
		require.Equal(t, pix.Amount(1000), exact.PaidAmount)
		require.Equal(t, pix.Amount(20), exact.Tax)
		require.False(t, *gateway.View(exact, pix.Date{}).AmountMismatch)
		ev = paidEvent(t, f.db, exact.ID)
		require.Equal(t, false, ev["amount_mismatch"])
		require.Equal(t, 10.0, ev["paid_amount"])

		// An unpaid charge reads paid_amount null; a payout has no mismatch flag.
		resp, _, err := f.gw.CreateCharge(ctx, c, gateway.Keyed(chargeRequest("unpaid"), "", body("unpaid")))
		require.NoError(t, err)
		unpaid, err := f.gw.Charge(ctx, c, resp.PaymentID)
		require.NoError(t, err)
		raw, err := json.Marshal(gateway.View(unpaid, pix.Date{}))
		require.NoError(t, err)
		require.Contains(t, string(raw), `"paid_amount":null`)
		require.Contains(t, string(raw), `"amount_mismatch":false`)

		// Refunds: at most what was paid (0.01), at most the amount asked (100.00).
		_, _, err = f.gw.CreateRefund(ctx, c, gateway.Keyed(&gateway.RefundRequest{PaymentID: under.ID, Amount: json.RawMessage(`0.02`)}, "r-under-1", body("r-under-1")))
		require.Equal(t, pix.EUnprocessable, pix.ErrorCode(err), "more than the 0.01 paid")
		_, _, err = f.gw.CreateRefund(ctx, c, gateway.Keyed(&gateway.RefundRequest{PaymentID: over.ID, Amount: json.RawMessage(`100.01`)}, "r-over-1", body("r-over-1")))
		require.Equal(t, pix.EUnprocessable, pix.ErrorCode(err), "more than the 100.00 asked")
		r, _, err := f.gw.CreateRefund(ctx, c, gateway.Keyed(&gateway.RefundRequest{PaymentID: over.ID}, "r-over-2", body("r-over-2")))
		require.NoError(t, err)
		require.Equal(t, pix.Amount(10000), r.Amount)
		require.NoError(t, f.db.CheckLedger(ctx))
	})
}

// Money no open charge takes — a second Pix for a paid charge, a Pix for a
// txid no charge holds, one the reading finds — is recorded once as an
// unmatched receipt, posted to suspense, and returned in full to the payer
// by devolução, sent once and read back; the merchant's balance never
// moves and the books equal the PSP's.
func TestPSPUnmatchedReturned(t *testing.T) {
	t.Parallel()
	testkit.Databases(t, func(t *testing.T, open testkit.Opener) {
		f := newPSPFixture(t, open)
		ctx := context.Background()
		ch := f.paidCharge(t, "c1", "10.50", 1)
		require.Equal(t, pix.Amount(1050), f.available(t))

		second := f.psp.pay(ch.TxID, 1050, 2)
		report := []cashin.ReportedPix{{EndToEndID: second.EndToEndID}}
		require.NoError(t, f.gw.Cashin().PSPReported(ctx, report))
		require.NoError(t, f.node(t).Cashin().PSPReported(ctx, report), "reported again, by another node")
		stray := f.psp.pay("nochargeholdsthistxid0000000000", 777, 3) // found only by the reading
		_, err := f.gw.Cashin().ReconcileReceived(ctx, 0)
		require.NoError(t, err)

		require.Equal(t, pix.Amount(1050), f.available(t), "the merchant's balance does not move")
		require.Equal(t, pix.StatusPaid, f.status(t, ch.ID).Status)
		held, err := f.db.UnmatchedReceipts(ctx, "", 10)
		require.NoError(t, err)
		require.Len(t, held, 2, "each Pix recorded once")
		byE2E := map[string]pix.UnmatchedReceipt{}
		for _, u := range held {
			byE2E[u.PaymentEndToEndID] = u
			require.Equal(t, pix.UnmatchedReturning, u.Status)
		}
		require.Equal(t, pix.UnmatchedAlreadyPaid, byE2E[second.EndToEndID].Reason)
		require.Equal(t, ch.ID, byE2E[second.EndToEndID].TransactionID)
		require.Equal(t, pix.UnmatchedNoCharge, byE2E[stray.EndToEndID].Reason)
		require.Equal(t, pix.Amount(777), byE2E[stray.EndToEndID].Amount)
		settlement, suspense := f.house(t)
		require.Equal(t, pix.Amount(-1827), settlement)
		require.Equal(t, pix.Amount(1827), suspense)
		require.NoError(t, f.db.CheckLedger(ctx))

		// The first send's answer is lost after the PSP accepted it: the
		// next step reads it and never sends it again.
		f.psp.set(func(p *scriptedPSP) { p.fault = "commit-then-fail" })
		_, err = f.gw.Transfers().StepDue(ctx, pix.TransferReturn, 10)
		require.NoError(t, err)
		f.clock.Advance(time.Minute)
		_, err = f.gw.Transfers().StepDue(ctx, pix.TransferReturn, 10)
		require.NoError(t, err)
		for _, u := range held {
			require.Equal(t, 1, f.psp.sent(u.ReturnID), "return %s sent once", u.ReturnID)
			f.psp.finish(u.ReturnID, provider.Completed)
		}
		f.clock.Advance(time.Minute)
		_, err = f.gw.Transfers().StepDue(ctx, pix.TransferReturn, 10)
		require.NoError(t, err)
		for _, u := range held {
			got, err := f.db.UnmatchedReceipt(ctx, u.ID)
			require.NoError(t, err)
			require.Equal(t, pix.UnmatchedReturned, got.Status)
			require.NotEmpty(t, got.ReturnEndToEndID)
		}
		settlement, suspense = f.house(t)
		require.Zero(t, settlement, "what came in went back")
		require.Zero(t, suspense)
		require.Equal(t, pix.Amount(1050), f.available(t))
		require.NoError(t, f.db.CheckLedger(ctx))

		// Reported again after it was returned: nothing changes.
		require.NoError(t, f.gw.Cashin().PSPReported(ctx, report))
		settlement, suspense = f.house(t)
		require.Zero(t, settlement)
		require.Zero(t, suspense)
	})
}

// With PIXGATE_PSP_UNMATCHED=hold an unmatched receipt waits for an
// operator; a return the PSP does not complete holds it again, and the
// operator's next return goes out under a new devolução id.
func TestPSPUnmatchedHeld(t *testing.T) {
	t.Parallel()
	testkit.Databases(t, func(t *testing.T, open testkit.Opener) {
		f := newPSPFixture(t, open)
		ctx := context.Background()
		gw, err := gateway.New(gateway.Config{DB: f.db, Env: "production", ChargeTTL: time.Hour, Log: slog.New(slog.NewJSONHandler(io.Discard, nil)),
			Provider: f.psp, Now: f.clock.Now, HoldUnmatched: true})
		require.NoError(t, err)
		ch := f.paidCharge(t, "c1", "10.50", 1)
		second := f.psp.pay(ch.TxID, 200, 2)
		require.NoError(t, gw.Cashin().PSPReported(ctx, []cashin.ReportedPix{{EndToEndID: second.EndToEndID}}))
		list, err := f.db.UnmatchedReceipts(ctx, pix.UnmatchedHeld, 10)
		require.NoError(t, err)
		require.Len(t, list, 1)
		u := list[0]
		_, err = gw.Transfers().StepDue(ctx, pix.TransferReturn, 10)
		require.NoError(t, err)
		require.Empty(t, f.psp.callLog(), "nothing is sent while held")

		started, err := gw.Transfers().ReturnUnmatched(ctx, u.ID)
		require.NoError(t, err)
		require.Equal(t, pix.UnmatchedReturning, started.Status)
		_, err = gw.Transfers().ReturnUnmatched(ctx, u.ID)
		require.Equal(t, pix.EUnprocessable, pix.ErrorCode(err), "not twice")
		_, err = gw.Transfers().ReturnUnmatched(ctx, "no-such-receipt")
		require.Equal(t, pix.ENotFound, pix.ErrorCode(err))
		_, err = gw.Transfers().StepDue(ctx, pix.TransferReturn, 10)
		require.NoError(t, err)
		require.Equal(t, 1, f.psp.sent(started.ReturnID))
		f.psp.finish(started.ReturnID, provider.Failed)
		f.clock.Advance(time.Minute)
		_, err = gw.Transfers().StepDue(ctx, pix.TransferReturn, 10)
		require.NoError(t, err)
		got, err := f.db.UnmatchedReceipt(ctx, u.ID)
		require.NoError(t, err)
		require.Equal(t, pix.UnmatchedHeld, got.Status)
		require.NotEmpty(t, got.ReturnError)
		_, suspense := f.house(t)
		require.Equal(t, pix.Amount(200), suspense, "a failed return leaves the money in suspense")

		again, err := gw.Transfers().ReturnUnmatched(ctx, u.ID)
		require.NoError(t, err)
		require.NotEqual(t, started.ReturnID, again.ReturnID)
		_, err = gw.Transfers().StepDue(ctx, pix.TransferReturn, 10)
		require.NoError(t, err)
		f.psp.finish(again.ReturnID, provider.Completed)
		f.clock.Advance(time.Minute)
		_, err = gw.Transfers().StepDue(ctx, pix.TransferReturn, 10)
		require.NoError(t, err)
		got, err = f.db.UnmatchedReceipt(ctx, u.ID)
		require.NoError(t, err)
		require.Equal(t, pix.UnmatchedReturned, got.Status)
		require.Equal(t, 1, f.psp.sent(started.ReturnID))
		require.Equal(t, 1, f.psp.sent(again.ReturnID))
		settlement, suspense := f.house(t)
		require.Zero(t, settlement)
		require.Zero(t, suspense)
		require.NoError(t, f.db.CheckLedger(ctx))
	})
}

// A cob created at the PSP by a process that died before storing its
// charge is withdrawn by the sweep; if a payer paid it meanwhile, the
// payment goes back as an unmatched receipt. A stored charge's cob is
// never touched.
func TestPSPOrphanCobSwept(t *testing.T) {
	t.Parallel()
	testkit.Databases(t, func(t *testing.T, open testkit.Opener) {
		f := newPSPFixture(t, open)
		ctx := context.Background()
		kept, _, err := f.gw.CreateCharge(ctx, f.c, gateway.Keyed(chargeRequest("kept"), "", body("kept")))
		require.NoError(t, err)
		keptTxID := f.status(t, kept.PaymentID).TxID

		// What a crash between the PSP's answer and the commit leaves: the
		// intent and the cob, no charge.
		orphan := func(txid string) {
			require.NoError(t, f.db.InsertCobIntent(ctx, pix.CobIntent{TxID: txid, ClientID: f.c.ID, CreatedAt: f.clock.Now()}))
			_, err := f.psp.CreateCharge(ctx, provider.Charge{TxID: txid, Amount: 1000, TTL: time.Hour, PayerDocument: "52998224725"})
			require.NoError(t, err)
		}
		orphan("orphanunpaid00000000000000000001")
		orphan("orphanpaid0000000000000000000002")
		f.psp.pay("orphanpaid0000000000000000000002", 1000, 9)
		// A creation whose PSP call failed: maybe no cob at all.
		f.psp.set(func(p *scriptedPSP) { p.down = true })
		_, _, err = f.gw.CreateCharge(ctx, f.c, gateway.Keyed(chargeRequest("failed"), "", body("failed")))
		require.Equal(t, pix.EProviderUnavailable, pix.ErrorCode(err))
		f.psp.set(func(p *scriptedPSP) { p.down = false })

		n, err := f.gw.Cashin().SweepOrphanCobs(ctx, 10)
		require.NoError(t, err)
		require.Zero(t, n, "too young to be an orphan")
		f.clock.Advance(2 * time.Minute)
		n, err = f.gw.Cashin().SweepOrphanCobs(ctx, 10)
		require.NoError(t, err)
		require.Equal(t, 3, n)
		f.psp.set(func(p *scriptedPSP) {
			require.True(t, p.removed["orphanunpaid00000000000000000001"], "the unpaid orphan cob was removed")
			require.False(t, p.removed[keptTxID], "a charge's cob is not touched")
		})
		stale, err := f.db.StaleCobIntents(ctx, f.clock.Now().Add(time.Hour), 10)
		require.NoError(t, err)
		require.Empty(t, stale)
		list, err := f.db.UnmatchedReceipts(ctx, "", 10)
		require.NoError(t, err)
		require.Len(t, list, 1, "the paid orphan's payment is returned")
		require.Equal(t, "orphanpaid0000000000000000000002", list[0].TxID)
		require.Equal(t, pix.StatusPending, f.status(t, kept.PaymentID).Status)
		require.NoError(t, f.db.CheckLedger(ctx))
	})
}

// A held unmatched receipt that the PSP returns by a devolução pixgate did
// not send (a MED return) is RETURNED by it, once, its money out of
// suspense as the PSP's is; a part of it returned stays held for an
// operator.
func TestPSPUnmatchedReturnedByMED(t *testing.T) {
	t.Parallel()
	testkit.Databases(t, func(t *testing.T, open testkit.Opener) {
		f := newPSPFixture(t, open)
		ctx := context.Background()
		gw, err := gateway.New(gateway.Config{DB: f.db, Env: "production", ChargeTTL: time.Hour, Log: slog.New(slog.NewJSONHandler(io.Discard, nil)),
			Provider: f.psp, Now: f.clock.Now, HoldUnmatched: true})
		require.NoError(t, err)
		ch := f.paidCharge(t, "c1", "10.50", 1)
		whole := f.psp.pay(ch.TxID, 200, 2)
		part := f.psp.pay(ch.TxID, 300, 3)
		report := func() {
			t.Helper()
			require.NoError(t, gw.Cashin().PSPReported(ctx, []cashin.ReportedPix{{EndToEndID: whole.EndToEndID}, {EndToEndID: part.EndToEndID}}))
		}
		report()
		_, suspense := f.house(t)
		require.Equal(t, pix.Amount(500), suspense)

		f.psp.set(func(p *scriptedPSP) {
			for e2e, amount := range map[string]pix.Amount{whole.EndToEndID: 200, part.EndToEndID: 100} {
				pay := p.payments[e2e]
				pay.Refunds = []provider.TransferState{{ID: "MED" + e2e[1:20], Status: provider.Completed, Amount: amount,
					Nature: provider.NatureMEDFraud, EndToEndID: "D" + e2e[1:]}}
				p.payments[e2e] = pay
			}
		})
		report()
		report() // read twice: recorded once
		u, err := f.db.UnmatchedByPayment(ctx, whole.EndToEndID)
		require.NoError(t, err)
		require.Equal(t, pix.UnmatchedReturned, u.Status)
		require.Equal(t, "MED"+whole.EndToEndID[1:20], u.ReturnID)
		p, err := f.db.UnmatchedByPayment(ctx, part.EndToEndID)
		require.NoError(t, err)
		require.Equal(t, pix.UnmatchedHeld, p.Status, "a partial MED return is an operator's to settle")
		_, suspense = f.house(t)
		require.Equal(t, pix.Amount(300), suspense, "the whole return left suspense once")
		_, err = gw.Transfers().StepDue(ctx, pix.TransferReturn, 10)
		require.NoError(t, err)
		require.Empty(t, f.psp.callLog(), "nothing is sent for a receipt the PSP returned")
		require.NoError(t, f.db.CheckLedger(ctx))
	})
}
