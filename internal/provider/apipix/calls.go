package apipix

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/provider"
)

// Wire shapes of the API Pix (OpenAPI 2.9.0), reduced to the fields used.
// Decoding ignores every other field.

type cobRequest struct {
	Calendario         calendario `json:"calendario"`
	Devedor            *devedor   `json:"devedor,omitempty"`
	Valor              cobValor   `json:"valor"`
	Chave              string     `json:"chave"`
	SolicitacaoPagador string     `json:"solicitacaoPagador,omitempty"`
}

type calendario struct {
	Expiracao int64 `json:"expiracao"`
}

type devedor struct {
	CPF  string `json:"cpf,omitempty"`
	CNPJ string `json:"cnpj,omitempty"`
	Nome string `json:"nome"`
}

type cobValor struct {
	Original string `json:"original"`
}

type cobAnswer struct {
	TxID          string    `json:"txid"`
	Status        string    `json:"status"`
	Valor         cobValor  `json:"valor"`
	PixCopiaECola string    `json:"pixCopiaECola"`
	Pix           []pixWire `json:"pix"`
}

type pixWire struct {
	EndToEndID string          `json:"endToEndId"`
	TxID       string          `json:"txid"`
	Valor      string          `json:"valor"`
	Horario    string          `json:"horario"`
	Devolucoes []devolucaoWire `json:"devolucoes"`
	// Pagador is who paid. API Pix 2.0 had it; later versions dropped it
	// from the schema (BACEN, for privacy), but PSPs such as Efí still
	// send it, so it is read when present.
	Pagador *pagadorWire `json:"pagador"`
	// GnExtras is where Efí also reports the payer.
	GnExtras *struct {
		Pagador *pagadorWire `json:"pagador"`
	} `json:"gnExtras"`
}

type pagadorWire struct {
	CPF  string `json:"cpf"`
	CNPJ string `json:"cnpj"`
	Nome string `json:"nome"`
}

type devolucaoWire struct {
	ID       string `json:"id"`
	RtrID    string `json:"rtrId"`
	Valor    string `json:"valor"`
	Natureza string `json:"natureza"`
	Status   string `json:"status"`
}

type devolucaoRequest struct {
	Valor     string `json:"valor"`
	Descricao string `json:"descricao,omitempty"`
}

type pixList struct {
	Parametros struct {
		Paginacao struct {
			PaginaAtual         int `json:"paginaAtual"`
			QuantidadeDePaginas int `json:"quantidadeDePaginas"`
		} `json:"paginacao"`
	} `json:"parametros"`
	// Pix holds the items, as real PSPs send them (the OpenAPI's schema
	// names them cobs, a known slip of its version 2.9.0).
	Pix []pixWire `json:"pix"`
}

const (
	pageSize = 100
	// maxPages stops a PSP whose page count never ends from holding the
	// poller forever: 1000 pages of 100 is far beyond a minute's Pix.
	maxPages = 1000
)

// Start registers the webhook URL with PUT /webhook/{chave}. 200, 201 and
// 204, with or without a body, are success.
func (c *Client) Start(ctx context.Context) error {
	if c.webhookURL == "" {
		return fmt.Errorf("%s: start: no webhook URL configured", c.name)
	}
	err := c.Do(ctx, Request{
		Method:     http.MethodPut,
		URL:        c.api + "/webhook/" + url.PathEscape(c.pixKey),
		Body:       map[string]string{"webhookUrl": c.webhookURL},
		Header:     c.webhookHeader.Clone(),
		Idempotent: true, // registering the same URL twice changes nothing
	}, nil)
	if err != nil {
		return fmt.Errorf("register webhook: %w", err)
	}
	c.log.Info("webhook registered with the PSP")
	return nil
}

