package apipix

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/provider"
	"github.com/pixgate/pixgate/internal/pspsim"
	"github.com/pixgate/pixgate/internal/testkit"
)

func pixDate(t *testing.T, s string) pix.Date {
	t.Helper()
	d, err := pix.ParseDate(s)
	require.NoError(t, err)
	return d
}

func dueCharge(t *testing.T) provider.DueCharge {
	return provider.DueCharge{
		TxID: txid, Amount: 100000,
		Due: pix.Due{Date: pixDate(t, "2026-12-10"), DaysAfter: 30, Fine: pix.DueFine{PercentBP: 200}, InterestBP: 100,
			Discounts: []pix.DueDiscount{{Until: pixDate(t, "2026-12-01"), Amount: 5000}, {Until: pixDate(t, "2026-12-05"), Amount: 2000}}},
		Payer: provider.DuePayer{Name: "Fulano de Tal", Document: "52998224725", Street: "Rua das Flores", Number: "10",
			City: "São Paulo", State: "SP", ZipCode: "01001000"},
		Question: "Fatura 12/2026",
	}
}

// TestCreateDueChargeRequestShape: the terms become BACEN's modalidades —
// multa 2 (percent) or 1 (fixed), juros 3 (percent a month), desconto 1
// (fixed until dates) or 2 (percent until dates) — and the payer the
// devedor with its address.
func TestCreateDueChargeRequestShape(t *testing.T) {
	e := newEnv(t)
	e.psp.setHandler(func(w http.ResponseWriter, _ *http.Request, _ []byte) {
		writeJSON(w, http.StatusCreated, fmt.Sprintf(`{"txid":%q,"status":"ATIVA","valor":{"original":"1000.00"},"pixCopiaECola":%q}`, txid, brCode))
	})
	ctx := context.Background()
	got, err := e.c.CreateDueCharge(ctx, dueCharge(t))
	require.NoError(t, err)
	assert.Equal(t, brCode, got, "pixCopiaECola verbatim")

	other := dueCharge(t)
	other.Amount = 1
	other.Due = pix.Due{Date: pixDate(t, "2026-12-10"), Fine: pix.DueFine{Amount: 525},
		Discounts: []pix.DueDiscount{{Until: pixDate(t, "2026-12-10"), PercentBP: 250}}}
	other.Payer = provider.DuePayer{Name: "ACME", Document: "11222333000181"}
	other.Question = ""
	_, err = e.c.CreateDueCharge(ctx, other)
	require.NoError(t, err)

	calls := e.psp.apiCalls()
	require.Len(t, calls, 2)
	assert.Equal(t, http.MethodPut, calls[0].Method)
	assert.Equal(t, "/v2/cobv/"+txid, calls[0].Path)
	assert.Equal(t, map[string]any{
		"calendario": map[string]any{"dataDeVencimento": "2026-12-10", "validadeAposVencimento": float64(30)},
		"devedor": map[string]any{"cpf": "52998224725", "nome": "Fulano de Tal", "logradouro": "Rua das Flores, 10",
			"cidade": "São Paulo", "uf": "SP", "cep": "01001000"},
		"valor": map[string]any{
			"original": "1000.00",
			"multa":    map[string]any{"modalidade": float64(2), "valorPerc": "2.00"},
			"juros":    map[string]any{"modalidade": float64(3), "valorPerc": "1.00"},
			"desconto": map[string]any{"modalidade": float64(1), "descontoDataFixa": []any{
				map[string]any{"data": "2026-12-01", "valorPerc": "50.00"},
				map[string]any{"data": "2026-12-05", "valorPerc": "20.00"}}},
		},
		"chave":              testPixKey,
		"solicitacaoPagador": "Fatura 12/2026",
	}, decodeBody(t, calls[0].Body))
	assert.Equal(t, map[string]any{
		"calendario": map[string]any{"dataDeVencimento": "2026-12-10", "validadeAposVencimento": float64(0)},
		"devedor":    map[string]any{"cnpj": "11222333000181", "nome": "ACME"},
		"valor": map[string]any{
			"original": "0.01",
			"multa":    map[string]any{"modalidade": float64(1), "valorPerc": "5.25"},
			"desconto": map[string]any{"modalidade": float64(2), "descontoDataFixa": []any{
				map[string]any{"data": "2026-12-10", "valorPerc": "2.50"}}},
		},
		"chave": testPixKey,
	}, decodeBody(t, calls[1].Body))
}

