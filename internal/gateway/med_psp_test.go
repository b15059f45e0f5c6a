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
	"github.com/pixgate/pixgate/internal/provider/efi"
	"github.com/pixgate/pixgate/internal/pspsim"
	"github.com/pixgate/pixgate/internal/testkit"
)

// medPSP is a production gateway on the PSP simulator through the efi
// provider (infractions and returns) or the API Pix one (returns only),
// on one clock, every exchange checked against BACEN's OpenAPI where it
// is at hand.
type medPSP struct {
	*pspFixture
	sim *pspsim.Server
	p   provider.Provider
}

func newMEDPSP(t *testing.T, open testkit.Opener, name string) *medPSP {
	t.Helper()
	var wrap func(http.Handler) http.Handler
	if os.Getenv(testkit.BACENOpenAPIEnv) != "" || os.Getenv("CI") == "true" {
		v := testkit.BACENValidator(t)
		wrap = v.Wrap
		t.Cleanup(func() { v.Check(t) })
	}
	f := &medPSP{pspFixture: &pspFixture{db: open(t), clock: &testkit.Clock{}}}
	f.sim = pspsim.New(pspsim.Options{Wrap: wrap, SettleDelay: -1, PixKey: "loja@example.com", Now: f.clock.Now})
	require.NoError(t, f.sim.Start(context.Background()))
	t.Cleanup(f.sim.Close)
	o := f.sim.Options()
	cfg := apipix.Config{APIURL: f.sim.URL(), ClientID: o.ClientID, ClientSecret: o.ClientSecret,
		CertPEM: o.PKI.ClientCertPEM, KeyPEM: o.PKI.ClientKeyPEM, CAPEM: o.PKI.CAPEM, PixKey: o.PixKey,
		Log: slog.New(slog.NewJSONHandler(io.Discard, nil))}
	var p provider.Provider
	var err error
	if name == provider.NameEfi {
		p, err = efi.New(cfg)
	} else {
		p, err = apipix.New(cfg)
	}
	require.NoError(t, err)
	f.p = p
	f.gw = f.nodeWith(t, p)
	ctx := context.Background()
	cred, err := createClient(ctx, f.db, f.gw, clientParams{Name: "m"})
	require.NoError(t, err)
	f.c, err = f.gw.Authenticate(ctx, cred.ClientID, cred.ClientSecret)
	require.NoError(t, err)
	return f
}

// paid creates a charge of amount, has the simulator's payer pay it and
// pixgate read the payment back; it returns the charge and its Pix.
func (f *medPSP) paid(t *testing.T, ext, amount string) (pix.Transaction, string) {
	t.Helper()
	ctx := context.Background()
	resp, _, err := f.gw.CreateCharge(ctx, f.c, gateway.Keyed(chargeRequestAmount(ext, amount), "", body(ext)))
	require.NoError(t, err)
	ch, err := f.gw.Charge(ctx, f.c, resp.PaymentID)
	require.NoError(t, err)
	e2e, err := f.sim.Pay(ctx, ch.TxID)
	require.NoError(t, err)
	require.NoError(t, f.gw.Cashin().PSPReported(ctx, []cashin.ReportedPix{{EndToEndID: e2e, TxID: ch.TxID}}))
	require.Equal(t, pix.StatusPaid, f.status(t, ch.ID).Status)
	return ch, e2e
}

func (f *medPSP) balance(t *testing.T) gateway.Balance {
	t.Helper()
	b, err := f.gw.Balance(context.Background(), f.c)
	require.NoError(t, err)
	return b
}

// readInfractions runs the infractions' reading once it is due, and
// returns how many it listed.
func (f *medPSP) readInfractions(t *testing.T, gw *gateway.Service) int {
	t.Helper()
	f.clock.Advance(cashin.DefaultDisputesEvery + time.Second)
	n, err := gw.Cashin().ReadInfractions(context.Background(), 0)
	require.NoError(t, err)
	return n
}

func (f *medPSP) readReturns(t *testing.T, gw *gateway.Service) int {
	t.Helper()
	f.clock.Advance(cashin.DefaultReturnsEvery + time.Second)
	n, err := gw.Cashin().ReadReturns(context.Background(), 0)
	require.NoError(t, err)
	return n
}

func (f *medPSP) disputes(t *testing.T, ch pix.Transaction) []pix.Dispute {
	t.Helper()
	ds, err := f.gw.Cashin().ChargeDisputes(context.Background(), ch)
	require.NoError(t, err)
	return ds
}