// CreateCharge creates the cob ch.TxID with PUT /cob/{txid} and returns its
// pixCopiaECola verbatim, all within the charge timeout.
func (c *Client) CreateCharge(ctx context.Context, ch provider.Charge) (string, error) {
	if !validTxID(ch.TxID) {
		return "", fmt.Errorf("%s: create charge: txid must be 26 to 35 letters and digits: %w", c.name, provider.ErrRejected)
	}
	if ch.Amount <= 0 {
		return "", fmt.Errorf("%s: create charge %s: amount must be positive: %w", c.name, ch.TxID, provider.ErrRejected)
	}
	ttl := int64(ch.TTL / time.Second)
	if ttl < 1 {
		return "", fmt.Errorf("%s: create charge %s: TTL must be at least a second: %w", c.name, ch.TxID, provider.ErrRejected)
	}
	body := cobRequest{
		Calendario:         calendario{Expiracao: ttl},
		Valor:              cobValor{Original: ch.Amount.String()},
		Chave:              c.pixKey,
		SolicitacaoPagador: truncate(ch.Question, maxText),
	}
	if ch.PayerDocument != "" {
		d := &devedor{Nome: ch.PayerName}
		if len(ch.PayerDocument) == 11 {
			d.CPF = ch.PayerDocument
		} else {
			d.CNPJ = ch.PayerDocument
		}
		body.Devedor = d
	}
	ctx, cancel := context.WithTimeout(ctx, c.chargeTimeout)
	defer cancel()
	u := c.api + "/cob/" + url.PathEscape(ch.TxID)
	var ans cobAnswer
	// PUT /cob/{txid} is idempotent by txid: a retry after an unknown
	// outcome at worst meets the cob the first attempt created.
	unknown, err := c.exec(ctx, Request{Method: http.MethodPut, URL: u, Body: body, Idempotent: true}, &ans)
	if err != nil {
		if !unknown || !errors.Is(err, provider.ErrRejected) {
			return "", fmt.Errorf("create charge: %w", err)
		}
		// The retry was refused, perhaps because the first attempt did
		// create the cob: if it exists with our amount, it is ours.
		var got cobAnswer
		if _, gerr := c.exec(ctx, Request{Method: http.MethodGet, URL: u, Idempotent: true}, &got); gerr != nil ||
			got.Valor.Original == "" || !sameAmount(got.Valor.Original, ch.Amount) || got.PixCopiaECola == "" {
			return "", fmt.Errorf("create charge: %w", err)
		}
		c.log.Info("cob found after a retried PUT was refused", "txid", ch.TxID)
		ans = got
	}
	if ans.PixCopiaECola == "" {
		return "", fmt.Errorf("%s: create charge %s: answer without pixCopiaECola", c.name, ch.TxID)
	}
	return ans.PixCopiaECola, nil
}

// ChargePayments reads GET /cob/{txid} and returns the Pix paid to it.
func (c *Client) ChargePayments(ctx context.Context, txid string) ([]provider.Payment, error) {
	var ans cobAnswer
	if err := c.Do(ctx, Request{Method: http.MethodGet, URL: c.api + "/cob/" + url.PathEscape(txid), Idempotent: true}, &ans); err != nil {
		return nil, fmt.Errorf("charge payments: %w", err)
	}
	out := make([]provider.Payment, 0, len(ans.Pix))
	for _, w := range ans.Pix {
		if w.TxID == "" {
			w.TxID = txid
		}
		if w.TxID != txid {
			return nil, fmt.Errorf("%s: charge payments %s: a Pix for txid %q", c.name, txid, w.TxID)
		}
		p, err := toPayment(w)
		if err != nil {
			return nil, fmt.Errorf("%s: charge payments %s: %w", c.name, txid, err)
		}
		out = append(out, p)
	}
	return out, nil
}

// CancelCharge removes the cob with PATCH /cob/{txid}. A cob already
// removed is what was asked: the API Pix refuses to revise it (400), which
// is what an earlier PATCH whose answer was lost leaves behind, so a
// refusal is read back (GET /cob) and a removed cob is success.
func (c *Client) CancelCharge(ctx context.Context, txid string) error {
	err := c.Do(ctx, Request{
		Method:     http.MethodPatch,
		URL:        c.api + "/cob/" + url.PathEscape(txid),
		Body:       map[string]string{"status": "REMOVIDA_PELO_USUARIO_RECEBEDOR"},
		Idempotent: true,
	}, nil)
	if errors.Is(err, provider.ErrRejected) {
		var ans cobAnswer
		if gerr := c.Do(ctx, Request{Method: http.MethodGet, URL: c.api + "/cob/" + url.PathEscape(txid), Idempotent: true}, &ans); gerr == nil &&
			(ans.Status == "REMOVIDA_PELO_USUARIO_RECEBEDOR" || ans.Status == "REMOVIDA_PELO_PSP") {
			return nil
		}
	}
	if err != nil {
		return fmt.Errorf("cancel charge: %w", err)
	}
	return nil
}

