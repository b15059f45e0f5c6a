package apipix

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/provider"
)

// Pix Automático through BACEN's API Pix: recurrences (locrec, rec), their
// cycle charges (cobr), retries (retentativa) and the webhooks of both
// (webhookrec, webhookcobr).

// Account is the merchant's account at the PSP, as a cobr's recebedor
// names it.
type Account struct {
	// Branch is the agência, at most 4 characters (optional).
	Branch string
	// Number is the conta, 1–20 characters.
	Number string
	// Type is CORRENTE, POUPANCA or PAGAMENTO.
	Type string
}

// IsZero reports whether no account is configured.
func (a Account) IsZero() bool { return a == Account{} }

// check validates a configured account (the zero one is valid: none).
func (a Account) check() error {
	if a.IsZero() {
		return nil
	}
	switch {
	case a.Number == "" || len(a.Number) > 20:
		return errors.New("apipix: account: the number must be 1 to 20 characters")
	case len(a.Branch) > 4:
		return errors.New("apipix: account: the branch must be at most 4 characters")
	case a.Type != "CORRENTE" && a.Type != "POUPANCA" && a.Type != "PAGAMENTO":
		return errors.New("apipix: account: the type must be CORRENTE, POUPANCA or PAGAMENTO")
	}
	return nil
}

// Wire shapes, reduced to the fields used.

type recPessoa struct {
	CPF  string `json:"cpf,omitempty"`
	CNPJ string `json:"cnpj,omitempty"`
	Nome string `json:"nome"`
}

type recVinculo struct {
	Contrato string    `json:"contrato"`
	Devedor  recPessoa `json:"devedor"`
	Objeto   string    `json:"objeto,omitempty"`
}

type recCalendario struct {
	DataInicial   string `json:"dataInicial"`
	DataFinal     string `json:"dataFinal,omitempty"`
	Periodicidade string `json:"periodicidade"`
}

type recValor struct {
	ValorRec string `json:"valorRec"`
}

type recDadosJornada struct {
	TxID string `json:"txid"`
}

type recAtivacao struct {
	TipoJornada  string           `json:"tipoJornada,omitempty"`
	DadosJornada *recDadosJornada `json:"dadosJornada,omitempty"`
}

type recRequest struct {
	Vinculo             recVinculo    `json:"vinculo"`
	Calendario          recCalendario `json:"calendario"`
	Valor               recValor      `json:"valor"`
	PoliticaRetentativa string        `json:"politicaRetentativa"`
	Loc                 int64         `json:"loc"`
	Ativacao            *recAtivacao  `json:"ativacao,omitempty"`
}

type statusAtWire struct {
	Status string `json:"status"`
	Data   string `json:"data"`
}

type encerramentoWire struct {
	Cancelamento *struct {
		Solicitante string `json:"solicitante"`
	} `json:"cancelamento"`
	Rejeicao *struct {
		Codigo    string `json:"codigo"`
		Descricao string `json:"descricao"`
	} `json:"rejeicao"`
}

type recAnswer struct {
	IDRec        string            `json:"idRec"`
	Status       string            `json:"status"`
	Atualizacao  []statusAtWire    `json:"atualizacao"`
	Encerramento *encerramentoWire `json:"encerramento"`
	Ativacao     *recAtivacao      `json:"ativacao"`
	DadosQR      *struct {
		PixCopiaECola string `json:"pixCopiaECola"`
	} `json:"dadosQR"`
}

type locRecAnswer struct {
	ID    int64  `json:"id"`
	IDRec string `json:"idRec"`
}

type listParams struct {
	Paginacao struct {
		QuantidadeDePaginas int `json:"quantidadeDePaginas"`
	} `json:"paginacao"`
}

type cobrDevedor struct {
	CPF        string `json:"cpf,omitempty"`
	CNPJ       string `json:"cnpj,omitempty"`
	Nome       string `json:"nome,omitempty"`
	Logradouro string `json:"logradouro,omitempty"`
	Cidade     string `json:"cidade,omitempty"`
	UF         string `json:"uf,omitempty"`
	CEP        string `json:"cep,omitempty"`
}

