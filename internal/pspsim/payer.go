package pspsim

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// This file is the payer's side of cobs and cobvs: paying them, and Pix
// that no charge holds.

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

// ErrBadDate: the day asked for is not a date YYYY-MM-DD.
var ErrBadDate = errors.New("pspsim: not a date YYYY-MM-DD")

// CobVDue returns what the cobv txid costs when paid on date (YYYY-MM-DD;
// "" is today in São Paulo by the simulator's clock), computed as BACEN
// defines the cobv's terms, and false when the cobv can no longer be paid
// that day.
func (s *Server) CobVDue(txid, date string) (CobVAmount, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.st.cobvs[txid]
	if c == nil {
		return CobVAmount{}, false, fmt.Errorf("%w: %s", ErrUnknownCharge, txid)
	}
	d, err := s.payDay(date)
	if err != nil {
		return CobVAmount{}, false, err
	}
	a, ok := c.Terms.amountOn(d)
	return a, ok, nil
}

// payDay reads date, "" being today in São Paulo (s.mu held or not: it
// reads only the clock).
func (s *Server) payDay(date string) (day, error) {
	if date == "" {
		return dayOf(s.now()), nil
	}
	d, ok := parseDay(date)
	if !ok {
		return day{}, fmt.Errorf("%w: %q", ErrBadDate, date)
	}
	return d, nil
}

// PayCobV has a payer pay the ATIVA cobv txid on date (YYYY-MM-DD; "" is
// today in São Paulo by the simulator's clock) for what BACEN's terms make
// due that day: the cobv becomes CONCLUIDA, the Pix (its horario on that
// date, at the clock's São Paulo time of day) is recorded and the webhook
// receives it before PayCobV returns. It returns the Pix's end-to-end id and the amount paid
// in centavos. ErrNotPayable: the cobv is not ATIVA, the date is before
// its creation or after its last day.
func (s *Server) PayCobV(ctx context.Context, txid, date string) (string, int64, error) {
	s.mu.Lock()
	c := s.st.cobvs[txid]
	if c == nil {
		s.mu.Unlock()
		return "", 0, fmt.Errorf("%w: %s", ErrUnknownCharge, txid)
	}
	now := s.now()
	d, err := s.payDay(date)
	if err != nil {
		s.mu.Unlock()
		return "", 0, err
	}
	amount, payable := c.Terms.amountOn(d)
	switch {
	case c.Status != CobAtiva:
		err = fmt.Errorf("%w: it is %s", ErrNotPayable, c.Status)
	case d.Before(dayOf(c.Created)):
		err = fmt.Errorf("%w: %s is before its creation", ErrNotPayable, formatDay(d))
	case !payable:
		err = fmt.Errorf("%w: its last day was %s", ErrNotPayable, formatDay(c.Terms.lastDay()))
	}
	if err != nil {
		s.mu.Unlock()
		return "", 0, err
	}
	// The Pix is stamped on the day it pays for: the receiver prices a
	// cobv by the date of its horario, as a real PSP's payment shows it.
	paid := payTime(now, d)
	p := &pixRec{E2EID: newE2EID("E", paid), TxID: txid, Valor: amount.Final, Chave: c.Chave, Horario: paid, InfoPagador: "pago pelo simulador"}
	c.Status = CobConcluida
	c.Pix = append(c.Pix, p)
	item := s.record(p)
	s.mu.Unlock()
	s.deliver(ctx, []pixJSON{item})
	return p.E2EID, amount.Final, nil
}

// payTime is the instant of a payment made on São Paulo date d: now's São
// Paulo time of day on that date (now itself when d is today).
func payTime(now time.Time, d day) time.Time {
	if dayOf(now).Equal(d) {
		return now
	}
	sp := now.In(saoPaulo)
	y, m, dd := d.Date()
	return time.Date(y, m, dd, sp.Hour(), sp.Minute(), sp.Second(), sp.Nanosecond(), saoPaulo)
}

// txidOfCobVCode is the txid of the cobv whose copy-and-paste code is
// code, or "" when no cobv has it.
func (s *Server) txidOfCobVCode(code string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return txidWithCode(s.st.cobvs, code, func(c *cobv) string { return c.BRCode })
}
