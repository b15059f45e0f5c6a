package pspsim

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// This file is the payer's side of Pix Automático: the answers the payer
// gives a recurrence at their bank, and the debits of its cycle charges.

// Errors of the recurrence control actions.
var (
	// ErrUnknownRec: no recurrence has that idRec.
	ErrUnknownRec = errors.New("pspsim: no recurrence with this idRec")
	// ErrUnknownCobR: no cobr has that txid.
	ErrUnknownCobR = errors.New("pspsim: no cobr with this txid")
	// ErrRecState: the recurrence or cobr is not in a state that allows it.
	ErrRecState = errors.New("pspsim: not allowed in this state")
)

// recIn is the recurrence idRec when its status is want (s.mu held):
// ErrUnknownRec or ErrRecState otherwise.
func (s *Server) recIn(idRec, want string) (*rec, error) {
	rc := s.books().recs[idRec]
	switch {
	case rc == nil:
		return nil, fmt.Errorf("%w: %s", ErrUnknownRec, idRec)
	case rc.Status != want:
		return nil, fmt.Errorf("%w: the recurrence is %s", ErrRecState, rc.Status)
	}
	return rc, nil
}

// changeAndNotify runs change under s.mu, then, unless it fails, delivers
// the Pix it reports to the Pix webhook and then its notifications: the
// payer's actions are done, and told, before they return.
func (s *Server) changeAndNotify(ctx context.Context, change func() ([]pixJSON, []notice, error)) error {
	s.mu.Lock()
	items, notes, err := change()
	s.mu.Unlock()
	if err != nil {
		return err
	}
	if len(items) > 0 {
		s.deliver(ctx, items)
	}
	s.deliverNotices(ctx, notes)
	return nil
}

// ApproveRec has the payer approve the CRIADA recurrence idRec at their
// bank: journey 3 when it names a cob (the cob is paid first, its Pix
// reported like any other), journey 2 otherwise. The notifications are
// delivered before it returns; it returns the Pix's end-to-end id in
// journey 3, "" in journey 2.
func (s *Server) ApproveRec(ctx context.Context, idRec string) (string, error) {
	var e2eid string
	err := s.changeAndNotify(ctx, func() ([]pixJSON, []notice, error) {
		rc, err := s.recIn(idRec, RecCriada)
		if err != nil {
			return nil, nil, err
		}
		now := s.now()
		var items []pixJSON
		rc.Jornada = "JORNADA_2"
		if rc.TxID != "" {
			item, err := s.payFirstCob(rc, now)
			if err != nil {
				return nil, nil, err
			}
			items, e2eid = []pixJSON{item}, item.EndToEndID
			rc.Jornada = "JORNADA_3"
		}
		rc.Status = RecAprovada
		rc.Updates = append(rc.Updates, statusAt{RecAprovada, now})
		return items, []notice{s.recNotice(rc)}, nil
	})
	return e2eid, err
}

// payFirstCob pays the cob of rc's journey 3 now and returns its Pix as the
// webhook reports it (s.mu held); ErrRecState when the cob can no longer be
// paid.
func (s *Server) payFirstCob(rc *rec, now time.Time) (pixJSON, error) {
	c := s.st.cobs[rc.TxID]
	if c == nil || c.Status != CobAtiva || !now.Before(c.Created.Add(time.Duration(c.Expiracao)*time.Second)) {
		return pixJSON{}, fmt.Errorf("%w: the first payment's cob %s can no longer be paid", ErrRecState, rc.TxID)
	}
	p := &pixRec{E2EID: newE2EID("E", now), TxID: c.TxID, Valor: c.Valor, Chave: c.Chave, Horario: now, InfoPagador: "pago pelo simulador"}
	c.Status = CobConcluida
	c.Pix = append(c.Pix, p)
	return s.record(p), nil
}

// RejectRec has the payer reject the CRIADA recurrence idRec.
func (s *Server) RejectRec(ctx context.Context, idRec string) error {
	return s.changeAndNotify(ctx, func() ([]pixJSON, []notice, error) {
		rc, err := s.recIn(idRec, RecCriada)
		if err != nil {
			return nil, nil, err
		}
		rc.Status = RecRejeitada
		rc.Updates = append(rc.Updates, statusAt{RecRejeitada, s.now()})
		rc.End = &encerramento{Rejeicao: &codeText{Codigo: "AP13", Descricao: "Rejeitada pelo usuário pagador"}}
		return nil, []notice{s.recNotice(rc)}, nil
	})
}

// CancelRecByPayer has the payer cancel the APROVADA recurrence idRec at
// their bank; its cobrs not yet debited are cancelled with it.
func (s *Server) CancelRecByPayer(ctx context.Context, idRec string) error {
	return s.changeAndNotify(ctx, func() ([]pixJSON, []notice, error) {
		rc, err := s.recIn(idRec, RecAprovada)
		if err != nil {
			return nil, nil, err
		}
		return nil, s.cancelRec(rc, "USUARIO_PAGADOR", "SLDB", "Cancelamento solicitado pelo usuário pagador"), nil
	})
}