type cobrRecebedor struct {
	Agencia   string `json:"agencia,omitempty"`
	Conta     string `json:"conta"`
	TipoConta string `json:"tipoConta"`
}

type cobrRequest struct {
	IDRec         string         `json:"idRec"`
	InfoAdicional string         `json:"infoAdicional,omitempty"`
	Calendario    cobrCalendario `json:"calendario"`
	Valor         cobValor       `json:"valor"`
	AjusteDiaUtil bool           `json:"ajusteDiaUtil"`
	Devedor       *cobrDevedor   `json:"devedor,omitempty"`
	Recebedor     cobrRecebedor  `json:"recebedor"`
}

type cobrCalendario struct {
	DataDeVencimento string `json:"dataDeVencimento"`
}

type cobrAnswer struct {
	IDRec       string         `json:"idRec"`
	TxID        string         `json:"txid"`
	Status      string         `json:"status"`
	Calendario  cobrCalendario `json:"calendario"`
	Valor       cobValor       `json:"valor"`
	Atualizacao []statusAtWire `json:"atualizacao"`
	Tentativas  []struct {
		DataLiquidacao string         `json:"dataLiquidacao"`
		Tipo           string         `json:"tipo"`
		Status         string         `json:"status"`
		Atualizacao    []statusAtWire `json:"atualizacao"`
		Rejeicao       *struct {
			Codigo    string `json:"codigo"`
			Descricao string `json:"descricao"`
		} `json:"rejeicao"`
	} `json:"tentativas"`
	Pix []pixWire `json:"pix"`
}

// BACEN's names of frequencies and retry policies.
var (
	periodicidade = map[pix.Frequency]string{pix.Weekly: "SEMANAL", pix.Monthly: "MENSAL", pix.Quarterly: "TRIMESTRAL",
		pix.Semiannual: "SEMESTRAL", pix.Annual: "ANUAL"}
	politica = map[pix.RetryPolicy]string{pix.RetryNone: "NAO_PERMITE", pix.RetryThreeInSevenDays: "PERMITE_3R_7D"}
)

// StartRecurrences registers the webhook URL with PUT /webhookrec and PUT
// /webhookcobr: by BACEN's callbacks the PSP then posts to <URL>/rec and
// <URL>/cobr, beside Start's <URL>/pix.
func (c *Client) StartRecurrences(ctx context.Context) error {
	if c.webhookURL == "" {
		return fmt.Errorf("%s: start recurrences: no webhook URL configured", c.name)
	}
	for _, kind := range []string{"rec", "cobr"} {
		err := c.Do(ctx, Request{
			Method:     http.MethodPut,
			URL:        c.api + "/webhook" + kind,
			Body:       map[string]string{"webhookUrl": c.webhookURL},
			Header:     c.webhookHeader.Clone(),
			Idempotent: true,
		}, nil)
		if err != nil {
			return fmt.Errorf("register webhook%s: %w", kind, err)
		}
	}
	c.log.Info("recurrence webhooks registered with the PSP")
	return nil
}

