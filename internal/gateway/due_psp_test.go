package gateway_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/internal/cashin"
	"github.com/pixgate/pixgate/internal/gateway"
	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/provider"
	"github.com/pixgate/pixgate/internal/provider/apipix"
	"github.com/pixgate/pixgate/internal/pspsim"
	"github.com/pixgate/pixgate/internal/store"
	"github.com/pixgate/pixgate/internal/testkit"
)

// duePSP is a production gateway on the PSP simulator through the API Pix
// client, both on one clock, with one client paying a 1% cash-in fee.
type duePSP struct {
	db    *store.DB
	gw    *gateway.Service
	sim   *pspsim.Server
	psp   *apipix.Client
	clock *testkit.Clock
	c     pix.Client
	// logs receives the gateway's log lines (nil: none are kept).
	logs io.Writer
}

func newDuePSP(t *testing.T, open testkit.Opener) *duePSP {
	t.Helper()
	f := &duePSP{db: open(t), clock: &testkit.Clock{}}
	// Noon in São Paulo, so that the date does not change while a test runs.
	loc, err := time.LoadLocation("America/Sao_Paulo")
	require.NoError(t, err)
	y, m, d := f.clock.Now().In(loc).Date()
	f.clock.Advance(time.Date(y, m, d, 12, 0, 0, 0, loc).Sub(f.clock.Now()))
	f.start(t, apipix.Account{})
	return f
}

// start runs the simulator on f's clock (its exchanges checked against
// BACEN's OpenAPI where it is at hand), the API Pix client on it with the
// receiving account acct (zero: none), and a production gateway with one
// client paying a 1% cash-in fee.
func (f *duePSP) start(t *testing.T, acct apipix.Account) {
	t.Helper()
	var wrap func(http.Handler) http.Handler
	if os.Getenv(testkit.BACENOpenAPIEnv) != "" || os.Getenv("CI") == "true" {
		v := testkit.BACENValidator(t)
		wrap = v.Wrap
		t.Cleanup(func() { v.Check(t) })
	}
	f.sim = pspsim.New(pspsim.Options{Wrap: wrap, SettleDelay: -1, PixKey: "loja@example.com", Now: f.clock.Now})
	require.NoError(t, f.sim.Start(context.Background()))
	t.Cleanup(f.sim.Close)
	o := f.sim.Options()
	var err error
	f.psp, err = apipix.New(apipix.Config{APIURL: f.sim.URL(), ClientID: o.ClientID, ClientSecret: o.ClientSecret,
		CertPEM: o.PKI.ClientCertPEM, KeyPEM: o.PKI.ClientKeyPEM, CAPEM: o.PKI.CAPEM, PixKey: o.PixKey, Account: acct,
		Log: slog.New(slog.NewJSONHandler(io.Discard, nil))})
	require.NoError(t, err)
	logs := f.logs
	if logs == nil {
		logs = io.Discard
	}
	f.gw, err = gateway.New(gateway.Config{DB: f.db, Env: "production", ChargeTTL: time.Hour, Log: slog.New(slog.NewJSONHandler(logs, nil)),
		Provider: f.psp, Now: f.clock.Now})
	require.NoError(t, err)
	ctx := context.Background()
	cred, err := createClient(ctx, f.db, f.gw, clientParams{Name: "m", CashinFee: pix.FeeRule{PercentBP: 100}})
	require.NoError(t, err)
	f.c, err = f.gw.Authenticate(ctx, cred.ClientID, cred.ClientSecret)
	require.NoError(t, err)
}

// charge creates a charge with the due object due and returns it.
func (f *duePSP) charge(t *testing.T, ext, amount string, due *pix.DueRequest) pix.Transaction {
	t.Helper()
	ctx := context.Background()
	r := chargeRequestAmount(ext, amount)
	r.Due = due
	resp, _, err := f.gw.CreateCharge(ctx, f.c, gateway.Keyed(r, "", body(ext)))
	require.NoError(t, err)
	ch, err := f.gw.Charge(ctx, f.c, resp.PaymentID)
	require.NoError(t, err)
	require.NotNil(t, ch.Due)
	require.Equal(t, resp.QRCode, ch.QRCode)
	return ch
}

