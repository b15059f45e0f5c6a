package pspsim

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/pixgate/pixgate/internal/brcode"
)

// This file is the immediate charge (API Pix /cob): PUT, GET and PATCH.

type cob struct {
	TxID        string
	Created     time.Time
	Expiracao   int
	Revisao     int
	LocID       int64
	Location    string
	Status      string
	Devedor     *devedor
	Valor       int64 // centavos
	Chave       string
	Solicitacao string
	BRCode      string
	Pix         []*pixRec
}

type cobJSON struct {
	Calendario         calendarioJSON `json:"calendario"`
	TxID               string         `json:"txid"`
	Revisao            int            `json:"revisao"`
	Loc                locJSON        `json:"loc"`
	Location           string         `json:"location"`
	Status             string         `json:"status"`
	Devedor            *devedor       `json:"devedor,omitempty"`
	Valor              valorJSON      `json:"valor"`
	Chave              string         `json:"chave"`
	SolicitacaoPagador string         `json:"solicitacaoPagador,omitempty"`
	PixCopiaECola      string         `json:"pixCopiaECola"`
	Pix                []pixJSON      `json:"pix,omitempty"`
}

type calendarioJSON struct {
	Criacao   string `json:"criacao"`
	Expiracao int    `json:"expiracao"`
}

type locJSON struct {
	ID       int64  `json:"id"`
	Location string `json:"location"`
	TipoCob  string `json:"tipoCob"`
	Criacao  string `json:"criacao"`
	TxID     string `json:"txid"`
}

type valorJSON struct {
	Original string `json:"original"`
}

func (c *cob) json() cobJSON {
	created := formatTime(c.Created)
	j := cobJSON{
		Calendario: calendarioJSON{Criacao: created, Expiracao: c.Expiracao},
		TxID:       c.TxID, Revisao: c.Revisao,
		Loc:      locJSON{ID: c.LocID, Location: c.Location, TipoCob: "cob", Criacao: created, TxID: c.TxID},
		Location: c.Location, Status: c.Status, Devedor: c.Devedor,
		Valor: valorJSON{Original: formatValor(c.Valor)}, Chave: c.Chave,
		SolicitacaoPagador: c.Solicitacao, PixCopiaECola: c.BRCode,
	}
	for _, p := range c.Pix {
		j.Pix = append(j.Pix, p.json())
	}
	return j
}

// cobKind is what the cob handlers answer.
var cobKind = resource{noun: "cob", prop: "cob", refused: "CobOperacaoInvalida", refusedTitle: "Cobrança inválida",
	missing: "CobNaoEncontrado", missingTitle: "Cobrança não encontrada", missingDetail: "no cob with this txid"}

// cobRevision is PATCH /cob/{txid}: only an ATIVA cob can be revised.
var cobRevision = statusGuard{allowed: []string{CobAtiva}, verb: "revised", razao: "only an ATIVA cob can be revised"}

// originalValor is the valor of a cob or cobr request.
type originalValor struct {
	Original *string `json:"original"`
}

// cobRequest is the body of PUT and PATCH /cob/{txid}; pointers tell an
// absent field from an empty one.
type cobRequest struct {
	Calendario *struct {
		Expiracao *int `json:"expiracao"`
	} `json:"calendario"`
	Devedor            *devedor       `json:"devedor"`
	Valor              *originalValor `json:"valor"`
	Chave              *string        `json:"chave"`
	SolicitacaoPagador *string        `json:"solicitacaoPagador"`
	Status             *string        `json:"status"`
}

// checkCob returns the violations of a cob request; create requires the
// fields a new cob needs.
func (s *Server) checkCob(req *cobRequest, create bool) violations {
	var v violations
	if req.Calendario != nil && req.Calendario.Expiracao != nil && *req.Calendario.Expiracao <= 0 {
		v.add("cob.calendario.expiracao", "expiracao must be a positive number of seconds", strconv.Itoa(*req.Calendario.Expiracao))
	}
	if create && req.Calendario == nil {
		v.add("cob.calendario", "calendario is required", "")
	}
	switch {
	case req.Valor == nil || req.Valor.Original == nil:
		if create {
			v.add("cob.valor.original", "valor.original is required", "")
		}
	default:
		if c, ok := parseValor(*req.Valor.Original); !ok || c <= 0 {
			v.add("cob.valor.original", `valor.original must match ^\d{1,10}\.\d{2}$ and be above 0.00`, *req.Valor.Original)
		}
	}
	switch {
	case req.Chave == nil:
		if create {
			v.add("cob.chave", "chave is required", "")
		}
	case *req.Chave != s.opts.PixKey:
		v.add("cob.chave", "chave is not a key of this account", *req.Chave)
	}
	if d := req.Devedor; d != nil {
		v.checkPerson("cob.devedor", d.CPF, d.CNPJ, d.Nome, 200)
	}
	v.checkText("cob.solicitacaoPagador", "solicitacaoPagador", req.SolicitacaoPagador, 140)
	if req.Status != nil && (create || *req.Status != CobRemovidaUR) {
		v.add("cob.status", "status can only be revised to "+CobRemovidaUR, *req.Status)
	}
	return v
}