// recBody checks r and maps it to a rec on the location loc.
func (c *Client) recBody(r provider.Recurrence, loc int64) (recRequest, error) {
	p := r.Payer
	dev := recPessoa{Nome: p.Name}
	switch {
	case pix.ValidCPF(p.Document):
		dev.CPF = p.Document
	case pix.ValidCNPJ(p.Document):
		dev.CNPJ = p.Document
	default:
		return recRequest{}, errors.New("the payer's document must be a CPF or a CNPJ")
	}
	switch {
	case strings.TrimSpace(p.Name) == "" || utf8.RuneCountInString(p.Name) > pix.MaxRecurrencePayerName:
		return recRequest{}, errors.New("the payer's name must be 1 to 140 characters")
	case r.Contract == "" || utf8.RuneCountInString(r.Contract) > pix.MaxRecurrenceText ||
		utf8.RuneCountInString(r.Description) > pix.MaxRecurrenceText:
		return recRequest{}, errors.New("contract and description must be 1 to 35 characters")
	case periodicidade[r.Schedule.Frequency] == "" || r.Schedule.Start.IsZero():
		return recRequest{}, errors.New("a frequency and a start date are required")
	case !r.Schedule.End.IsZero() && r.Schedule.End.Before(r.Schedule.Start):
		return recRequest{}, errors.New("the end date is before the start date")
	case r.Amount <= 0:
		return recRequest{}, errors.New("amount must be positive")
	case politica[r.Retry] == "":
		return recRequest{}, errors.New("unknown retry policy")
	}
	body := recRequest{
		Vinculo:             recVinculo{Contrato: r.Contract, Devedor: dev, Objeto: r.Description},
		Calendario:          recCalendario{DataInicial: r.Schedule.Start.String(), Periodicidade: periodicidade[r.Schedule.Frequency]},
		Valor:               recValor{ValorRec: r.Amount.String()},
		PoliticaRetentativa: politica[r.Retry],
		Loc:                 loc,
	}
	if !r.Schedule.End.IsZero() {
		body.Calendario.DataFinal = r.Schedule.End.String()
	}
	if r.FirstPayment > 0 {
		body.Ativacao = &recAtivacao{DadosJornada: &recDadosJornada{TxID: r.FirstTxID}}
	}
	return body, nil
}

// CreateRecurrence registers r. Journey 3 (a first payment) creates the
// cob FirstTxID first with PUT /cob; then a location (POST /locrec) and the
// recurrence on it (POST /rec, naming the cob in
// ativacao.dadosJornada.txid); the QR code is GET /rec/{idRec}'s
// dadosQR.pixCopiaECola, read with ?txid= in journey 3 for the composite
// code of the cob and the recurrence.
func (c *Client) CreateRecurrence(ctx context.Context, r provider.Recurrence) (provider.RecurrenceCreated, error) {
	rejected := func(why string) (provider.RecurrenceCreated, error) {
		return provider.RecurrenceCreated{}, fmt.Errorf("%s: create recurrence: %s: %w", c.name, why, provider.ErrRejected)
	}
	if c.account.IsZero() {
		// Its cycles could never be charged: refuse it rather than take an
		// authorization nothing would collect.
		return provider.RecurrenceCreated{}, fmt.Errorf("%s: create recurrence: no receiving account configured: %w", c.name, provider.ErrUnsupported)
	}
	if _, err := c.recBody(r, 0); err != nil {
		return rejected(err.Error())
	}
	if r.FirstPayment > 0 {
		if !validTxID(r.FirstTxID) {
			return rejected("the first payment's txid must be 26 to 35 letters and digits")
		}
		_, err := c.CreateCharge(ctx, provider.Charge{TxID: r.FirstTxID, Amount: r.FirstPayment, TTL: r.FirstTTL,
			PayerName: r.Payer.Name, PayerDocument: r.Payer.Document, Question: r.Description})
		if err != nil {
			return provider.RecurrenceCreated{}, fmt.Errorf("create recurrence: first payment: %w", err)
		}
	}
	// A second location, should a retry make one, serves nothing: harmless.
	var loc locRecAnswer
	if err := c.Do(ctx, Request{Method: http.MethodPost, URL: c.api + "/locrec", Idempotent: true}, &loc); err != nil {
		return provider.RecurrenceCreated{}, fmt.Errorf("create recurrence: location: %w", err)
	}
	if loc.ID <= 0 {
		return provider.RecurrenceCreated{}, fmt.Errorf("%s: create recurrence: location without an id", c.name)
	}
	body, err := c.recBody(r, loc.ID)
	if err != nil {
		return rejected(err.Error())
	}
	ctxCall, cancel := context.WithTimeout(ctx, c.callTimeout)
	defer cancel()
	var ans recAnswer
	unknown, err := c.exec(ctxCall, Request{Method: http.MethodPost, URL: c.api + "/rec", Body: body, Idempotent: true}, &ans)
	if err != nil {
		if !unknown || !errors.Is(err, provider.ErrRejected) {
			return provider.RecurrenceCreated{}, fmt.Errorf("create recurrence: %w", err)
		}
		// The retry was refused, perhaps because the first attempt did
		// create it: the location then names its recurrence.
		var got locRecAnswer
		if _, gerr := c.exec(ctxCall, Request{Method: http.MethodGet, URL: c.api + "/locrec/" + strconv.FormatInt(loc.ID, 10), Idempotent: true},
			&got); gerr != nil || !validIDRec(got.IDRec) {
			return provider.RecurrenceCreated{}, fmt.Errorf("create recurrence: %w", err)
		}
		c.log.Info("rec found on its location after a retried POST was refused", "idRec", got.IDRec)
		ans.IDRec = got.IDRec
	}
	if !validIDRec(ans.IDRec) {
		return provider.RecurrenceCreated{}, fmt.Errorf("%s: create recurrence: idRec %q is not 29 letters and digits", c.name, truncate(ans.IDRec, 40))
	}
	u := c.recURL(ans.IDRec)
	if r.FirstPayment > 0 {
		u += "?txid=" + url.QueryEscape(r.FirstTxID)
	}
	var full recAnswer
	if err := c.Do(ctx, Request{Method: http.MethodGet, URL: u, Idempotent: true}, &full); err != nil {
		return provider.RecurrenceCreated{}, fmt.Errorf("create recurrence %s: read its QR code: %w", ans.IDRec, err)
	}
	if full.DadosQR == nil || full.DadosQR.PixCopiaECola == "" {
		return provider.RecurrenceCreated{}, fmt.Errorf("%s: create recurrence %s: answer without dadosQR.pixCopiaECola", c.name, ans.IDRec)
	}
	return provider.RecurrenceCreated{ID: ans.IDRec, QRCode: full.DadosQR.PixCopiaECola}, nil
}