// ConfirmPayment reads GET /pix/{e2eid}.
func (c *Client) ConfirmPayment(ctx context.Context, e2eid string) (provider.Payment, error) {
	var w pixWire
	if err := c.Do(ctx, Request{Method: http.MethodGet, URL: c.api + "/pix/" + url.PathEscape(e2eid), Idempotent: true}, &w); err != nil {
		return provider.Payment{}, fmt.Errorf("confirm payment: %w", err)
	}
	if w.EndToEndID != e2eid {
		return provider.Payment{}, fmt.Errorf("%s: confirm payment %s: answer is about %q", c.name, e2eid, w.EndToEndID)
	}
	p, err := toPayment(w)
	if err != nil {
		return provider.Payment{}, fmt.Errorf("%s: confirm payment %s: %w", c.name, e2eid, err)
	}
	return p, nil
}

// Received reads GET /pix over [from, to], every page. The API's window
// is whole seconds and inclusive at both ends, so a Pix on a boundary may
// be listed by two consecutive readings; crediting is idempotent by
// end-to-end id, and none is missed. An item that does not validate is
// logged and skipped, so that one malformed Pix cannot stall every later
// reading.
func (c *Client) Received(ctx context.Context, from, to time.Time) ([]provider.Payment, error) {
	return c.listPix(ctx, "received", from, to, nil)
}

// ReceivedWithReturns reads GET /pix?devolucaoPresente=true over [from,
// to], every page: the received Pix having a devolução, each with its
// devoluções (ids as the PSP gives them, valor and natureza), which is how
// a MED return nobody announced is found when its webhook was lost. The
// window and the skipping of malformed items are Received's.
func (c *Client) ReceivedWithReturns(ctx context.Context, from, to time.Time) ([]provider.Payment, error) {
	return c.listPix(ctx, "received with returns", from, to, url.Values{"devolucaoPresente": {"true"}})
}

// listPix reads GET /pix over [from, to] with the filters extra, every
// page; what names the reading in errors.
func (c *Client) listPix(ctx context.Context, what string, from, to time.Time, extra url.Values) ([]provider.Payment, error) {
	var out []provider.Payment
	for page := 0; page < maxPages; page++ {
		q := url.Values{}
		for k, v := range extra {
			q[k] = v
		}
		q.Set("inicio", from.UTC().Truncate(time.Second).Format(time.RFC3339))
		q.Set("fim", to.UTC().Truncate(time.Second).Format(time.RFC3339))
		q.Set("paginacao.paginaAtual", strconv.Itoa(page))
		q.Set("paginacao.itensPorPagina", strconv.Itoa(pageSize))
		var ans pixList
		if err := c.Do(ctx, Request{Method: http.MethodGet, URL: c.api + "/pix?" + q.Encode(), Idempotent: true}, &ans); err != nil {
			return nil, fmt.Errorf("%s (page %d): %w", what, page, err)
		}
		for _, w := range ans.Pix {
			p, err := toPayment(w)
			if err != nil {
				c.log.Error("received Pix skipped: invalid", "endToEndId", truncate(w.EndToEndID, 40), "error", err.Error())
				continue
			}
			out = append(out, p)
		}
		if page+1 >= ans.Parametros.Paginacao.QuantidadeDePaginas {
			return out, nil
		}
	}
	return nil, fmt.Errorf("%s: %s: more than %d pages", c.name, what, maxPages)
}

// Send asks for a refund with PUT /pix/{e2eid}/devolucao/{id}, once: its
// outcome, when unknown, is learnt with Status before any resend. Payouts
// are not part of the API Pix.
func (c *Client) Send(ctx context.Context, t provider.Transfer) (provider.TransferState, error) {
	if !t.Refund {
		return provider.TransferState{}, fmt.Errorf("%s: payout %s: %w", c.name, t.ID, provider.ErrUnsupported)
	}
	return c.SendRefund(ctx, t)
}

