package pspsim

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"sort"
	"strings"
)

// State is a snapshot of the simulated PSP, as GET /sim/state shows it.
type State struct {
	PixKey     string           `json:"pix_key"`
	Webhook    string           `json:"webhook_url,omitempty"`
	SkipMTLS   bool             `json:"webhook_skip_mtls_checking,omitempty"`
	Cobs       []cobJSON        `json:"cobs"`
	Pix        []pixJSON        `json:"pix"`
	Sends      []sendJSON       `json:"sends"`
	SendPuts   map[string]Count `json:"send_puts"`
	RefundPuts map[string]Count `json:"refund_puts"`
	Faults     []Fault          `json:"faults"`
	Down       bool             `json:"down"`
	LoseHooks  int              `json:"lose_webhooks"`
	RateLimit  int              `json:"rate_limit"`
	Deliveries []Delivery       `json:"deliveries"`
	Recs       []RecFact        `json:"recs"`
	CobRs      []CobRFact       `json:"cobrs"`
	// CobVs are the charges with a due date as GET /v2/cobv/{txid} shows
	// them (txid, status, pixCopiaECola, …), by location id.
	CobVs []map[string]any `json:"cobvs"`
}

// State returns a snapshot of every cob, Pix, send, counter and fault.
func (s *Server) State() State {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := State{PixKey: s.opts.PixKey, Cobs: []cobJSON{}, Pix: []pixJSON{}, Sends: []sendJSON{},
		SendPuts: map[string]Count{}, RefundPuts: map[string]Count{}, Faults: []Fault{},
		Down: s.down, LoseHooks: s.loseHooks, RateLimit: s.opts.RateLimit, Deliveries: append([]Delivery{}, s.deliveries...)}
	if wh := s.st.webhook; wh != nil {
		st.Webhook, st.SkipMTLS = wh.URL, wh.SkipMTLS
	}
	st.Recs, st.CobRs = s.recFacts()
	for _, c := range s.st.cobs {
		st.Cobs = append(st.Cobs, c.json())
	}
	sort.Slice(st.Cobs, func(i, j int) bool { return st.Cobs[i].Loc.ID < st.Cobs[j].Loc.ID })
	cobvs := make([]*cobv, 0, len(s.st.cobvs))
	for _, c := range s.st.cobvs {
		cobvs = append(cobvs, c)
	}
	sort.Slice(cobvs, func(i, j int) bool { return cobvs[i].LocID < cobvs[j].LocID })
	st.CobVs = make([]map[string]any, 0, len(cobvs))
	for _, c := range cobvs {
		st.CobVs = append(st.CobVs, s.cobvJSON(c))
	}
	for _, p := range s.st.pixOrder {
		st.Pix = append(st.Pix, p.json())
	}
	for _, sd := range s.st.sends {
		st.Sends = append(st.Sends, sd.json())
	}
	sort.Slice(st.Sends, func(i, j int) bool { return st.Sends[i].Horario.Solicitacao < st.Sends[j].Horario.Solicitacao })
	for k, v := range s.st.sendPuts {
		st.SendPuts[k] = v
	}
	for k, v := range s.st.refundPuts {
		st.RefundPuts[k] = v
	}
	for _, f := range s.faults {
		g := f.Fault
		g.Times = f.left
		st.Faults = append(st.Faults, g)
	}
	return st
}

// TxIDOf returns the txid of the cob whose pixCopiaECola is code ("" if
// none): what a payer's bank learns from the code it was given.
func (s *Server) TxIDOf(code string) string { return s.txidOfCode(code) }

// txidOfCode finds the cob whose pixCopiaECola is code ("" if none): a
// dynamic BR Code carries the location, not the txid.
func (s *Server) txidOfCode(code string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	for txid, c := range s.st.cobs {
		if c.BRCode == code {
			return txid
		}
	}
	return ""
}

// FaultsRequest is the body of POST /sim/faults: every field optional,
// applied in this order.
type FaultsRequest struct {
	Clear        bool    `json:"clear,omitempty"`
	Add          []Fault `json:"add,omitempty"`
	Down         *bool   `json:"down,omitempty"`
	LoseWebhooks *int    `json:"lose_webhooks,omitempty"`
	ExpireTokens bool    `json:"expire_tokens,omitempty"`
	// RateLimit sets SetRateLimit (0 ends the limit).
	RateLimit *int `json:"rate_limit,omitempty"`
}