// Recurrence reads GET /rec/{idRec}.
func (c *Client) Recurrence(ctx context.Context, id string) (provider.RecurrenceState, error) {
	if !validIDRec(id) {
		return provider.RecurrenceState{}, fmt.Errorf("%s: recurrence %q: not an idRec: %w", c.name, truncate(id, 40), provider.ErrNotFound)
	}
	var ans recAnswer
	if err := c.Do(ctx, Request{Method: http.MethodGet, URL: c.recURL(id), Idempotent: true}, &ans); err != nil {
		return provider.RecurrenceState{}, fmt.Errorf("recurrence: %w", err)
	}
	if ans.IDRec != id {
		return provider.RecurrenceState{}, fmt.Errorf("%s: recurrence %s: answer is about %q", c.name, id, truncate(ans.IDRec, 40))
	}
	st, err := toRecState(ans)
	if err != nil {
		return provider.RecurrenceState{}, fmt.Errorf("%s: recurrence %s: %w", c.name, id, err)
	}
	return st, nil
}

// RecurrencesChanged reads GET /rec over [from, to], every page; an item
// that does not validate is logged and skipped.
func (c *Client) RecurrencesChanged(ctx context.Context, from, to time.Time) ([]provider.RecurrenceState, error) {
	var out []provider.RecurrenceState
	err := c.eachPage(ctx, "/rec", from, to, func(page []byte) (int, error) {
		var ans struct {
			Parametros listParams  `json:"parametros"`
			Recs       []recAnswer `json:"recs"`
		}
		if err := json.Unmarshal(page, &ans); err != nil {
			return 0, fmt.Errorf("decode: %w", err)
		}
		for _, w := range ans.Recs {
			st, err := toRecState(w)
			if err != nil {
				c.log.Error("listed recurrence skipped: invalid", "idRec", truncate(w.IDRec, 40), "error", err.Error())
				continue
			}
			out = append(out, st)
		}
		return ans.Parametros.Paginacao.QuantidadeDePaginas, nil
	})
	if err != nil {
		return nil, fmt.Errorf("recurrences changed: %w", err)
	}
	return out, nil
}

