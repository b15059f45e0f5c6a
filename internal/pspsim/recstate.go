package pspsim

import (
	"fmt"
	"slices"
	"strings"
)

// RecFact is one recurrence as State shows it.
type RecFact struct {
	IDRec         string `json:"idRec"`
	Status        string `json:"status"`
	Jornada       string `json:"jornada"`
	TxID          string `json:"txid,omitempty"` // the journey-3 first payment's cob
	DataInicial   string `json:"dataInicial"`
	Periodicidade string `json:"periodicidade"`
	ValorRec      string `json:"valorRec,omitempty"`
}

// CobRFact is one cycle charge as State shows it: its attempts, failed
// ones among them, and the end-to-end ids of the Pix that paid it.
type CobRFact struct {
	TxID       string   `json:"txid"`
	IDRec      string   `json:"idRec"`
	Vencimento string   `json:"dataDeVencimento"`
	Valor      string   `json:"valor"`
	Status     string   `json:"status"`
	Attempts   int      `json:"tentativas"`
	Failed     int      `json:"tentativasRejeitadas"`
	Pix        []string `json:"pix,omitempty"`
}

// recFacts returns every recurrence and cycle charge, by id and txid
// (s.mu held).
func (s *Server) recFacts() ([]RecFact, []CobRFact) {
	recs, cobrs := []RecFact{}, []CobRFact{}
	b := s.st.recs
	if b == nil {
		return recs, cobrs
	}
	for _, rc := range b.recs {
		f := RecFact{IDRec: rc.IDRec, Status: rc.Status, Jornada: rc.Jornada, TxID: rc.TxID,
			DataInicial: formatDay(rc.DataInicial), Periodicidade: rc.Periodicidade}
		if rc.ValorRec > 0 {
			f.ValorRec = formatValor(rc.ValorRec)
		}
		recs = append(recs, f)
	}
	for _, c := range b.cobrs {
		f := CobRFact{TxID: c.TxID, IDRec: c.IDRec, Vencimento: formatDay(c.Vencimento), Valor: formatValor(c.Valor),
			Status: c.Status, Attempts: len(c.Tentativas)}
		for _, t := range c.Tentativas {
			if t.Status == tentRejeitada {
				f.Failed++
			}
		}
		for _, p := range c.Pix {
			f.Pix = append(f.Pix, p.E2EID)
		}
		cobrs = append(cobrs, f)
	}
	slices.SortFunc(recs, func(a, b RecFact) int { return strings.Compare(a.IDRec, b.IDRec) })
	slices.SortFunc(cobrs, func(a, b CobRFact) int { return strings.Compare(a.TxID, b.TxID) })
	return recs, cobrs
}

// RecIDOf returns the idRec of the recurrence whose location the QR code
// code carries ("" if none): what a payer's bank learns from the code.
// The location is field 80's sub-field 25, length-prefixed, so that one
// location is never taken for another that extends it.
func (s *Server) RecIDOf(code string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.st.recs == nil {
		return ""
	}
	for _, rc := range s.st.recs.recs {
		if rc.Loc != nil && strings.Contains(code, fmt.Sprintf("25%02d%s", len(rc.Loc.Location), rc.Loc.Location)) {
			return rc.IDRec
		}
	}
	return ""
}

// CobRsOf returns the txids of the recurrence idRec's cycle charges,
// oldest first: the payer's bank's list of the debits it schedules.
func (s *Server) CobRsOf(idRec string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.st.recs == nil {
		return nil
	}
	var out []string
	for _, c := range s.sortedCobRs(idRec) {
		out = append(out, c.TxID)
	}
	return out
}