// DebitCobR settles the attempt of the cobr txid still scheduled now,
// whatever its day: the payer's bank debits it, the cobr is CONCLUIDA and
// its Pix is recorded (GET /pix lists it). It returns the Pix's
// end-to-end id.
func (s *Server) DebitCobR(ctx context.Context, txid string) (string, error) {
	return s.settleAttempt(ctx, txid, true)
}

// FailCobR fails the attempt of the cobr txid still scheduled now, with
// FailDebitCode: under PERMITE_3R_7D the cobr stays ATIVA for a retry
// (until its retries or days run out); otherwise it is EXPIRADA.
func (s *Server) FailCobR(ctx context.Context, txid string) error {
	_, err := s.settleAttempt(ctx, txid, false)
	return err
}

// settleAttempt pays (pay) or fails the attempt of the cobr txid still
// scheduled now and returns its end-to-end id.
func (s *Server) settleAttempt(ctx context.Context, txid string, pay bool) (string, error) {
	var e2eid string
	err := s.changeAndNotify(ctx, func() ([]pixJSON, []notice, error) {
		c := s.books().cobrs[txid]
		if c == nil {
			return nil, nil, fmt.Errorf("%w: %s", ErrUnknownCobR, txid)
		}
		t := c.pending()
		if t == nil || (c.Status != CobRAtiva && c.Status != CobRCriada) {
			return nil, nil, fmt.Errorf("%w: the cobr is %s with no attempt scheduled", ErrRecState, c.Status)
		}
		if c.Status == CobRCriada {
			s.activate(c)
		}
		s.settleTentativa(c, t, pay)
		e2eid = t.E2EID
		return nil, []notice{s.cobrNotice(c)}, nil
	})
	return e2eid, err
}

// activate makes a CRIADA cobr ATIVA, its attempt AGENDADA: the payer's
// bank accepted the schedule (s.mu held).
func (s *Server) activate(c *cobr) {
	now := s.now()
	c.Status = CobRAtiva
	c.Updates = append(c.Updates, statusAt{CobRAtiva, now})
	if t := c.pending(); t != nil && t.Status == tentSolicitada {
		t.Status = tentAgendada
		t.Updates = append(t.Updates, statusAt{tentAgendada, now})
	}
}

// settleTentativa pays or fails t, c's scheduled attempt (s.mu held). A
// debit's Pix is recorded (GET /pix/{e2eid} and GET /pix show it) and
// reported with the cobr's notification, not to the Pix webhook.
func (s *Server) settleTentativa(c *cobr, t *tentativa, pay bool) {
	now := s.now()
	if pay {
		t.Status = tentPaga
		t.Updates = append(t.Updates, statusAt{tentPaga, now})
		p := &pixRec{E2EID: t.E2EID, TxID: c.TxID, Valor: c.Valor, Chave: s.opts.PixKey, Horario: now, InfoPagador: "Pix Automático"}
		c.Pix = append(c.Pix, p)
		c.Status = CobRConcluida
		c.Updates = append(c.Updates, statusAt{CobRConcluida, now})
		s.record(p)
		return
	}
	t.Status = tentRejeitada
	t.Updates = append(t.Updates, statusAt{tentRejeitada, now})
	t.Rejeicao = &codeText{Codigo: FailDebitCode, Descricao: "Débito recusado pelo simulador"}
	rc := s.books().recs[c.IDRec]
	if rc == nil || rc.Politica != politicaPermite || c.retries() >= maxRetries {
		c.Status = CobRExpirada
		c.Updates = append(c.Updates, statusAt{CobRExpirada, now})
	}
}

// settleRecs moves what time moves (s.mu taken here): CRIADA recurrences
// older than RecApprovalWindow expire; CRIADA cobrs become ATIVA; an
// attempt whose day has come is debited; a cobr under PERMITE_3R_7D whose
// retry window (7 days from its first attempt) has passed with no attempt
// scheduled expires.
func (s *Server) settleRecs() []notice {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.st.recs == nil {
		return nil
	}
	now := s.now()
	today := dayOf(now)
	b := s.books()
	var notes []notice
	for _, rc := range b.recs {
		if rc.Status == RecCriada && !now.Before(rc.Created.Add(RecApprovalWindow)) {
			rc.Status = RecExpirada
			rc.Updates = append(rc.Updates, statusAt{RecExpirada, now})
			notes = append(notes, s.recNotice(rc))
		}
	}
	for _, c := range b.cobrs {
		changed := false
		if c.Status == CobRCriada {
			s.activate(c)
			changed = true
		}
		if c.Status == CobRAtiva {
			if t := c.pending(); t != nil {
				if t.Status == tentSolicitada {
					t.Status = tentAgendada
					t.Updates = append(t.Updates, statusAt{tentAgendada, now})
					changed = true
				}
				if !today.Before(t.Data) {
					s.settleTentativa(c, t, true)
					changed = true
				}
			} else if today.After(c.Tentativas[0].Data.AddDate(0, 0, retryWindowDays)) {
				c.Status = CobRExpirada
				c.Updates = append(c.Updates, statusAt{CobRExpirada, now})
				changed = true
			}
		}
		if changed {
			notes = append(notes, s.cobrNotice(c))
		}
	}
	return notes
}