// CancelRecurrence revises the rec with PATCH /rec/{idRec} {"status":
// "CANCELADA"}; a refusal is read back and a rec cancelled already is
// success.
func (c *Client) CancelRecurrence(ctx context.Context, id string) error {
	if !validIDRec(id) {
		return fmt.Errorf("%s: cancel recurrence %q: not an idRec: %w", c.name, truncate(id, 40), provider.ErrNotFound)
	}
	err := c.Do(ctx, Request{Method: http.MethodPatch, URL: c.recURL(id), Body: map[string]string{"status": "CANCELADA"}, Idempotent: true}, nil)
	if errors.Is(err, provider.ErrRejected) {
		var ans recAnswer
		if gerr := c.Do(ctx, Request{Method: http.MethodGet, URL: c.recURL(id), Idempotent: true}, &ans); gerr == nil && ans.Status == "CANCELADA" {
			return nil
		}
	}
	if err != nil {
		return fmt.Errorf("cancel recurrence: %w", err)
	}
	return nil
}

// toRecState maps a rec to pixgate's vocabulary.
func toRecState(w recAnswer) (provider.RecurrenceState, error) {
	if !validIDRec(w.IDRec) {
		return provider.RecurrenceState{}, fmt.Errorf("idRec %q is not 29 letters and digits", truncate(w.IDRec, 40))
	}
	st := provider.RecurrenceState{ID: w.IDRec}
	switch w.Status {
	case "CRIADA":
		st.Status = pix.RecurrenceCreated
	case "APROVADA":
		st.Status = pix.RecurrenceApproved
	case "REJEITADA":
		st.Status = pix.RecurrenceRejected
	case "EXPIRADA":
		st.Status = pix.RecurrenceExpired
	case "CANCELADA":
		st.Status, st.CancelledBy = pix.RecurrenceCancelled, pix.CancelledByMerchant
		if e := w.Encerramento; e != nil && e.Cancelamento != nil &&
			(e.Cancelamento.Solicitante == "USUARIO_PAGADOR" || e.Cancelamento.Solicitante == "PSP_PAGADOR") {
			st.CancelledBy = pix.CancelledByPayer
		}
	default:
		return provider.RecurrenceState{}, fmt.Errorf("unknown recurrence status %q", truncate(w.Status, 40))
	}
	if a := w.Ativacao; a != nil && a.DadosJornada != nil {
		st.FirstTxID = a.DadosJornada.TxID
	}
	st.UpdatedAt = lastUpdate(w.Atualizacao)
	return st, nil
}

// lastUpdate is the latest time in a status history (zero when none reads).
func lastUpdate(u []statusAtWire) time.Time {
	var last time.Time
	for _, x := range u {
		if t, err := time.Parse(time.RFC3339Nano, x.Data); err == nil && t.After(last) {
			last = t
		}
	}
	return last
}