// cobvStatus reads the cobv txid at the simulator.
func (f *duePSP) cobvStatus(t *testing.T, txid string) string {
	t.Helper()
	pays, err := f.psp.DueChargePayments(context.Background(), txid)
	require.NoError(t, err)
	if len(pays) > 0 {
		return pspsim.CobConcluida
	}
	for _, r := range f.sim.Requests() {
		if r.Method == http.MethodPatch && r.Path == "/v2/cobv/"+txid && r.Status == http.StatusOK {
			return pspsim.CobRemovidaUR
		}
	}
	return pspsim.CobAtiva
}

// today is the simulator's and the gateway's São Paulo date, d days on.
func (f *duePSP) today(t *testing.T, d int) string {
	t.Helper()
	loc, err := time.LoadLocation("America/Sao_Paulo")
	require.NoError(t, err)
	return f.clock.Now().In(loc).AddDate(0, 0, d).Format(pix.DateLayout)
}

// TestDueChargesAtThePSP: a charge with a due date is a cobv at the PSP
// (its pixCopiaECola the qrcode); what the PSP confirms is credited, the
// fee on it; amount_mismatch says whether it differs from pixgate's own
// amount due on the São Paulo date of the payment; an expired charge is
// read (GET /cobv) before it is removed (PATCH /cobv), and a payment found
// then is credited instead; an orphan cobv is withdrawn by the sweep.
func TestDueChargesAtThePSP(t *testing.T) {
	t.Parallel()
	testkit.Databases(t, func(t *testing.T, open testkit.Opener) {
		f := newDuePSP(t, open)
		ctx := context.Background()
		terms := func(date string, days string) *pix.DueRequest {
			return &pix.DueRequest{Date: date, DaysAfter: []byte(days), Fine: &pix.DueFineRequest{Percent: []byte("2")},
				Interest: &pix.DueInterestRequest{PercentPerMonth: []byte("1")}}
		}

		// Paid at the PSP today, on its due date: what both compute.
		onTime := f.charge(t, "on-time", "250.00", terms(f.today(t, 0), "5"))
		e2e, valor, err := f.sim.PayCobV(ctx, onTime.TxID, "")
		require.NoError(t, err)
		require.Equal(t, int64(25000), valor)
		require.NoError(t, f.gw.Cashin().PSPReported(ctx, []cashin.ReportedPix{{EndToEndID: e2e, TxID: onTime.TxID}}))
		got, err := f.gw.Charge(ctx, f.c, onTime.ID)
		require.NoError(t, err)
		require.Equal(t, pix.StatusPaid, got.Status)
		require.Equal(t, pix.Amount(25000), got.PaidAmount)
		require.Equal(t, pix.Amount(250), got.Tax)
		require.False(t, got.AmountMismatch())

		// Paid at the PSP for a day after its due date (the payer's bank
		// priced it so; a due date on a business day, which BACEN's rules
		// do not move): the PSP's amount is credited, and since the Pix is
		// dated that day it is pixgate's amount due that day too.
		dueIn := 0
		for !pspsim.BusinessDay(f.clock.Now().AddDate(0, 0, dueIn)) {
			dueIn++
		}
		late := f.charge(t, "late", "250.00", terms(f.today(t, dueIn), "30"))
		day := f.today(t, dueIn+9)
		psp, payable, err := f.sim.CobVDue(late.TxID, day)
		require.NoError(t, err)
		require.True(t, payable)
		e2e, valor, err = f.sim.PayCobV(ctx, late.TxID, day)
		require.NoError(t, err)
		require.Equal(t, psp.Final, valor)
		require.Equal(t, int64(25000+500+75), valor, "late: the 2% fine and 9 days of 1% a month")
		require.NoError(t, f.gw.Cashin().PSPReported(ctx, []cashin.ReportedPix{{EndToEndID: e2e, TxID: late.TxID}}))
		got, err = f.gw.Charge(ctx, f.c, late.ID)
		require.NoError(t, err)
		require.Equal(t, pix.StatusPaid, got.Status)
		require.Equal(t, pix.Amount(valor), got.PaidAmount, "the PSP's confirmed amount")
		require.Equal(t, pix.Amount(25000), got.Amount)
		require.Equal(t, min(pix.FeeRule{PercentBP: 100}.Fee(pix.Amount(valor)), pix.Amount(valor)), got.Tax, "the fee on what was paid")
		require.Equal(t, pix.Amount(valor), got.ExpectedAmount, "pixgate's amount due on the day the Pix is dated")
		require.False(t, got.AmountMismatch())

		// Due on a Saturday and paid on the Monday after: BACEN moves the
		// due date to a business day, so the PSP charges no fine; pixgate's
		// terms do not move it, and amount_mismatch says so.
		sat := 0
		for f.clock.Now().AddDate(0, 0, sat).In(time.FixedZone("BRT", -3*3600)).Weekday() != time.Saturday {
			sat++
		}
		moved := f.charge(t, "moved", "250.00", terms(f.today(t, sat), "30"))
		e2e, valor, err = f.sim.PayCobV(ctx, moved.TxID, f.today(t, sat+2))
		require.NoError(t, err)
		require.Equal(t, int64(25000), valor, "no fine on the Monday after a Saturday due date")
		require.NoError(t, f.gw.Cashin().PSPReported(ctx, []cashin.ReportedPix{{EndToEndID: e2e, TxID: moved.TxID}}))
		got, err = f.gw.Charge(ctx, f.c, moved.ID)
		require.NoError(t, err)
		require.Equal(t, pix.StatusPaid, got.Status)
		require.Equal(t, pix.Amount(25000), got.PaidAmount)
		require.Equal(t, pix.Amount(25000+500+17), got.ExpectedAmount, "pixgate's fine and two days of interest")
		require.True(t, got.AmountMismatch())

		// Expiry reads the cobv before removing it.
		unpaid := f.charge(t, "unpaid", "10.00", terms(f.today(t, 0), "1"))
		paidLate := f.charge(t, "paid-unreported", "10.00", terms(f.today(t, 0), "1"))
		// Paid, but its webhook never reached pixgate.
		_, valor, err = f.sim.PayCobV(ctx, paidLate.TxID, f.today(t, 1))
		require.NoError(t, err)
		n, err := f.gw.Cashin().ExpireDue(ctx, 10)
		require.NoError(t, err)
		require.Zero(t, n, "not before the end of the last day")
		f.clock.Advance(unpaid.ExpiresAt.Sub(f.clock.Now()) + time.Second)
		n, err = f.gw.Cashin().ExpireDue(ctx, 10)
		require.NoError(t, err)
		require.Equal(t, 1, n)
		got, err = f.gw.Charge(ctx, f.c, unpaid.ID)
		require.NoError(t, err)
		require.Equal(t, pix.StatusCancelled, got.Status)
		require.Equal(t, pspsim.CobRemovidaUR, f.cobvStatus(t, unpaid.TxID), "removed with PATCH /cobv")
		got, err = f.gw.Charge(ctx, f.c, paidLate.ID)
		require.NoError(t, err)
		require.Equal(t, pix.StatusPaid, got.Status, "the payment read before cancelling is credited")
		require.Equal(t, pix.Amount(valor), got.PaidAmount)
		for _, r := range f.sim.Requests() {
			require.False(t, strings.HasPrefix(r.Path, "/v2/cob/"), "a charge with a due date is never read or removed as a cob: %s %s", r.Method, r.Path)
		}

		// An orphan cobv (created, its charge never stored) is withdrawn
		// by the sweep as a cobv.
		orphan := provider.DueCharge{TxID: "orphanCobv000000000000000000001", Amount: 1000, Due: *unpaid.Due,
			Payer: provider.DuePayer{Name: "Maria", Document: "52998224725"}}
		orphan.Due.Date, err = pix.ParseDate(f.today(t, 3))
		require.NoError(t, err)
		_, err = f.psp.CreateDueCharge(ctx, orphan)
		require.NoError(t, err)
		require.NoError(t, f.db.InsertCobIntent(ctx, pix.CobIntent{TxID: orphan.TxID, ClientID: f.c.ID, CreatedAt: f.clock.Now(), Due: true}))
		f.clock.Advance(2 * time.Minute)
		n, err = f.gw.Cashin().SweepOrphanCobs(ctx, 10)
		require.NoError(t, err)
		require.Equal(t, 1, n)
		require.Equal(t, pspsim.CobRemovidaUR, f.cobvStatus(t, orphan.TxID))
	})
}