func TestCreateDueChargeRefusesBadInput(t *testing.T) {
	e := newEnv(t)
	for name, mod := range map[string]func(*provider.DueCharge){
		"txid":         func(c *provider.DueCharge) { c.TxID = "short" },
		"amount":       func(c *provider.DueCharge) { c.Amount = 0 },
		"no due date":  func(c *provider.DueCharge) { c.Due.Date = pix.Date{} },
		"validity":     func(c *provider.DueCharge) { c.Due.DaysAfter = -1 },
		"no name":      func(c *provider.DueCharge) { c.Payer.Name = " " },
		"bad document": func(c *provider.DueCharge) { c.Payer.Document = "52998224724" },
		"no document":  func(c *provider.DueCharge) { c.Payer.Document = "" },
		"bad UF":       func(c *provider.DueCharge) { c.Payer.State = "XX" },
		"bad CEP":      func(c *provider.DueCharge) { c.Payer.ZipCode = "01001-000" },
	} {
		c := dueCharge(t)
		mod(&c)
		_, err := e.c.CreateDueCharge(context.Background(), c)
		require.ErrorIs(t, err, provider.ErrRejected, name)
	}
	assert.Empty(t, e.psp.apiCalls())
}

// TestCreateDueChargeRetryFindsTheCobvItCreated: the first PUT's answer is
// lost (a 5xx), the retry is refused; the cobv is read and, being ours,
// its code is returned.
func TestCreateDueChargeRetryFindsTheCobvItCreated(t *testing.T) {
	e := newEnv(t)
	puts := 0
	e.psp.setHandler(func(w http.ResponseWriter, r *http.Request, _ []byte) {
		switch r.Method {
		case http.MethodPut:
			puts++
			if puts == 1 {
				writeProblem(w, http.StatusBadGateway, "Bad Gateway", "lost")
				return
			}
			writeProblem(w, http.StatusBadRequest, "CobVOperacaoInvalida", "exists")
		default:
			writeJSON(w, http.StatusOK, fmt.Sprintf(`{"txid":%q,"status":"ATIVA","calendario":{"dataDeVencimento":"2026-12-10"},"valor":{"original":"1000.00"},"pixCopiaECola":%q}`, txid, brCode))
		}
	})
	got, err := e.c.CreateDueCharge(context.Background(), dueCharge(t))
	require.NoError(t, err)
	assert.Equal(t, brCode, got)

	// Another due date at the PSP: not ours.
	puts = 0
	c := dueCharge(t)
	c.Due.Date = pixDate(t, "2026-12-11")
	_, err = e.c.CreateDueCharge(context.Background(), c)
	require.ErrorIs(t, err, provider.ErrRejected)
}

func TestDueChargePaymentsAndCancel(t *testing.T) {
	e := newEnv(t)
	status := "REMOVIDA_PELO_USUARIO_RECEBEDOR"
	e.psp.setHandler(func(w http.ResponseWriter, r *http.Request, _ []byte) {
		if r.Method == http.MethodPatch {
			writeProblem(w, http.StatusBadRequest, "CobVOperacaoInvalida", "not ATIVA")
			return
		}
		writeJSON(w, http.StatusOK, fmt.Sprintf(`{"txid":%q,"status":%q,"valor":{"original":"1000.00"},"pix":[{"endToEndId":%q,"txid":%q,"valor":"1020.33","horario":"2026-12-11T12:00:00Z"}]}`, txid, status, e2eid, txid))
	})
	ctx := context.Background()
	ps, err := e.c.DueChargePayments(ctx, txid)
	require.NoError(t, err)
	assert.Equal(t, []provider.Payment{{TxID: txid, Amount: 102033, EndToEndID: e2eid, PaidAt: time.Date(2026, 12, 11, 12, 0, 0, 0, time.UTC)}}, ps)
	_, err = e.c.DueChargePayments(ctx, "zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz")
	require.Error(t, err, "a Pix of another txid is not this charge's")

	require.NoError(t, e.c.CancelDueCharge(ctx, txid), "refused, but removed already")
	status = "CONCLUIDA"
	require.ErrorIs(t, e.c.CancelDueCharge(ctx, txid), provider.ErrRejected, "refused: it was paid")
	calls := e.psp.apiCalls()
	require.Len(t, calls, 6)
	for i, want := range []string{"GET", "GET", "PATCH", "GET", "PATCH", "GET"} {
		assert.Equal(t, want, calls[i].Method)
		assert.Contains(t, calls[i].Path, "/v2/cobv/")
	}
	assert.Equal(t, map[string]any{"status": "REMOVIDA_PELO_USUARIO_RECEBEDOR"}, decodeBody(t, calls[2].Body))
}