func (s *Server) putCob(w http.ResponseWriter, r *http.Request) {
	txid := r.PathValue("txid")
	var req cobRequest
	if !cobKind.validTxID(w, txid) || !cobKind.decode(w, r, &req) {
		return
	}
	if v := s.checkCob(&req, true); len(v) > 0 {
		cobKind.refuse(w, "the cob has invalid fields", v...)
		return
	}
	valor, _ := parseValor(*req.Valor.Original)
	exp := 86400
	if req.Calendario.Expiracao != nil {
		exp = *req.Calendario.Expiracao
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, dup := s.st.cobs[txid]; dup {
		cobKind.refuse(w, "a cob with this txid already exists", violacao{Razao: "txid already used", Propriedade: "cob.txid", Valor: txid})
		return
	}
	c := &cob{TxID: txid, Created: s.now(), Expiracao: exp, Status: CobAtiva, Devedor: req.Devedor, Valor: valor, Chave: *req.Chave}
	c.LocID, c.Location = s.newLocation("/qr/v2/")
	if req.SolicitacaoPagador != nil {
		c.Solicitacao = *req.SolicitacaoPagador
	}
	code, err := chargeBRCode(c.Location, s.opts.MerchantName, s.opts.MerchantCity, formatValor(valor))
	if err != nil {
		writeProblem(w, http.StatusInternalServerError, "ErroInternoDoServidor", "Erro interno do servidor", err.Error(), nil)
		return
	}
	c.BRCode = code
	s.st.cobs[txid] = c
	writeJSON(w, http.StatusCreated, c.json())
}

func (s *Server) getCob(w http.ResponseWriter, r *http.Request) {
	show(s, w, cobKind, func() *cob { return s.st.cobs[r.PathValue("txid")] }, (*cob).json)
}

func (s *Server) patchCob(w http.ResponseWriter, r *http.Request) {
	var req cobRequest
	if !cobKind.decode(w, r, &req) {
		return
	}
	if v := s.checkCob(&req, false); len(v) > 0 {
		cobKind.refuse(w, "the revision has invalid fields", v...)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	c := found(w, cobKind, s.st.cobs[r.PathValue("txid")])
	if c == nil || !cobKind.allows(w, c.Status, cobRevision) {
		return
	}
	if req.Status != nil {
		c.Status = *req.Status
	}
	if req.Valor != nil && req.Valor.Original != nil {
		c.Valor, _ = parseValor(*req.Valor.Original)
		if code, err := chargeBRCode(c.Location, s.opts.MerchantName, s.opts.MerchantCity, formatValor(c.Valor)); err == nil {
			c.BRCode = code
		}
	}
	if req.Calendario != nil && req.Calendario.Expiracao != nil {
		c.Expiracao = *req.Calendario.Expiracao
	}
	if req.SolicitacaoPagador != nil {
		c.Solicitacao = *req.SolicitacaoPagador
	}
	if req.Devedor != nil {
		c.Devedor = req.Devedor
	}
	c.Revisao++
	writeJSON(w, http.StatusOK, c.json())
}

// newLocation takes the next location id and makes a location under path
// ("/qr/v2/", "/qr/v2/cobv/", …) of the API's host (s.mu held).
func (s *Server) newLocation(path string) (int64, string) {
	s.st.nextLoc++
	return s.st.nextLoc, s.ln.Addr().String() + path + strings.ToLower(randomHex(32))
}

// chargeBRCode is the BR Code of a cob or cobv: point of initiation 12
// (single use), merchant account 26 with the Pix GUI and the location URL
// in 25 (no key), the amount when there is one (a cobv's payer reads the
// amount of the day from the location), and txid "***" in 62/05 (the
// payer's app reads the charge from the location). brcode.Encode writes
// static codes only, so the fields are assembled here and brcode.Code adds
// the CRC.
func chargeBRCode(location, name, city, amount string) (string, error) {
	name, city = brcode.Sanitize(name, brcode.MaxMerchantName), brcode.Sanitize(city, brcode.MaxMerchantCity)
	if name == "" || city == "" || len(location) > 77 {
		return "", errors.New("pspsim: merchant name, city or location unfit for a BR Code")
	}
	fields := []brcode.Field{
		{ID: "00", Value: "01"},
		{ID: "01", Value: "12"},
		{ID: "26", Sub: []brcode.Field{{ID: "00", Value: brcode.GUI}, {ID: "25", Value: location}}},
		{ID: "52", Value: "0000"},
		{ID: "53", Value: "986"},
	}
	if amount != "" {
		fields = append(fields, brcode.Field{ID: "54", Value: amount})
	}
	fields = append(fields,
		brcode.Field{ID: "58", Value: "BR"},
		brcode.Field{ID: "59", Value: name},
		brcode.Field{ID: "60", Value: city},
		brcode.Field{ID: "62", Sub: []brcode.Field{{ID: "05", Value: "***"}}},
	)
	c := brcode.Code{Fields: fields}
	return c.String(), nil
}

// randomHex returns n random hexadecimal characters.
func randomHex(n int) string {
	b := make([]byte, (n+1)/2)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)[:n]
}

// TxIDOf returns the txid of the cob whose pixCopiaECola is code ("" if
// none): what a payer's bank learns from the code it was given.
func (s *Server) TxIDOf(code string) string { return s.txidOfCode(code) }

// txidOfCode finds the cob whose pixCopiaECola is code ("" if none): a
// dynamic BR Code carries the location, not the txid.
func (s *Server) txidOfCode(code string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return txidWithCode(s.st.cobs, code, func(c *cob) string { return c.BRCode })
}

// txidWithCode is the txid under which charges holds the charge whose
// copy-and-paste code is code, or "" (s.mu held).
func txidWithCode[V any](charges map[string]*V, code string, codeOf func(*V) string) string {
	for txid, c := range charges {
		if codeOf(c) == code {
			return txid
		}
	}
	return ""
}