// cobrBody checks ch and maps it to a cobr: ajusteDiaUtil true (a due date
// on a weekend or holiday is debited the next business day), the devedor's
// identity and address, the merchant's account as recebedor.
func (c *Client) cobrBody(ch provider.CycleCharge) (cobrRequest, error) {
	switch {
	case !validTxID(ch.TxID):
		return cobrRequest{}, errors.New("txid must be 26 to 35 letters and digits")
	case !validIDRec(ch.RecurrenceID):
		return cobrRequest{}, errors.New("the recurrence id must be 29 letters and digits")
	case ch.DueDate.IsZero():
		return cobrRequest{}, errors.New("a due date is required")
	case ch.Amount <= 0:
		return cobrRequest{}, errors.New("amount must be positive")
	}
	p := ch.Payer
	dev := &cobrDevedor{Nome: truncate(p.Name, pix.MaxRecurrencePayerName), Logradouro: truncate(street(p.Street, p.Number), maxAddress),
		Cidade: truncate(p.City, maxAddress), UF: p.State, CEP: p.ZipCode}
	switch {
	case pix.ValidCPF(p.Document):
		dev.CPF = p.Document
	case pix.ValidCNPJ(p.Document):
		dev.CNPJ = p.Document
	case p.Document != "":
		return cobrRequest{}, errors.New("the payer's document must be a CPF or a CNPJ")
	}
	if dev.UF != "" && !pix.ValidUF(dev.UF) || dev.CEP != "" && !pix.ValidCEP(dev.CEP) {
		return cobrRequest{}, errors.New("the payer's UF or CEP is malformed")
	}
	if *dev == (cobrDevedor{}) {
		dev = nil
	}
	return cobrRequest{
		IDRec:         ch.RecurrenceID,
		InfoAdicional: truncate(ch.Info, maxText),
		Calendario:    cobrCalendario{DataDeVencimento: ch.DueDate.String()},
		Valor:         cobValor{Original: ch.Amount.String()},
		AjusteDiaUtil: true,
		Devedor:       dev,
		Recebedor:     cobrRecebedor{Agencia: c.account.Branch, Conta: c.account.Number, TipoConta: c.account.Type},
	}, nil
}

// CreateCycleCharge creates the cobr with PUT /cobr/{txid}. A refusal is
// read back (GET /cobr): the same cobr created already, by an earlier PUT
// whose answer was lost or by a node that died before recording it, is
// success.
func (c *Client) CreateCycleCharge(ctx context.Context, ch provider.CycleCharge) error {
	if c.account.IsZero() {
		return fmt.Errorf("%s: create cycle charge %s: no receiving account configured: %w", c.name, truncate(ch.TxID, 40), provider.ErrUnsupported)
	}
	body, err := c.cobrBody(ch)
	if err != nil {
		return fmt.Errorf("%s: create cycle charge %s: %s: %w", c.name, truncate(ch.TxID, 40), err.Error(), provider.ErrRejected)
	}
	err = c.Do(ctx, Request{Method: http.MethodPut, URL: c.cobrURL(ch.TxID), Body: body, Idempotent: true}, nil)
	if errors.Is(err, provider.ErrRejected) {
		var got cobrAnswer
		if gerr := c.Do(ctx, Request{Method: http.MethodGet, URL: c.cobrURL(ch.TxID), Idempotent: true}, &got); gerr == nil &&
			got.IDRec == ch.RecurrenceID && got.Calendario.DataDeVencimento == body.Calendario.DataDeVencimento &&
			sameAmount(got.Valor.Original, ch.Amount) {
			c.log.Info("cobr found after a PUT was refused", "txid", ch.TxID)
			return nil
		}
	}
	if err != nil {
		return fmt.Errorf("create cycle charge: %w", err)
	}
	return nil
}

// CycleCharge reads GET /cobr/{txid}.
func (c *Client) CycleCharge(ctx context.Context, txid string) (provider.CycleState, error) {
	var ans cobrAnswer
	if err := c.Do(ctx, Request{Method: http.MethodGet, URL: c.cobrURL(txid), Idempotent: true}, &ans); err != nil {
		return provider.CycleState{}, fmt.Errorf("cycle charge: %w", err)
	}
	if ans.TxID != txid {
		return provider.CycleState{}, fmt.Errorf("%s: cycle charge %s: answer is about %q", c.name, txid, truncate(ans.TxID, 40))
	}
	st, err := toCycleState(ans)
	if err != nil {
		return provider.CycleState{}, fmt.Errorf("%s: cycle charge %s: %w", c.name, txid, err)
	}
	return st, nil
}