// With Efí, an infraction blocks the contested amount as soon as it is
// read, once whichever node reads it and however often; the defense goes
// to the PSP; a released infraction gives the money back, and an accepted
// one is returned by its MED devolução, recorded once.
func TestMEDInfractionsAtThePSP(t *testing.T) {
	t.Parallel()
	testkit.Databases(t, func(t *testing.T, open testkit.Opener) {
		f := newMEDPSP(t, open, provider.NameEfi)
		ctx := context.Background()
		a, e2eA := f.paid(t, "a", "100.00")
		b, e2eB := f.paid(t, "b", "50.00")

		respondBy := f.clock.Now().Add(72 * time.Hour).Truncate(time.Second)
		infA, err := f.sim.OpenInfraction(e2eA, 4000, "MED_OPERACIONAL", respondBy)
		require.NoError(t, err)
		infB, err := f.sim.OpenInfraction(e2eB, 0, "", respondBy)
		require.NoError(t, err)
		other := f.nodeWith(t, f.p)
		require.Equal(t, 2, f.readInfractions(t, f.gw))
		require.Equal(t, 2, f.readInfractions(t, other), "the open infractions are listed again")
		dA, dB := f.disputes(t, a), f.disputes(t, b)
		require.Len(t, dA, 1, "recorded once")
		require.Len(t, dB, 1, "recorded once")
		require.Equal(t, pix.DisputeOpen, dA[0].Status)
		require.Equal(t, pix.Amount(4000), dA[0].Amount)
		require.Equal(t, pix.ReasonOperationalFailure, dA[0].Reason)
		require.True(t, respondBy.Equal(dA[0].RespondBy), "respond_by is the PSP's deadline: %s", dA[0].RespondBy)
		require.Equal(t, pix.Amount(5000), dB[0].Amount, "no amount: what is left of the Pix")
		require.Equal(t, pix.ReasonFraud, dB[0].Reason)
		bal := f.balance(t)
		require.Equal(t, pix.Amount(9000), bal.Blocked)
		require.Equal(t, pix.Amount(6000), bal.Available)

		_, err = f.gw.Cashin().Defend(ctx, f.c, dA[0].ID, false, "Produto entregue ao comprador")
		require.NoError(t, err)
		fa := infractionFact(t, f.sim, infA)
		require.NotNil(t, fa.Defense, "the defense reached the PSP")

		require.NoError(t, f.sim.ReleaseInfraction(infA))
		f.readInfractions(t, other)
		dA = f.disputes(t, a)
		require.Equal(t, pix.DisputeClosed, dA[0].Status)
		require.Equal(t, pix.OutcomeReleased, dA[0].Outcome)
		bal = f.balance(t)
		require.Equal(t, pix.Amount(5000), bal.Blocked)
		require.Equal(t, pix.Amount(10000), bal.Available)

		// The PSP takes infB's defense but its answer is lost: 503 and
		// nothing recorded; the retry, which the PSP refuses as a second
		// defense, finds the first one there and records it. Another
		// justification is not the merchant's earlier attempt: 422.
		f.sim.AddFault(pspsim.Fault{Method: http.MethodPost, PathPrefix: "/v2/gn/infracoes/", Kind: pspsim.FaultCommitThenError})
		_, err = f.gw.Cashin().Defend(ctx, f.c, dB[0].ID, true, "Estorno aceito")
		require.Equal(t, pix.EProviderUnavailable, pix.ErrorCode(err), "%v", err)
		require.NotNil(t, infractionFact(t, f.sim, infB).Defense, "the PSP took it")
		require.Nil(t, f.disputes(t, b)[0].Defense, "nothing recorded on an unknown outcome")
		_, err = f.gw.Cashin().Defend(ctx, f.c, dB[0].ID, true, "Outra justificativa")
		require.Equal(t, pix.EUnprocessable, pix.ErrorCode(err), "%v", err)
		got, err := f.gw.Cashin().Defend(ctx, f.c, dB[0].ID, true, "Estorno aceito")
		require.NoError(t, err, "the retry finds its defense at the PSP")
		require.NotNil(t, got.Defense)
		require.Equal(t, "Estorno aceito", f.disputes(t, b)[0].Defense.Justification)

		dev, err := f.sim.AcceptInfraction(infB, 3000)
		require.NoError(t, err)
		f.readInfractions(t, f.gw)
		require.Equal(t, pix.DisputeOpen, f.disputes(t, b)[0].Status, "accepted: open until its devolução is read")
		require.Equal(t, 1, f.readReturns(t, f.gw))
		dB = f.disputes(t, b)
		require.Len(t, dB, 1)
		require.Equal(t, pix.DisputeClosed, dB[0].Status)
		require.Equal(t, pix.OutcomeReturned, dB[0].Outcome)
		require.Equal(t, pix.Amount(3000), dB[0].ReturnedAmount)
		require.True(t, strings.EqualFold(dev, dB[0].ReturnID), "returned by devolução %s, recorded %s", dev, dB[0].ReturnID)
		f.readReturns(t, other)
		require.Len(t, f.disputes(t, b), 1, "the return is recorded once")
		bal = f.balance(t)
		require.Equal(t, pix.Amount(0), bal.Blocked)
		require.Equal(t, pix.Amount(12000), bal.Available, "what the return did not take is released")
		require.Equal(t, pix.Amount(3000), f.status(t, b.ID).MEDReturned)

		// Opened and accepted between two readings, its devolução reported
		// first: the reading gives the infraction to that return, and
		// blocks nothing.
		c, e2eC := f.paid(t, "c", "20.00")
		infC, err := f.sim.OpenInfraction(e2eC, 0, "", respondBy)
		require.NoError(t, err)
		_, err = f.sim.AcceptInfraction(infC, 0)
		require.NoError(t, err)
		require.NoError(t, f.gw.Cashin().PSPReported(ctx, []cashin.ReportedPix{{EndToEndID: e2eC, TxID: c.TxID}}))
		f.readInfractions(t, f.gw)
		dC := f.disputes(t, c)
		require.Len(t, dC, 1, "one contest, one dispute")
		require.Equal(t, infC, dC[0].PSPID)
		require.Equal(t, pix.OutcomeReturned, dC[0].Outcome)
		require.Equal(t, pix.Amount(12000), f.balance(t).Available)
		require.Zero(t, f.balance(t).Blocked)
		require.NoError(t, f.db.CheckLedger(ctx))
	})
}

