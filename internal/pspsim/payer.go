package pspsim

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/pixgate/pixgate/internal/brcode"
)

// Errors of Pay.
var (
	// ErrUnknownCharge: no cob has that txid.
	ErrUnknownCharge = errors.New("pspsim: no cob with this txid")
	// ErrNotPayable: the cob is paid, removed or expired.
	ErrNotPayable = errors.New("pspsim: the cob cannot be paid")
)

// Pay has a payer pay the ATIVA cob txid for its exact valor.original: the
// cob becomes CONCLUIDA, the Pix is recorded with a fresh end-to-end id and
// the registered webhook (if any) receives it at <webhookUrl>/pix before
// Pay returns. A failed or lost delivery does not undo the payment; see
// Deliveries.
func (s *Server) Pay(ctx context.Context, txid string) (string, error) {
	return s.PayWith(ctx, txid, PayOptions{})
}

// PayOptions are what a payer may do that Pay does not.
type PayOptions struct {
	// Valor, when positive, is the amount paid in centavos instead of the
	// cob's valor.original (a payer who typed another amount, or a PSP that
	// computed one).
	Valor int64
	// Again pays a cob that is no longer ATIVA (already paid, removed or
	// expired): the second Pix that a payer's bank can still send for a
	// copied code.
	Again bool
	// PayerName and PayerDocument (a CPF of 11 digits or a CNPJ of 14),
	// when set, are who pays instead of the cob's devedor: someone other
	// than the debtor may pay a charge.
	PayerName     string
	PayerDocument string
}

// SimulatedPayerName and SimulatedPayerCPF are who pays a Pix whose cob
// names no devedor (or that no cob holds): its pagador.
const (
	SimulatedPayerName = "Pagador Simulado"
	SimulatedPayerCPF  = "12345678909"
)

// PayWith is Pay with the options o.
func (s *Server) PayWith(ctx context.Context, txid string, o PayOptions) (string, error) {
	s.mu.Lock()
	c := s.st.cobs[txid]
	if c == nil {
		s.mu.Unlock()
		return "", fmt.Errorf("%w: %s", ErrUnknownCharge, txid)
	}
	now := s.now()
	switch {
	case o.Again:
	case c.Status != CobAtiva:
		s.mu.Unlock()
		return "", fmt.Errorf("%w: it is %s", ErrNotPayable, c.Status)
	case !now.Before(c.Created.Add(time.Duration(c.Expiracao) * time.Second)):
		s.mu.Unlock()
		return "", fmt.Errorf("%w: it expired at %s", ErrNotPayable, formatTime(c.Created.Add(time.Duration(c.Expiracao)*time.Second)))
	}
	valor := c.Valor
	if o.Valor > 0 {
		valor = o.Valor
	}
	p := &pixRec{E2EID: newE2EID("E", now), TxID: txid, Valor: valor, Chave: c.Chave, Horario: now, InfoPagador: "pago pelo simulador"}
	if o.PayerName != "" {
		p.Pagador = &devedor{Nome: o.PayerName, CPF: o.PayerDocument}
		if len(o.PayerDocument) == 14 {
			p.Pagador.CPF, p.Pagador.CNPJ = "", o.PayerDocument
		}
	}
	if c.Status == CobAtiva {
		c.Status = CobConcluida
	}
	c.Pix = append(c.Pix, p)
	item := s.record(p)
	s.mu.Unlock()
	s.deliver(ctx, []pixJSON{item})
	return p.E2EID, nil
}

// Receive has a payer send valor centavos to the merchant's key with txid
// (which may be "" or name no cob: a static code, or a code of another
// system): a Pix that no cob holds, reported like any other.
func (s *Server) Receive(ctx context.Context, txid string, valor int64) (string, error) {
	if valor <= 0 {
		return "", errors.New("pspsim: valor must be positive")
	}
	s.mu.Lock()
	now := s.now()
	p := &pixRec{E2EID: newE2EID("E", now), TxID: txid, Valor: valor, Chave: s.opts.PixKey, Horario: now, InfoPagador: "pago pelo simulador"}
	if c := s.st.cobs[txid]; c != nil {
		c.Pix = append(c.Pix, p)
	}
	item := s.record(p)
	s.mu.Unlock()
	s.deliver(ctx, []pixJSON{item})
	return p.E2EID, nil
}