// Status reads a refund with GET /pix/{e2eid}/devolucao/{id}.
func (c *Client) Status(ctx context.Context, t provider.Transfer) (provider.TransferState, error) {
	if !t.Refund {
		return provider.TransferState{}, fmt.Errorf("%s: payout %s: %w", c.name, t.ID, provider.ErrUnsupported)
	}
	return c.RefundStatus(ctx, t)
}

// SendRefund is Send for a refund, for the providers built on this client.
func (c *Client) SendRefund(ctx context.Context, t provider.Transfer) (provider.TransferState, error) {
	u, id, err := c.refundURL(t)
	if err != nil {
		return provider.TransferState{}, err
	}
	if t.Amount <= 0 {
		return provider.TransferState{}, fmt.Errorf("%s: refund %s: amount must be positive: %w", c.name, t.ID, provider.ErrRejected)
	}
	var w devolucaoWire
	err = c.Do(ctx, Request{
		Method: http.MethodPut,
		URL:    u,
		Body:   devolucaoRequest{Valor: t.Amount.String(), Descricao: truncate(t.Description, maxText)},
		// Never retried: the API refuses a reused devolução id, so a
		// retry could only turn an unknown outcome into a false refusal.
		Idempotent: false,
	}, &w)
	if err != nil {
		return provider.TransferState{}, fmt.Errorf("send refund %s: %w", t.ID, err)
	}
	return c.refundState(t, id, w)
}

// RefundStatus is Status for a refund, for the providers built on this
// client.
func (c *Client) RefundStatus(ctx context.Context, t provider.Transfer) (provider.TransferState, error) {
	u, id, err := c.refundURL(t)
	if err != nil {
		return provider.TransferState{}, err
	}
	var w devolucaoWire
	if err := c.Do(ctx, Request{Method: http.MethodGet, URL: u, Idempotent: true}, &w); err != nil {
		return provider.TransferState{}, fmt.Errorf("refund status %s: %w", t.ID, err)
	}
	return c.refundState(t, id, w)
}

func (c *Client) refundURL(t provider.Transfer) (u, id string, err error) {
	id = provider.HexID(t.ID)
	if !validHexID(id) {
		return "", "", fmt.Errorf("%s: refund %q: id is not a UUID: %w", c.name, t.ID, provider.ErrRejected)
	}
	if !provider.ValidEndToEnd(t.PaymentE2E) {
		return "", "", fmt.Errorf("%s: refund %s: payment end-to-end id %q is not 32 letters and digits: %w",
			c.name, t.ID, truncate(t.PaymentE2E, 40), provider.ErrRejected)
	}
	return c.api + "/pix/" + url.PathEscape(t.PaymentE2E) + "/devolucao/" + url.PathEscape(id), id, nil
}

func (c *Client) refundState(t provider.Transfer, id string, w devolucaoWire) (provider.TransferState, error) {
	if w.ID != "" && !strings.EqualFold(w.ID, id) {
		return provider.TransferState{}, fmt.Errorf("%s: refund %s: answer is about devolução %q", c.name, t.ID, w.ID)
	}
	st, err := refundStatus(w.Status)
	if err != nil {
		return provider.TransferState{}, fmt.Errorf("%s: refund %s: %w", c.name, t.ID, err)
	}
	if w.RtrID != "" && !provider.ValidEndToEnd(w.RtrID) {
		return provider.TransferState{}, fmt.Errorf("%s: refund %s: rtrId %q is not 32 letters and digits", c.name, t.ID, w.RtrID)
	}
	return provider.TransferState{ID: t.ID, Status: st, EndToEndID: w.RtrID}, nil
}

// refundStatus maps a devolução status.
func refundStatus(s string) (provider.Status, error) {
	switch s {
	case "EM_PROCESSAMENTO":
		return provider.Processing, nil
	case "DEVOLVIDO":
		return provider.Completed, nil
	case "NAO_REALIZADO":
		return provider.Failed, nil
	}
	return "", fmt.Errorf("unknown devolução status %q", truncate(s, 40))
}