// controlHandler is the plain-HTTP control API for people and scripts:
//
//	POST /sim/pay/{txid}   a payer pays the cob → {"endToEndId": …}; an
//	                       optional body {"valor": "0.01", "again": true}
//	                       pays another amount, or a cob no longer ATIVA
//	POST /sim/pay          the same, the body being the cob's copy-and-paste code
//	POST /sim/pix          {"txid": "…", "valor": "10.00"}: a Pix to the key
//	                       that no cob holds (txid unknown or "")
//	POST /sim/faults       FaultsRequest
//	POST /sim/paycobv/{txid} a payer pays the cobv on {"date": "YYYY-MM-DD"}
//	                       (optional, default today) what is due that day
//	POST /sim/paycobv      the same, the body naming the cobv by its
//	                       copy-and-paste code: {"code": "…", "date": …}
//	POST /sim/rec/{idRec}/approve|reject|cancel-by-payer
//	                       the payer answers a recurrence at their bank
//	POST /sim/cobr/{txid}/debit|fail
//	                       a cycle charge's scheduled attempt is debited, or
//	                       fails, now
//	POST /sim/settle       settle every pending send and devolução now
//	GET  /sim/state        State
func (s *Server) controlHandler() http.Handler {
	mux := http.NewServeMux()
	pay := func(w http.ResponseWriter, r *http.Request, txid string, o PayOptions) {
		e2eid, err := s.PayWith(r.Context(), txid, o)
		switch {
		case errors.Is(err, ErrUnknownCharge):
			writeProblem(w, http.StatusNotFound, "CobNaoEncontrado", "Cobrança não encontrada", err.Error(), nil)
		case err != nil:
			writeProblem(w, http.StatusConflict, "CobOperacaoInvalida", "Cobrança não pode ser paga", err.Error(), nil)
		default:
			writeJSON(w, http.StatusOK, map[string]string{"endToEndId": e2eid, "txid": txid})
		}
	}
	mux.HandleFunc("POST /sim/pay/{txid}", func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Valor string `json:"valor"`
			Again bool   `json:"again"`
		}
		var o PayOptions
		b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
		if err == nil && len(strings.TrimSpace(string(b))) > 0 {
			err = json.Unmarshal(b, &req)
		}
		if err == nil && req.Valor != "" {
			var ok bool
			if o.Valor, ok = parseValor(req.Valor); !ok || o.Valor <= 0 {
				err = errors.New("valor must be like 10.00 and above 0.00")
			}
		}
		if err != nil {
			writeProblem(w, http.StatusBadRequest, "RequisicaoInvalida", "Requisição inválida", err.Error(), nil)
			return
		}
		o.Again = req.Again
		pay(w, r, r.PathValue("txid"), o)
	})
	mux.HandleFunc("POST /sim/pix", func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			TxID  string `json:"txid"`
			Valor string `json:"valor"`
		}
		b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
		if err == nil {
			err = json.Unmarshal(b, &req)
		}
		valor, ok := parseValor(req.Valor)
		if err == nil && (!ok || valor <= 0) {
			err = errors.New("valor must be like 10.00 and above 0.00")
		}
		if err != nil {
			writeProblem(w, http.StatusBadRequest, "RequisicaoInvalida", "Requisição inválida", err.Error(), nil)
			return
		}
		e2eid, err := s.Receive(r.Context(), req.TxID, valor)
		if err != nil {
			writeProblem(w, http.StatusBadRequest, "RequisicaoInvalida", "Requisição inválida", err.Error(), nil)
			return
		}
		writeJSON(w, http.StatusOK, map[string]string{"endToEndId": e2eid, "txid": req.TxID})
	})
	mux.HandleFunc("POST /sim/pay", func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
		if err != nil {
			writeProblem(w, http.StatusBadRequest, "RequisicaoInvalida", "Requisição inválida", err.Error(), nil)
			return
		}
		pay(w, r, s.txidOfCode(strings.TrimSpace(string(b))), PayOptions{})
	})
	mux.HandleFunc("POST /sim/faults", func(w http.ResponseWriter, r *http.Request) {
		var req FaultsRequest
		b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
		if err == nil {
			err = json.Unmarshal(b, &req)
		}
		for _, f := range req.Add {
			switch f.Kind {
			case FaultError, FaultHang, FaultCommitThenError, FaultCommitThenHang:
			default:
				err = errors.New("unknown fault kind " + string(f.Kind))
			}
		}
		if err != nil {
			writeProblem(w, http.StatusBadRequest, "RequisicaoInvalida", "Requisição inválida", err.Error(), nil)
			return
		}
		if req.Clear {
			s.ClearFaults()
		}
		for _, f := range req.Add {
			s.AddFault(f)
		}
		if req.Down != nil {
			s.SetDown(*req.Down)
		}
		if req.LoseWebhooks != nil {
			s.LoseWebhooks(*req.LoseWebhooks)
		}
		if req.ExpireTokens {
			s.ExpireTokens()
		}
		if req.RateLimit != nil {
			s.SetRateLimit(*req.RateLimit)
		}
		writeJSON(w, http.StatusOK, s.State())
	})
	mux.HandleFunc("POST /sim/settle", func(w http.ResponseWriter, r *http.Request) {
		s.Settle(r.Context())
		writeJSON(w, http.StatusOK, s.State())
	})
	s.cobvControl(mux)
	s.recControl(mux)
	mux.HandleFunc("GET /sim/state", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, s.State())
	})
	return mux
}
