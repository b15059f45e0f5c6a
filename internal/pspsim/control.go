package pspsim

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"slices"
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
	// Infractions are the MED contests (Efí's infrações), oldest first.
	Infractions []InfractionFact `json:"infractions"`
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
	st.Infractions = s.infractionFacts()
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
//	                       → {"endToEndId": …, "txid": …, "valor": "10.20"}
//	POST /sim/paycobv      the same, the body naming the cobv by its
//	                       copy-and-paste code (pixgate's qrcode):
//	                       {"code": "…", "date": …}
//	POST /sim/rec/{idRec}/approve|reject|cancel-by-payer
//	                       the payer answers a recurrence at their bank
//	                       (approve pays the journey-3 cob → {"endToEndId": …})
//	POST /sim/cobr/{txid}/debit|fail
//	                       a cycle charge's scheduled attempt is debited, or
//	                       fails, now
//	POST /sim/pix/{e2eid}/med {"valor"?: "5.00", "natureza"?: "MED_FRAUDE"}
//	                       the PSP returns the Pix by the MED on its own: a
//	                       DEVOLVIDO devolução of the valor (default: all
//	                       that is left) → {"id": …}, reported by webhook
//	POST /sim/infracoes    {"endToEndId", "valor"?, "natureza"?, "respond_by"?}
//	                       a MED contest of the Pix opens (Efí's infração,
//	                       ABERTA; respond_by RFC 3339, default 7 days on)
//	                       → {"idInfracao": …}
//	POST /sim/infracoes/{id}/release
//	                       the contest failed: REJEITADA, nothing returned
//	POST /sim/infracoes/{id}/accept {"valor"?}
//	                       the contest held: ACEITA, and its MED devolução
//	                       (default: the contested valor) → {"id": …}
//	POST /sim/settle       settle every pending send and devolução now
//	GET  /sim/state        State
func (s *Server) controlHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /sim/pay/{txid}", s.ctlPay)
	mux.HandleFunc("POST /sim/pay", s.ctlPayCode)
	mux.HandleFunc("POST /sim/pix", s.ctlPix)
	mux.HandleFunc("POST /sim/faults", s.ctlFaults)
	mux.HandleFunc("POST /sim/settle", func(w http.ResponseWriter, r *http.Request) {
		s.Settle(r.Context())
		writeJSON(w, http.StatusOK, s.State())
	})
	mux.HandleFunc("POST /sim/paycobv/{txid}", func(w http.ResponseWriter, r *http.Request) { s.ctlPayCobV(w, r, false) })
	mux.HandleFunc("POST /sim/paycobv", func(w http.ResponseWriter, r *http.Request) { s.ctlPayCobV(w, r, true) })
	s.recControl(mux)
	s.medControl(mux)
	mux.HandleFunc("GET /sim/state", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, s.State())
	})
	return mux
}

// action is how the control API answers the outcome of an action: 200
// with its result, 400 for a date that is none, 404 (missing) for an
// unknown resource and 409 (conflict) for one whose state refuses it.
type action struct {
	unknown                 []error
	missing, missingTitle   string
	conflict, conflictTitle string
}

// Answers of the control actions on cobs, cobvs, and recurrences and cobrs.
var (
	payAction     = action{[]error{ErrUnknownCharge}, "CobNaoEncontrado", "Cobrança não encontrada", "CobOperacaoInvalida", "Cobrança não pode ser paga"}
	payCobVAction = action{[]error{ErrUnknownCharge}, "CobVNaoEncontrada", "Cobrança não encontrada", "CobVOperacaoInvalida", "Cobrança não pode ser paga"}
	recAction     = action{[]error{ErrUnknownRec, ErrUnknownCobR}, "NaoEncontrado", "Não encontrado", "OperacaoInvalida", "Operação inválida"}
)

// answer answers err, or 200 with ok when there is none.
func (a action) answer(w http.ResponseWriter, err error, ok any) {
	switch {
	case err == nil:
		writeJSON(w, http.StatusOK, ok)
	case slices.ContainsFunc(a.unknown, func(e error) bool { return errors.Is(err, e) }):
		writeProblem(w, http.StatusNotFound, a.missing, a.missingTitle, err.Error(), nil)
	case errors.Is(err, ErrBadDate):
		badControlRequest(w, err)
	default:
		writeProblem(w, http.StatusConflict, a.conflict, a.conflictTitle, err.Error(), nil)
	}
}

// badControlRequest answers 400 to a control request that cannot be read.
func badControlRequest(w http.ResponseWriter, err error) {
	writeProblem(w, http.StatusBadRequest, "RequisicaoInvalida", "Requisição inválida", err.Error(), nil)
}

// decodeControl reads a control request's JSON body into v; optional: an
// empty body is none.
func decodeControl(w http.ResponseWriter, r *http.Request, v any, optional bool) error {
	b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	if err != nil || optional && len(strings.TrimSpace(string(b))) == 0 {
		return err
	}
	return json.Unmarshal(b, v)
}