// record adds the received Pix p to the state (s.mu held) and returns it
// as the webhook reports it.
func (s *Server) record(p *pixRec) pixJSON {
	if p.Pagador == nil {
		p.Pagador = s.payerOf(p.TxID)
	}
	s.st.pix[p.E2EID] = p
	s.st.pixOrder = append(s.st.pixOrder, p)
	return p.json()
}

// payerOf returns who pays the charge txid when nobody else is named: the
// debtor of its cob or cobv, else SimulatedPayer (s.mu held).
func (s *Server) payerOf(txid string) *devedor {
	if c := s.st.cobs[txid]; c != nil && c.Devedor != nil {
		d := *c.Devedor
		return &d
	}
	if c := s.st.cobvs[txid]; c != nil && c.Devedor.Nome != "" {
		return &devedor{CPF: c.Devedor.CPF, CNPJ: c.Devedor.CNPJ, Nome: c.Devedor.Nome}
	}
	return &devedor{CPF: SimulatedPayerCPF, Nome: SimulatedPayerName}
}

// Settle settles every send and devolução still EM_PROCESSAMENTO now,
// whatever SettleDelay says, and waits for the webhooks it causes.
func (s *Server) Settle(ctx context.Context) {
	refunds, sent := s.settle(true)
	for _, n := range refunds {
		s.deliver(ctx, n)
	}
	s.deliverSent(ctx, sent)
	s.deliverNotices(ctx, s.settleRecs())
}

// settleDue settles the transfers whose delay has passed, moves the
// recurrences and cycle charges time moves, and delivers the resulting
// webhooks in the background (or, with force, settles every pending
// transfer).
func (s *Server) settleDue(force bool) {
	refunds, sent := s.settle(force)
	for _, n := range refunds {
		s.inBackground(func(ctx context.Context) { s.deliver(ctx, n) })
	}
	if len(sent) > 0 {
		s.inBackground(func(ctx context.Context) { s.deliverSent(ctx, sent) })
	}
	if notes := s.settleRecs(); len(notes) > 0 {
		s.inBackground(func(ctx context.Context) { s.deliverNotices(ctx, notes) })
	}
}

// inBackground runs f in a goroutine that Close waits for and whose
// context Close cancels; nothing once the server is closing.
func (s *Server) inBackground(f func(ctx context.Context)) {
	s.mu.Lock()
	closed := s.isClosing()
	if !closed {
		s.wg.Add(1)
	}
	s.mu.Unlock()
	if closed {
		return
	}
	go func() {
		defer s.wg.Done()
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		go func() {
			select {
			case <-s.closing:
				cancel()
			case <-ctx.Done():
			}
		}()
		f(ctx)
	}()
}

func (s *Server) isClosing() bool {
	select {
	case <-s.closing:
		return true
	default:
		return false
	}
}

// settle finalises what is due and returns the webhook notifications of
// the settled devoluções (each one the Pix with all its devoluções) and
// Efí's reports of the settled sends.
func (s *Server) settle(force bool) ([][]pixJSON, []sentPixJSON) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	delay := s.opts.SettleDelay
	due := func(requested time.Time) bool {
		return force || delay >= 0 && !now.Before(requested.Add(delay))
	}
	var sent []sentPixJSON
	for _, sd := range s.st.sends {
		if sd.Status == EmProcessamento && due(sd.Requested) {
			sd.Status, sd.Settled = Realizado, now
			if strings.HasSuffix(sd.Favorecido, FailKeySuffix) {
				sd.Status = NaoRealizado
			}
			sent = append(sent, sd.report())
		}
	}
	var out [][]pixJSON
	for _, rf := range s.st.refunds {
		if rf.Status == EmProcessamento && due(rf.Requested) {
			rf.Status, rf.Settled = Devolvido, now
			if rf.Descricao == FailRefundDescription {
				rf.Status = NaoRealizado
			}
			out = append(out, []pixJSON{s.st.pix[rf.E2EID].json()})
		}
	}
	return out, sent
}

// Delivery is one webhook the simulator sent (or lost on purpose).
type Delivery struct {
	URL         string
	EndToEndIDs []string
	// IDs are the idRec or txid of a recurrence's or cycle charge's
	// notification.
	IDs []string
	// Status is the receiver's answer; 0 when none (lost, no webhook
	// registered, or a transport error in Err).
	Status int
	Lost   bool
	Err    string
	At     time.Time
}