// simNow is the simulator's clock in the tests against it: Tuesday
// 2026-12-01, noon in São Paulo.
var simNow = time.Date(2026, 12, 1, 15, 0, 0, 0, time.UTC)

// startSim starts the simulator with its exchanges checked against BACEN's
// OpenAPI and returns it with a client.
func startSim(t *testing.T) (*pspsim.Server, *Client, *testkit.Conformance) {
	t.Helper()
	v := testkit.BACENValidator(t)
	sim := pspsim.New(pspsim.Options{Wrap: v.Wrap, Now: func() time.Time { return simNow }})
	require.NoError(t, sim.Start(context.Background()))
	t.Cleanup(sim.Close)
	o := sim.Options()
	c, err := New(Config{APIURL: sim.URL(), ClientID: o.ClientID, ClientSecret: o.ClientSecret,
		CertPEM: o.PKI.ClientCertPEM, KeyPEM: o.PKI.ClientKeyPEM, CAPEM: o.PKI.CAPEM, PixKey: o.PixKey,
		Log: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	return sim, c, v
}

// TestDueChargesAgainstTheSimulator creates, reads, pays and removes cobvs
// at the simulator over mutual TLS, every request and answer validated
// against BACEN's OpenAPI, and credits what the PSP says was paid.
func TestDueChargesAgainstTheSimulator(t *testing.T) {
	sim, c, v := startSim(t)
	ctx := context.Background()
	ids := []string{"pixgateDue000000000000000000000001", "pixgateDue000000000000000000000002", "pixgateDue000000000000000000000003"}
	for _, id := range ids {
		ch := dueCharge(t)
		ch.TxID = id
		code, err := c.CreateDueCharge(ctx, ch)
		require.NoError(t, err)
		require.NotEmpty(t, code)
	}
	pays, err := c.DueChargePayments(ctx, ids[0])
	require.NoError(t, err)
	require.Empty(t, pays)

	// Paid the day after the due date (a Thursday, a business day): what
	// pixgate computes is what the PSP charges.
	e2e, valor, err := sim.PayCobV(ctx, ids[0], "2026-12-11")
	require.NoError(t, err)
	want, ok := dueCharge(t).Due.AmountOn(100000, pixDate(t, "2026-12-11"))
	require.True(t, ok)
	require.Equal(t, int64(want), valor)
	pays, err = c.DueChargePayments(ctx, ids[0])
	require.NoError(t, err)
	// Dated the day paid for, at the simulator's time of day.
	require.Equal(t, []provider.Payment{{TxID: ids[0], Amount: want, EndToEndID: e2e, PaidAt: simNow.AddDate(0, 0, 10),
		PayerName: "Fulano de Tal", PayerDocument: "52998224725"}}, pays, "the pagador the simulator reports: the cobv's debtor")
	got, err := c.ConfirmPayment(ctx, e2e)
	require.NoError(t, err)
	require.Equal(t, pix.Amount(102033), got.Amount)

	require.NoError(t, c.CancelDueCharge(ctx, ids[1]))
	require.NoError(t, c.CancelDueCharge(ctx, ids[1]), "a cobv removed already (an earlier PATCH whose answer was lost) is removed")
	require.ErrorIs(t, c.CancelDueCharge(ctx, ids[0]), provider.ErrRejected, "a paid cobv cannot be removed")
	err = c.CancelDueCharge(ctx, "pixgateDue000000000000000000000009")
	require.ErrorIs(t, err, provider.ErrNotFound)
	_, err = c.DueChargePayments(ctx, "pixgateDue000000000000000000000009")
	require.ErrorIs(t, err, provider.ErrNotFound)

	// A due date before today is refused by the PSP: nothing created.
	past := dueCharge(t)
	past.TxID = "pixgateDue000000000000000000000004"
	past.Due.Date, past.Due.Discounts = pixDate(t, "2026-11-30"), nil
	_, err = c.CreateDueCharge(ctx, past)
	require.ErrorIs(t, err, provider.ErrRejected)

	v.Check(t)
}

// TestDueAmountsAgreeWithTheSimulator cross-checks pixgate's amount due
// (pix.Due) against the simulator's reading of BACEN's rules, on a random
// sample of terms registered through this client (so the mapping to
// modalidades is checked too) and on every day of each charge's life.
// Where the due date and the last day are business days the two agree to
// the centavo on every day; where BACEN moves one of them to the next
// business day, they agree up to the due date, the PSP never asks more,
// and it accepts every day pixgate does (docs/decisions.md).
func TestDueAmountsAgreeWithTheSimulator(t *testing.T) {
	sim, c, v := startSim(t)
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(35, 9))
	today := pix.DateOf(simNow.In(time.FixedZone("BRT", -3*60*60)))
	exact, moved := 0, 0
	for n := 0; n < 150; n++ {
		amount, due := randomTerms(rng, today)
		// Only terms pixgate accepts: the request form, parsed as the API does.
		body, err := json.Marshal(due)
		require.NoError(t, err)
		var req pix.DueRequest
		require.NoError(t, json.Unmarshal(body, &req))
		if _, issues := req.Parse(amount, today); len(issues) > 0 {
			continue
		}
		ch := provider.DueCharge{TxID: fmt.Sprintf("pixgateCross%020d", n), Amount: amount, Due: due,
			Payer: provider.DuePayer{Name: "Pagador", Document: "52998224725", City: "Recife", State: "PE", ZipCode: "50000000"}}
		_, err = c.CreateDueCharge(ctx, ch)
		require.NoError(t, err, "%s", body)

		business := pspsim.BusinessDay(due.Date.Start(time.UTC)) && pspsim.BusinessDay(due.LastDay().Start(time.UTC))
		if business {
			exact++
		} else {
			moved++
		}
		for day := today; !day.After(due.LastDay().AddDays(5)); day = day.AddDays(1) {
			ours, ourOK := due.On(amount, day)
			theirs, theirOK, err := sim.CobVDue(ch.TxID, day.String())
			require.NoError(t, err)
			what := fmt.Sprintf("R$ %s, %s, paid on %s", amount, body, day)
			switch {
			case business || !day.After(due.Date):
				require.Equal(t, ourOK, theirOK, what)
				require.Equal(t, pspsim.CobVAmount{Original: int64(ours.Original), Desconto: int64(ours.Discount),
					Multa: int64(ours.Fine), Juros: int64(ours.Interest), Final: int64(ours.Total)}, theirs, what)
			case ourOK:
				require.True(t, theirOK, what)
				require.LessOrEqual(t, theirs.Final, int64(ours.Total), what)
			}
		}
	}
	t.Logf("%d charges agreed on every day; %d had a date BACEN moves to a business day", exact, moved)
	require.Greater(t, exact, 30)
	require.Greater(t, moved, 30)
	v.Check(t)
}

// randomTerms draws an amount and terms due within four months of today,
// across Christmas, New Year and Carnival, with every kind of term.
func randomTerms(rng *rand.Rand, today pix.Date) (pix.Amount, pix.Due) {
	amounts := []pix.Amount{1, 2, 3, 99, 100, 101, 150, 1005, 4999, 100000, 123457, pix.MaxAmount}
	amount := amounts[rng.IntN(len(amounts))]
	if rng.IntN(2) == 0 {
		amount = pix.Amount(1 + rng.Int64N(int64(pix.MaxAmount)))
	}
	d := pix.Due{Date: today.AddDays(rng.IntN(120)), DaysAfter: rng.IntN(45)}
	if rng.IntN(10) == 0 {
		d.DaysAfter = pix.MaxDaysAfter
	}
	switch rng.IntN(3) {
	case 1:
		d.Fine.PercentBP = 1 + rng.Int64N(10000)
	case 2:
		d.Fine.Amount = pix.Amount(1 + rng.Int64N(int64(amount)))
	}
	if rng.IntN(3) > 0 {
		d.InterestBP = 1 + rng.Int64N(10000)
	}
	percent := rng.IntN(2) == 0
	until := d.Date.AddDays(-rng.IntN(20) - 9) // room for three steps
	for range rng.IntN(4) {
		until = until.AddDays(1 + rng.IntN(3))
		if until.After(d.Date) {
			break
		}
		disc := pix.DueDiscount{Until: until}
		if percent {
			disc.PercentBP = 1 + rng.Int64N(9999)
		} else {
			disc.Amount = pix.Amount(1 + rng.Int64N(int64(amount)))
		}
		d.Discounts = append(d.Discounts, disc)
	}
	return amount, d
}
