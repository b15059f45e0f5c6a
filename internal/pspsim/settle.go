package pspsim

import (
	"context"
	"strings"
	"time"
)

// This file is settlement: the sends and devoluções that leave
// EM_PROCESSAMENTO, and the webhooks it causes.

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