// Deliveries returns every webhook delivery so far, oldest first.
func (s *Server) Deliveries() []Delivery {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Delivery(nil), s.deliveries...)
}

// deliver POSTs {"pix": items} to the registered webhook URL + "/pix", once.
func (s *Server) deliver(ctx context.Context, items []pixJSON) {
	d := Delivery{}
	for _, it := range items {
		d.EndToEndIDs = append(d.EndToEndIDs, it.EndToEndID)
	}
	s.mu.Lock()
	wh := s.st.webhook
	s.mu.Unlock()
	s.post(ctx, wh, "pix", d, map[string][]pixJSON{"pix": items})
}

// deliverSent POSTs Efí's report of settled sends, {"pix": items}, to the
// registered webhook URL + "/pix", once (nothing when there are none).
func (s *Server) deliverSent(ctx context.Context, items []sentPixJSON) {
	if len(items) == 0 {
		return
	}
	d := Delivery{}
	for _, it := range items {
		d.EndToEndIDs = append(d.EndToEndIDs, it.EndToEndID)
		d.IDs = append(d.IDs, it.GnExtras.IDEnvio)
	}
	s.mu.Lock()
	wh := s.st.webhook
	s.mu.Unlock()
	s.post(ctx, wh, "pix", d, map[string][]sentPixJSON{"pix": items})
}

// post POSTs body as JSON to wh's URL + "/" + suffix, once, and logs it as
// d in Deliveries (lost on purpose while LoseWebhooks says so; an error
// when wh is nil).
func (s *Server) post(ctx context.Context, wh *webhookReg, suffix string, d Delivery, body any) {
	s.mu.Lock()
	d.At = s.now()
	if wh != nil && s.loseHooks != 0 {
		d.Lost = true
		if s.loseHooks > 0 {
			s.loseHooks--
		}
	}
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		if len(s.deliveries) >= maxLogged {
			s.deliveries = s.deliveries[1:]
		}
		s.deliveries = append(s.deliveries, d)
		s.mu.Unlock()
		s.log.Info("pspsim webhook", "url", d.URL, "e2eids", d.EndToEndIDs, "ids", d.IDs, "status", d.Status, "lost", d.Lost, "err", d.Err)
	}()
	if wh == nil {
		d.Err = "no webhook registered"
		return
	}
	d.URL = strings.TrimSuffix(wh.URL, "/") + "/" + suffix
	if d.Lost {
		return
	}
	b, err := json.Marshal(body)
	if err != nil {
		d.Err = err.Error()
		return
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, d.URL, bytes.NewReader(b))
	if err != nil {
		d.Err = err.Error()
		return
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := s.opts.WebhookClient.Do(req)
	if err != nil {
		d.Err = err.Error()
		return
	}
	_ = resp.Body.Close()
	d.Status = resp.StatusCode
}

// dynamicBRCode is the BR Code of a cob: point of initiation 12 (single
// use), merchant account 26 with the Pix GUI and the location URL in 25
// (no key), the amount, and txid "***" in 62/05 (the payer's app reads the
// cob from the location). brcode.Encode writes static codes only, so the
// fields are assembled here and brcode.Code adds the CRC.
func dynamicBRCode(location, name, city string, centavos int64) (string, error) {
	name, city = brcode.Sanitize(name, brcode.MaxMerchantName), brcode.Sanitize(city, brcode.MaxMerchantCity)
	if name == "" || city == "" || len(location) > 77 {
		return "", errors.New("pspsim: merchant name, city or location unfit for a BR Code")
	}
	c := brcode.Code{Fields: []brcode.Field{
		{ID: "00", Value: "01"},
		{ID: "01", Value: "12"},
		{ID: "26", Sub: []brcode.Field{{ID: "00", Value: brcode.GUI}, {ID: "25", Value: location}}},
		{ID: "52", Value: "0000"},
		{ID: "53", Value: "986"},
		{ID: "54", Value: formatValor(centavos)},
		{ID: "58", Value: "BR"},
		{ID: "59", Value: name},
		{ID: "60", Value: city},
		{ID: "62", Sub: []brcode.Field{{ID: "05", Value: "***"}}},
	}}
	return c.String(), nil
}

// randomHex returns n random hexadecimal characters.
func randomHex(n int) string {
	b := make([]byte, (n+1)/2)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)[:n]
}