// infractionFact is the simulator's infraction id.
func infractionFact(t *testing.T, sim *pspsim.Server, id string) pspsim.InfractionFact {
	t.Helper()
	for _, inf := range sim.State().Infractions {
		if inf.ID == id {
			return inf
		}
	}
	t.Fatalf("the simulator has no infraction %s", id)
	return pspsim.InfractionFact{}
}

// A MED return nobody announced is recorded once as a CLOSED dispute,
// whichever reading sees it first: the webhook's report read back, or the
// reading of received Pix with a devolução; its reason follows the
// natureza, FRAUD when there is none.
func TestMEDReturnNobodyAnnounced(t *testing.T) {
	t.Parallel()
	testkit.Databases(t, func(t *testing.T, open testkit.Opener) {
		f := newMEDPSP(t, open, provider.NameAPIPix)
		ctx := context.Background()
		a, e2eA := f.paid(t, "a", "20.00")
		b, e2eB := f.paid(t, "b", "30.00")

		devA, err := f.sim.MEDReturn(e2eA, 0, "MED_PIX_AUTOMATICO")
		require.NoError(t, err)
		require.NoError(t, f.gw.Cashin().PSPReported(ctx, []cashin.ReportedPix{{EndToEndID: e2eA, TxID: a.TxID}}))
		dA := f.disputes(t, a)
		require.Len(t, dA, 1)
		require.Equal(t, pix.DisputeClosed, dA[0].Status)
		require.Equal(t, pix.OutcomeReturned, dA[0].Outcome)
		require.Equal(t, pix.ReasonPixAutomatico, dA[0].Reason)
		require.Equal(t, pix.Amount(2000), dA[0].ReturnedAmount)
		require.True(t, strings.EqualFold(devA, dA[0].ReturnID))
		require.Equal(t, pix.StatusRefunded, f.status(t, a.ID).Status, "returned whole")

		_, err = f.sim.MEDReturn(e2eB, 500, "")
		require.NoError(t, err)
		require.Equal(t, 2, f.readReturns(t, f.gw), "both Pix with a devolução are listed")
		f.readReturns(t, f.nodeWith(t, f.p))
		require.NoError(t, f.gw.Cashin().PSPReported(ctx, []cashin.ReportedPix{{EndToEndID: e2eA, TxID: a.TxID}, {EndToEndID: e2eB, TxID: b.TxID}}))
		require.Len(t, f.disputes(t, a), 1, "recorded once")
		dB := f.disputes(t, b)
		require.Len(t, dB, 1, "recorded once")
		require.Equal(t, pix.ReasonFraud, dB[0].Reason, "no natureza: FRAUD")
		require.Equal(t, pix.Amount(500), dB[0].ReturnedAmount)
		bal := f.balance(t)
		require.Equal(t, pix.Amount(2500), bal.Available)
		require.Zero(t, bal.Blocked)
		require.Zero(t, bal.Debt)

		// A charge paid with more than it asked: a MED return may take the
		// whole Pix, which no refund may.
		resp, _, err := f.gw.CreateCharge(ctx, f.c, gateway.Keyed(chargeRequestAmount("c", "10.00"), "", body("c")))
		require.NoError(t, err)
		ch, err := f.gw.Charge(ctx, f.c, resp.PaymentID)
		require.NoError(t, err)
		e2eC, err := f.sim.PayWith(ctx, ch.TxID, pspsim.PayOptions{Valor: 1500})
		require.NoError(t, err)
		require.NoError(t, f.gw.Cashin().PSPReported(ctx, []cashin.ReportedPix{{EndToEndID: e2eC, TxID: ch.TxID}}))
		_, err = f.sim.MEDReturn(e2eC, 0, "MED_FRAUDE")
		require.NoError(t, err)
		require.NoError(t, f.gw.Cashin().PSPReported(ctx, []cashin.ReportedPix{{EndToEndID: e2eC, TxID: ch.TxID}}))
		dC := f.disputes(t, ch)
		require.Len(t, dC, 1)
		require.Equal(t, pix.Amount(1500), dC[0].ReturnedAmount)
		look := f.status(t, ch.ID)
		require.Equal(t, pix.StatusRefunded, look.Status)
		require.Equal(t, pix.Amount(1500), look.RefundedAmount+look.MEDReturned)
		require.Equal(t, pix.Amount(2500), f.balance(t).Available, "the whole Pix went back")
		require.NoError(t, f.db.CheckLedger(ctx))
	})
}