// CycleChargesChanged reads GET /cobr over [from, to], every page; an
// item that does not validate is logged and skipped.
func (c *Client) CycleChargesChanged(ctx context.Context, from, to time.Time) ([]provider.CycleState, error) {
	var out []provider.CycleState
	err := c.eachPage(ctx, "/cobr", from, to, func(page []byte) (int, error) {
		var ans struct {
			Parametros listParams   `json:"parametros"`
			CobsR      []cobrAnswer `json:"cobsr"`
		}
		if err := json.Unmarshal(page, &ans); err != nil {
			return 0, fmt.Errorf("decode: %w", err)
		}
		for _, w := range ans.CobsR {
			st, err := toCycleState(w)
			if err != nil {
				c.log.Error("listed cycle charge skipped: invalid", "txid", truncate(w.TxID, 40), "error", err.Error())
				continue
			}
			out = append(out, st)
		}
		return ans.Parametros.Paginacao.QuantidadeDePaginas, nil
	})
	if err != nil {
		return nil, fmt.Errorf("cycle charges changed: %w", err)
	}
	return out, nil
}

// RetryCycleCharge asks for a new attempt with POST
// /cobr/{txid}/retentativa/{day}. A refusal is read back: a retry on day
// already scheduled (an earlier POST whose answer was lost) is success.
func (c *Client) RetryCycleCharge(ctx context.Context, txid string, day pix.Date) (provider.CycleState, error) {
	if !validTxID(txid) || day.IsZero() {
		return provider.CycleState{}, fmt.Errorf("%s: retry cycle charge %q: bad txid or day: %w", c.name, truncate(txid, 40), provider.ErrRejected)
	}
	var ans cobrAnswer
	err := c.Do(ctx, Request{Method: http.MethodPost, URL: c.cobrURL(txid) + "/retentativa/" + day.String(), Idempotent: true}, &ans)
	if errors.Is(err, provider.ErrRejected) {
		if st, gerr := c.CycleCharge(ctx, txid); gerr == nil {
			if n := len(st.Attempts); n > 0 && st.Attempts[n-1].Retry && st.Attempts[n-1].Date == day && st.Attempts[n-1].Status != provider.AttemptFailed {
				return st, nil
			}
		}
	}
	if err != nil {
		return provider.CycleState{}, fmt.Errorf("retry cycle charge: %w", err)
	}
	st, err := toCycleState(ans)
	if err != nil {
		return provider.CycleState{}, fmt.Errorf("%s: retry cycle charge %s: %w", c.name, txid, err)
	}
	return st, nil
}

// CancelCycleCharge revises the cobr with PATCH /cobr/{txid} {"status":
// "CANCELADA"}; a refusal is read back and a cobr cancelled already is
// success.
func (c *Client) CancelCycleCharge(ctx context.Context, txid string) error {
	err := c.Do(ctx, Request{Method: http.MethodPatch, URL: c.cobrURL(txid), Body: map[string]string{"status": "CANCELADA"}, Idempotent: true}, nil)
	if errors.Is(err, provider.ErrRejected) {
		var ans cobrAnswer
		if gerr := c.Do(ctx, Request{Method: http.MethodGet, URL: c.cobrURL(txid), Idempotent: true}, &ans); gerr == nil && ans.Status == "CANCELADA" {
			return nil
		}
	}
	if err != nil {
		return fmt.Errorf("cancel cycle charge: %w", err)
	}
	return nil
}