// ctlPay is POST /sim/pay/{txid}.
func (s *Server) ctlPay(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Valor string `json:"valor"`
		Again bool   `json:"again"`
	}
	var o PayOptions
	err := decodeControl(w, r, &req, true)
	if err == nil && req.Valor != "" {
		var ok bool
		if o.Valor, ok = parseValor(req.Valor); !ok || o.Valor <= 0 {
			err = errors.New("valor must be like 10.00 and above 0.00")
		}
	}
	if err != nil {
		badControlRequest(w, err)
		return
	}
	o.Again = req.Again
	s.payAndAnswer(w, r, r.PathValue("txid"), o)
}

// ctlPayCode is POST /sim/pay: the body is the cob's copy-and-paste code.
func (s *Server) ctlPayCode(w http.ResponseWriter, r *http.Request) {
	b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	if err != nil {
		badControlRequest(w, err)
		return
	}
	s.payAndAnswer(w, r, s.txidOfCode(strings.TrimSpace(string(b))), PayOptions{})
}

func (s *Server) payAndAnswer(w http.ResponseWriter, r *http.Request, txid string, o PayOptions) {
	e2eid, err := s.PayWith(r.Context(), txid, o)
	payAction.answer(w, err, map[string]string{"endToEndId": e2eid, "txid": txid})
}

// ctlPix is POST /sim/pix: a Pix that no cob holds.
func (s *Server) ctlPix(w http.ResponseWriter, r *http.Request) {
	var req struct {
		TxID  string `json:"txid"`
		Valor string `json:"valor"`
	}
	err := decodeControl(w, r, &req, false)
	valor, ok := parseValor(req.Valor)
	if err == nil && (!ok || valor <= 0) {
		err = errors.New("valor must be like 10.00 and above 0.00")
	}
	if err != nil {
		badControlRequest(w, err)
		return
	}
	e2eid, err := s.Receive(r.Context(), req.TxID, valor)
	if err != nil {
		badControlRequest(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"endToEndId": e2eid, "txid": req.TxID})
}

// ctlFaults is POST /sim/faults: FaultsRequest, applied in its order.
func (s *Server) ctlFaults(w http.ResponseWriter, r *http.Request) {
	var req FaultsRequest
	err := decodeControl(w, r, &req, false)
	for _, f := range req.Add {
		switch f.Kind {
		case FaultError, FaultHang, FaultCommitThenError, FaultCommitThenHang:
		default:
			err = errors.New("unknown fault kind " + string(f.Kind))
		}
	}
	if err != nil {
		badControlRequest(w, err)
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
}

// ctlPayCobV is POST /sim/paycobv/{txid}, or (byCode) POST /sim/paycobv.
func (s *Server) ctlPayCobV(w http.ResponseWriter, r *http.Request, byCode bool) {
	var req struct {
		Date string `json:"date"`
		Code string `json:"code"`
	}
	err := decodeControl(w, r, &req, true)
	if err == nil && byCode && strings.TrimSpace(req.Code) == "" {
		err = errors.New(`the body needs "code": the cobv's copy-and-paste code`)
	}
	if err != nil {
		badControlRequest(w, err)
		return
	}
	txid := r.PathValue("txid")
	if byCode {
		txid = s.txidOfCobVCode(strings.TrimSpace(req.Code))
	}
	e2eid, valor, err := s.PayCobV(r.Context(), txid, req.Date)
	payCobVAction.answer(w, err, map[string]string{"endToEndId": e2eid, "txid": txid, "valor": formatValor(valor)})
}

// recControl adds the payer's answers to recurrences and the cycle
// charges' debits to the control API.
func (s *Server) recControl(mux *http.ServeMux) {
	mux.HandleFunc("POST /sim/rec/{idRec}/approve", func(w http.ResponseWriter, r *http.Request) {
		e2eid, err := s.ApproveRec(r.Context(), r.PathValue("idRec"))
		recAction.answer(w, err, map[string]string{"idRec": r.PathValue("idRec"), "status": RecAprovada, "endToEndId": e2eid})
	})
	mux.HandleFunc("POST /sim/rec/{idRec}/reject", func(w http.ResponseWriter, r *http.Request) {
		recAction.answer(w, s.RejectRec(r.Context(), r.PathValue("idRec")), map[string]string{"idRec": r.PathValue("idRec"), "status": RecRejeitada})
	})
	mux.HandleFunc("POST /sim/rec/{idRec}/cancel-by-payer", func(w http.ResponseWriter, r *http.Request) {
		recAction.answer(w, s.CancelRecByPayer(r.Context(), r.PathValue("idRec")), map[string]string{"idRec": r.PathValue("idRec"), "status": RecCancelada})
	})
	mux.HandleFunc("POST /sim/cobr/{txid}/debit", func(w http.ResponseWriter, r *http.Request) {
		e2eid, err := s.DebitCobR(r.Context(), r.PathValue("txid"))
		recAction.answer(w, err, map[string]string{"txid": r.PathValue("txid"), "status": CobRConcluida, "endToEndId": e2eid})
	})
	mux.HandleFunc("POST /sim/cobr/{txid}/fail", func(w http.ResponseWriter, r *http.Request) {
		recAction.answer(w, s.FailCobR(r.Context(), r.PathValue("txid")), map[string]string{"txid": r.PathValue("txid")})
	})
}