// toPayment validates a Pix of the API and converts it.
func toPayment(w pixWire) (provider.Payment, error) {
	if !provider.ValidEndToEnd(w.EndToEndID) {
		return provider.Payment{}, fmt.Errorf("endToEndId %q is not 32 letters and digits", truncate(w.EndToEndID, 40))
	}
	amount, err := pix.ParseAmountString(w.Valor)
	if err != nil || amount <= 0 {
		return provider.Payment{}, fmt.Errorf("pix %s: valor %q is not a positive amount", w.EndToEndID, truncate(w.Valor, 20))
	}
	paid, err := time.Parse(time.RFC3339Nano, w.Horario)
	if err != nil {
		return provider.Payment{}, fmt.Errorf("pix %s: horario %q is not RFC 3339", w.EndToEndID, truncate(w.Horario, 40))
	}
	p := provider.Payment{TxID: w.TxID, Amount: amount, EndToEndID: w.EndToEndID, PaidAt: paid}
	payer := w.Pagador
	if payer == nil && w.GnExtras != nil {
		payer = w.GnExtras.Pagador
	}
	if payer != nil {
		p.PayerName, p.PayerDocument = payer.Nome, payer.CPF
		if p.PayerDocument == "" {
			p.PayerDocument = payer.CNPJ
		}
	}
	for _, d := range w.Devolucoes {
		st, err := refundStatus(d.Status)
		if err != nil {
			return provider.Payment{}, fmt.Errorf("pix %s: devolução %q: %w", w.EndToEndID, truncate(d.ID, 40), err)
		}
		if d.ID == "" || (d.RtrID != "" && !provider.ValidEndToEnd(d.RtrID)) {
			return provider.Payment{}, fmt.Errorf("pix %s: devolução %q: bad id or rtrId", w.EndToEndID, truncate(d.ID, 40))
		}
		// The valor is read exactly (a MED return's amount is the PSP's
		// alone: nobody else knows it); the API requires it.
		valor, err := pix.ParseAmountString(d.Valor)
		if err != nil || valor <= 0 {
			return provider.Payment{}, fmt.Errorf("pix %s: devolução %q: valor %q is not a positive amount",
				w.EndToEndID, truncate(d.ID, 40), truncate(d.Valor, 20))
		}
		if !validNature(d.Natureza) {
			return provider.Payment{}, fmt.Errorf("pix %s: devolução %q: natureza %q is not a natureza", w.EndToEndID, truncate(d.ID, 40), truncate(d.Natureza, 40))
		}
		p.Refunds = append(p.Refunds, provider.TransferState{ID: d.ID, Status: st, EndToEndID: d.RtrID, Amount: valor, Nature: d.Natureza})
	}
	return p, nil
}

// validNature reports whether n has the form of a devolução's natureza
// (ORIGINAL, MED_FRAUDE, …: capitals and underscores), or is none (which
// the API reads as ORIGINAL). The form only, so that a natureza BACEN adds
// later still lets the Pix through; the caller decides what it means.
func validNature(n string) bool {
	if len(n) > 40 {
		return false
	}
	for i := 0; i < len(n); i++ {
		if c := n[i]; !('A' <= c && c <= 'Z' || c == '_') {
			return false
		}
	}
	return true
}

// sameAmount reports whether the valor s is exactly a.
func sameAmount(s string, a pix.Amount) bool {
	v, err := pix.ParseAmountString(s)
	return err == nil && v == a
}

func isAlnum(r byte) bool {
	return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9'
}

func allAlnum(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isAlnum(s[i]) {
			return false
		}
	}
	return true
}

// validTxID: a cob's txid is 26 to 35 letters and digits.
func validTxID(s string) bool { return len(s) >= 26 && len(s) <= 35 && allAlnum(s) }

// validHexID: a pixgate UUID as 32 hex characters.
func validHexID(s string) bool {
	if len(s) != 32 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

// ValidHexID reports whether s is a pixgate UUID as 32 hex characters, as
// idEnvio and devolução ids are sent.
func ValidHexID(s string) bool { return validHexID(s) }

var (
	_ provider.Provider      = (*Client)(nil)
	_ provider.ReturnsReader = (*Client)(nil)
)