// toCycleState maps a cobr to pixgate's vocabulary.
func toCycleState(w cobrAnswer) (provider.CycleState, error) {
	if !validTxID(w.TxID) {
		return provider.CycleState{}, fmt.Errorf("txid %q is not 26 to 35 letters and digits", truncate(w.TxID, 40))
	}
	st := provider.CycleState{TxID: w.TxID, RecurrenceID: w.IDRec}
	if d, err := pix.ParseDate(w.Calendario.DataDeVencimento); err == nil {
		st.DueDate = d
	}
	switch w.Status {
	case "CRIADA", "ATIVA":
		st.Status = provider.CyclePending
	case "CONCLUIDA":
		st.Status = provider.CyclePaid
	case "EXPIRADA", "REJEITADA":
		st.Status = provider.CycleFailed
	case "CANCELADA":
		st.Status = provider.CycleCancelled
	default:
		return provider.CycleState{}, fmt.Errorf("unknown cobr status %q", truncate(w.Status, 40))
	}
	updated := lastUpdate(w.Atualizacao)
	for _, t := range w.Tentativas {
		a := provider.Attempt{Retry: t.Tipo == "NTAG"}
		d, err := pix.ParseDate(t.DataLiquidacao)
		if err != nil {
			return provider.CycleState{}, fmt.Errorf("attempt: dataLiquidacao %q is not a date", truncate(t.DataLiquidacao, 20))
		}
		a.Date = d
		switch t.Status {
		case "SOLICITADA", "AGENDADA":
			a.Status = provider.AttemptScheduled
		case "PAGA":
			a.Status = provider.AttemptPaid
		case "REJEITADA", "EXPIRADA":
			a.Status = provider.AttemptFailed
		case "CANCELADA":
			a.Status = provider.AttemptCancelled
		default:
			return provider.CycleState{}, fmt.Errorf("unknown attempt status %q", truncate(t.Status, 40))
		}
		if r := t.Rejeicao; r != nil {
			a.Reason = truncate(strings.TrimSpace(r.Codigo+" "+r.Descricao), 200)
		}
		if u := lastUpdate(t.Atualizacao); u.After(updated) {
			updated = u
		}
		st.Attempts = append(st.Attempts, a)
	}
	st.UpdatedAt = updated
	for _, p := range w.Pix {
		if p.TxID == "" {
			p.TxID = w.TxID
		}
		if p.TxID != w.TxID {
			return provider.CycleState{}, fmt.Errorf("a Pix for txid %q", truncate(p.TxID, 40))
		}
		pay, err := toPayment(p)
		if err != nil {
			return provider.CycleState{}, err
		}
		st.Payments = append(st.Payments, pay)
	}
	return st, nil
}

// eachPage reads GET path?inicio&fim&paginacao… page by page until the
// page count read by do says there are no more.
func (c *Client) eachPage(ctx context.Context, path string, from, to time.Time, do func(page []byte) (pages int, err error)) error {
	for page := 0; page < maxPages; page++ {
		q := url.Values{}
		q.Set("inicio", from.UTC().Truncate(time.Second).Format(time.RFC3339))
		q.Set("fim", to.UTC().Truncate(time.Second).Format(time.RFC3339))
		q.Set("paginacao.paginaAtual", strconv.Itoa(page))
		q.Set("paginacao.itensPorPagina", strconv.Itoa(pageSize))
		var raw json.RawMessage
		if err := c.Do(ctx, Request{Method: http.MethodGet, URL: c.api + path + "?" + q.Encode(), Idempotent: true}, &raw); err != nil {
			return fmt.Errorf("page %d: %w", page, err)
		}
		pages, err := do(raw)
		if err != nil {
			return fmt.Errorf("%s: %s page %d: %w", c.name, path, page, err)
		}
		if page+1 >= pages {
			return nil
		}
	}
	return fmt.Errorf("%s: %s: more than %d pages", c.name, path, maxPages)
}

func (c *Client) recURL(id string) string    { return c.api + "/rec/" + url.PathEscape(id) }
func (c *Client) cobrURL(txid string) string { return c.api + "/cobr/" + url.PathEscape(txid) }

// validIDRec: an idRec is 29 letters and digits.
func validIDRec(s string) bool { return len(s) == 29 && allAlnum(s) }

var _ provider.Recurrer = (*Client)(nil)
