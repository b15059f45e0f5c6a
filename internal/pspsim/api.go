package pspsim

import (
	"crypto/subtle"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// handler is the whole TLS listener: token endpoint, API Pix and Efí's
// send API, in the layers described on Options.Wrap, each request delayed
// by Options.Latency and the API's limited to Options.RateLimit.
func (s *Server) handler() http.Handler {
	api := http.NewServeMux()
	api.HandleFunc("PUT /v2/cob/{txid}", s.putCob)
	api.HandleFunc("GET /v2/cob/{txid}", s.getCob)
	api.HandleFunc("PATCH /v2/cob/{txid}", s.patchCob)
	s.cobvRoutes(api)
	s.recRoutes(api)
	api.HandleFunc("GET /v2/pix/{e2eid}", s.getPix)
	api.HandleFunc("GET /v2/pix", s.listPix)
	api.HandleFunc("PUT /v2/pix/{e2eid}/devolucao/{id}", s.putRefund)
	api.HandleFunc("GET /v2/pix/{e2eid}/devolucao/{id}", s.getRefund)
	api.HandleFunc("PUT /v2/webhook/{chave}", s.putWebhook)
	api.HandleFunc("GET /v2/webhook/{chave}", s.getWebhook)
	api.HandleFunc("DELETE /v2/webhook/{chave}", s.deleteWebhook)
	api.HandleFunc("PUT /v3/gn/pix/{idEnvio}", s.putSend)
	api.HandleFunc("GET /v2/gn/pix/enviados/id-envio/{idEnvio}", s.getSend)
	api.HandleFunc("GET /v2/gn/pix/enviados", s.listSends)
	api.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeProblem(w, http.StatusNotFound, "NaoEncontrado", "Não encontrado", "no such endpoint: "+r.Method+" "+r.URL.Path, nil)
	})
	var inner http.Handler = api
	if s.opts.Wrap != nil {
		inner = s.opts.Wrap(inner)
	}
	inner = s.withFaults(inner)
	inner = s.withRateLimit(s.withToken(inner))
	top := http.NewServeMux()
	top.HandleFunc("POST /oauth/token", s.token)
	top.Handle("/", inner)
	return s.withLog(s.withLatency(top))
}

// token is the OAuth 2.0 client-credentials grant. It takes the grant
// either as a form (RFC 6749) or as JSON (as Efí documents it).
func (s *Server) token(w http.ResponseWriter, r *http.Request) {
	id, secret, ok := r.BasicAuth()
	if !ok || subtle.ConstantTimeCompare([]byte(id), []byte(s.opts.ClientID)) != 1 ||
		subtle.ConstantTimeCompare([]byte(secret), []byte(s.opts.ClientSecret)) != 1 {
		w.Header().Set("WWW-Authenticate", `Basic realm="pspsim"`)
		writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "invalid_client", "error_description": "wrong client credentials"})
		return
	}
	var grant string
	if strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
		var body struct {
			GrantType string `json:"grant_type"`
		}
		b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
		if err == nil {
			_ = json.Unmarshal(b, &body)
		}
		grant = body.GrantType
	} else {
		r.Body = http.MaxBytesReader(w, r.Body, maxBody)
		if err := r.ParseForm(); err == nil {
			grant = r.PostForm.Get("grant_type")
		}
	}
	if grant != "client_credentials" {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "unsupported_grant_type"})
		return
	}
	tok := randomAlnum(48)
	s.mu.Lock()
	s.st.tokens[tok] = s.now().Add(s.opts.TokenLifetime)
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]any{
		"access_token": tok, "token_type": "Bearer", "expires_in": int(s.opts.TokenLifetime / time.Second),
		"scope": "cob.write cob.read pix.write pix.read webhook.write webhook.read gn.pix.send.write gn.pix.send.read",
	})
}

// ExpireTokens invalidates every access token issued so far: the next call
// with one answers 401.
func (s *Server) ExpireTokens() {
	s.mu.Lock()
	defer s.mu.Unlock()
	clear(s.st.tokens)
}

// withToken requires a valid, unexpired Bearer token, then settles what is
// due so that the handler sees the present.
func (s *Server) withToken(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		s.mu.Lock()
		exp, known := s.st.tokens[tok]
		valid := ok && known && s.now().Before(exp)
		s.mu.Unlock()
		if !valid {
			w.Header().Set("WWW-Authenticate", `Bearer realm="pspsim"`)
			writeProblem(w, http.StatusUnauthorized, "NaoAutorizado", "Não autorizado", "missing, unknown or expired access token", nil)
			return
		}
		s.settleDue(false)
		next.ServeHTTP(w, r)
	})
}

// cobRequest is the body of PUT and PATCH /cob/{txid}; pointers tell an
// absent field from an empty one.
type cobRequest struct {
	Calendario *struct {
		Expiracao *int `json:"expiracao"`
	} `json:"calendario"`
	Devedor *devedor `json:"devedor"`
	Valor   *struct {
		Original *string `json:"original"`
	} `json:"valor"`
	Chave              *string `json:"chave"`
	SolicitacaoPagador *string `json:"solicitacaoPagador"`
	Status             *string `json:"status"`
}

// check returns the violations of a cob request; create requires the
// fields a new cob needs.
func (s *Server) check(req *cobRequest, create bool) []violacao {
	var v []violacao
	add := func(prop, reason, val string) { v = append(v, violacao{Razao: reason, Propriedade: prop, Valor: val}) }
	if req.Calendario != nil && req.Calendario.Expiracao != nil && *req.Calendario.Expiracao <= 0 {
		add("cob.calendario.expiracao", "expiracao must be a positive number of seconds", strconv.Itoa(*req.Calendario.Expiracao))
	}
	if create && req.Calendario == nil {
		add("cob.calendario", "calendario is required", "")
	}
	switch {
	case req.Valor == nil || req.Valor.Original == nil:
		if create {
			add("cob.valor.original", "valor.original is required", "")
		}
	default:
		if c, ok := parseValor(*req.Valor.Original); !ok || c <= 0 {
			add("cob.valor.original", `valor.original must match ^\d{1,10}\.\d{2}$ and be above 0.00`, *req.Valor.Original)
		}
	}
	switch {
	case req.Chave == nil:
		if create {
			add("cob.chave", "chave is required", "")
		}
	case *req.Chave != s.opts.PixKey:
		add("cob.chave", "chave is not a key of this account", *req.Chave)
	}
	if d := req.Devedor; d != nil {
		switch {
		case d.CPF != "" && d.CNPJ != "":
			add("cob.devedor", "give cpf or cnpj, not both", "")
		case d.CPF != "" && (len(d.CPF) != 11 || !allDigits(d.CPF)):
			add("cob.devedor.cpf", "cpf must be 11 digits", d.CPF)
		case d.CNPJ != "" && !isCNPJ(d.CNPJ):
			add("cob.devedor.cnpj", "cnpj must be 14 characters of [0-9A-Z]", d.CNPJ)
		case d.CPF == "" && d.CNPJ == "":
			add("cob.devedor", "devedor needs cpf or cnpj", "")
		}
		if strings.TrimSpace(d.Nome) == "" || utf8.RuneCountInString(d.Nome) > 200 {
			add("cob.devedor.nome", "nome is required, at most 200 characters", d.Nome)
		}
	}
	if q := req.SolicitacaoPagador; q != nil && utf8.RuneCountInString(*q) > 140 {
		add("cob.solicitacaoPagador", "solicitacaoPagador is at most 140 characters", "")
	}
	if req.Status != nil && (create || *req.Status != CobRemovidaUR) {
		add("cob.status", "status can only be revised to "+CobRemovidaUR, *req.Status)
	}
	return v
}

func isCNPJ(s string) bool {
	if len(s) != 14 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !('0' <= c && c <= '9' || 'A' <= c && c <= 'Z') {
			return false
		}
	}
	return true
}

func (s *Server) putCob(w http.ResponseWriter, r *http.Request) {
	txid := r.PathValue("txid")
	if !isAlnum(txid, 26, 35) {
		writeProblem(w, http.StatusBadRequest, "CobOperacaoInvalida", "Cobrança inválida", "txid must be 26 to 35 of [a-zA-Z0-9]",
			[]violacao{{Razao: "txid must match ^[a-zA-Z0-9]{26,35}$", Propriedade: "cob.txid", Valor: txid}})
		return
	}
	var req cobRequest
	if !decodeBody(w, r, "CobOperacaoInvalida", &req) {
		return
	}
	if v := s.check(&req, true); len(v) > 0 {
		writeProblem(w, http.StatusBadRequest, "CobOperacaoInvalida", "Cobrança inválida", "the cob has invalid fields", v)
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
		writeProblem(w, http.StatusBadRequest, "CobOperacaoInvalida", "Cobrança inválida", "a cob with this txid already exists",
			[]violacao{{Razao: "txid already used", Propriedade: "cob.txid", Valor: txid}})
		return
	}
	s.st.nextLoc++
	c := &cob{TxID: txid, Created: s.now(), Expiracao: exp, LocID: s.st.nextLoc,
		Location: s.ln.Addr().String() + "/qr/v2/" + strings.ToLower(randomHex(32)),
		Status:   CobAtiva, Devedor: req.Devedor, Valor: valor, Chave: *req.Chave}
	if req.SolicitacaoPagador != nil {
		c.Solicitacao = *req.SolicitacaoPagador
	}
	code, err := dynamicBRCode(c.Location, s.opts.MerchantName, s.opts.MerchantCity, valor)
	if err != nil {
		writeProblem(w, http.StatusInternalServerError, "ErroInternoDoServidor", "Erro interno do servidor", err.Error(), nil)
		return
	}
	c.BRCode = code
	s.st.cobs[txid] = c
	writeJSON(w, http.StatusCreated, c.json())
}

func (s *Server) getCob(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.st.cobs[r.PathValue("txid")]
	if c == nil {
		writeProblem(w, http.StatusNotFound, "CobNaoEncontrado", "Cobrança não encontrada", "no cob with this txid", nil)
		return
	}
	writeJSON(w, http.StatusOK, c.json())
}

func (s *Server) patchCob(w http.ResponseWriter, r *http.Request) {
	var req cobRequest
	if !decodeBody(w, r, "CobOperacaoInvalida", &req) {
		return
	}
	if v := s.check(&req, false); len(v) > 0 {
		writeProblem(w, http.StatusBadRequest, "CobOperacaoInvalida", "Cobrança inválida", "the revision has invalid fields", v)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.st.cobs[r.PathValue("txid")]
	if c == nil {
		writeProblem(w, http.StatusNotFound, "CobNaoEncontrado", "Cobrança não encontrada", "no cob with this txid", nil)
		return
	}
	if c.Status != CobAtiva {
		writeProblem(w, http.StatusBadRequest, "CobOperacaoInvalida", "Cobrança inválida", "the cob is "+c.Status+" and can no longer be revised",
			[]violacao{{Razao: "only an ATIVA cob can be revised", Propriedade: "cob.status", Valor: c.Status}})
		return
	}
	if req.Status != nil {
		c.Status = *req.Status
	}
	if req.Valor != nil && req.Valor.Original != nil {
		c.Valor, _ = parseValor(*req.Valor.Original)
		if code, err := dynamicBRCode(c.Location, s.opts.MerchantName, s.opts.MerchantCity, c.Valor); err == nil {
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

func (s *Server) getPix(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.st.pix[r.PathValue("e2eid")]
	if p == nil {
		writeProblem(w, http.StatusNotFound, "PixNaoEncontrado", "Pix não encontrado", "no Pix with this endToEndId", nil)
		return
	}
	writeJSON(w, http.StatusOK, p.json())
}

// listPix is GET /pix: the Pix whose horario is within [inicio, fim], oldest
// first, one page.
func (s *Server) listPix(w http.ResponseWriter, r *http.Request) {
	inicio, fim, page, perPage, ok := listQuery(w, r, "PixConsultaInvalida")
	if !ok {
		return
	}
	txid := r.URL.Query().Get("txid")
	s.mu.Lock()
	items := []pixJSON{}
	total := 0
	for _, p := range s.st.pixOrder {
		if p.Horario.Before(inicio) || p.Horario.After(fim) || (txid != "" && p.TxID != txid) {
			continue
		}
		if total >= page*perPage && total < (page+1)*perPage {
			items = append(items, p.json())
		}
		total++
	}
	s.mu.Unlock()
	pages := max((total+perPage-1)/perPage, 1)
	writeJSON(w, http.StatusOK, map[string]any{
		"parametros": map[string]any{
			"inicio": formatTime(inicio), "fim": formatTime(fim),
			"paginacao": map[string]int{"paginaAtual": page, "itensPorPagina": perPage,
				"quantidadeDePaginas": pages, "quantidadeTotalDeItens": total},
		},
		"pix": items,
	})
}

func (s *Server) putRefund(w http.ResponseWriter, r *http.Request) {
	e2eid, id := r.PathValue("e2eid"), r.PathValue("id")
	var req struct {
		Valor     *string `json:"valor"`
		Descricao *string `json:"descricao"`
	}
	s.mu.Lock()
	c := s.st.refundPuts[id]
	c.Puts++
	s.st.refundPuts[id] = c
	s.mu.Unlock()
	if !isAlnum(id, 1, 35) {
		writeProblem(w, http.StatusBadRequest, "PixDevolucaoInvalida", "Devolução inválida", "id must be 1 to 35 of [a-zA-Z0-9]",
			[]violacao{{Razao: "id must match ^[a-zA-Z0-9]{1,35}$", Propriedade: "devolucao.id", Valor: id}})
		return
	}
	if !decodeBody(w, r, "PixDevolucaoInvalida", &req) {
		return
	}
	var valor int64
	var v []violacao
	if req.Valor == nil {
		v = append(v, violacao{Razao: "valor is required", Propriedade: "devolucao.valor"})
	} else if n, ok := parseValor(*req.Valor); !ok || n <= 0 {
		v = append(v, violacao{Razao: `valor must match ^\d{1,10}\.\d{2}$ and be above 0.00`, Propriedade: "devolucao.valor", Valor: *req.Valor})
	} else {
		valor = n
	}
	var desc string
	if req.Descricao != nil {
		desc = *req.Descricao
		if utf8.RuneCountInString(desc) > 140 {
			v = append(v, violacao{Razao: "descricao is at most 140 characters", Propriedade: "devolucao.descricao"})
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.st.pix[e2eid]
	if p == nil {
		writeProblem(w, http.StatusNotFound, "PixNaoEncontrado", "Pix não encontrado", "no Pix with this endToEndId", nil)
		return
	}
	if _, dup := s.st.refunds[e2eid+"/"+id]; dup {
		v = append(v, violacao{Razao: "a devolução with this id already exists", Propriedade: "devolucao.id", Valor: id})
	}
	if valor > 0 {
		left := p.Valor
		for _, rf := range p.Refunds {
			if rf.Status != NaoRealizado {
				left -= rf.Valor
			}
		}
		if valor > left {
			v = append(v, violacao{Razao: "valor is above what remains refundable (" + formatValor(left) + ")", Propriedade: "devolucao.valor", Valor: *req.Valor})
		}
	}
	if len(v) > 0 {
		writeProblem(w, http.StatusBadRequest, "PixDevolucaoInvalida", "Devolução inválida", "the devolução cannot be made", v)
		return
	}
	now := s.now()
	rf := &refund{ID: id, E2EID: e2eid, RtrID: newE2EID("D", now), Valor: valor, Descricao: desc, Requested: now, Status: EmProcessamento}
	s.st.refunds[e2eid+"/"+id] = rf
	p.Refunds = append(p.Refunds, rf)
	c = s.st.refundPuts[id]
	c.Accepted++
	s.st.refundPuts[id] = c
	writeJSON(w, http.StatusCreated, rf.json())
}

func (s *Server) getRefund(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rf := s.st.refunds[r.PathValue("e2eid")+"/"+r.PathValue("id")]
	if rf == nil {
		writeProblem(w, http.StatusNotFound, "PixDevolucaoNaoEncontrada", "Devolução não encontrada", "no devolução with this id for this Pix", nil)
		return
	}
	writeJSON(w, http.StatusOK, rf.json())
}

func (s *Server) putWebhook(w http.ResponseWriter, r *http.Request) {
	var req struct {
		WebhookURL string `json:"webhookUrl"`
	}
	if !decodeBody(w, r, "WebhookOperacaoInvalida", &req) {
		return
	}
	if r.PathValue("chave") != s.opts.PixKey {
		writeProblem(w, http.StatusBadRequest, "WebhookOperacaoInvalida", "Webhook inválido", "the key is not a key of this account",
			[]violacao{{Razao: "chave is not a key of this account", Propriedade: "chave", Valor: r.PathValue("chave")}})
		return
	}
	u, err := url.Parse(req.WebhookURL)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		writeProblem(w, http.StatusBadRequest, "WebhookOperacaoInvalida", "Webhook inválido", "webhookUrl must be an absolute http(s) URL",
			[]violacao{{Razao: "webhookUrl must be an absolute URL", Propriedade: "webhookUrl", Valor: req.WebhookURL}})
		return
	}
	s.mu.Lock()
	s.st.webhook = &webhookReg{URL: req.WebhookURL, Created: s.now(), SkipMTLS: r.Header.Get("x-skip-mtls-checking") == "true"}
	s.mu.Unlock()
	// Efí answers the registration with its URL; the API Pix documents no
	// body. pixgate must take either.
	writeJSON(w, http.StatusOK, map[string]string{"webhookUrl": req.WebhookURL})
}

func (s *Server) getWebhook(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	wh := s.st.webhook
	if wh == nil || r.PathValue("chave") != s.opts.PixKey {
		writeProblem(w, http.StatusNotFound, "WebhookNaoEncontrado", "Webhook não encontrado", "no webhook for this key", nil)
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"webhookUrl": wh.URL, "chave": s.opts.PixKey, "cnpj": s.opts.CNPJ, "criacao": formatTime(wh.Created)})
}

func (s *Server) deleteWebhook(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.st.webhook == nil || r.PathValue("chave") != s.opts.PixKey {
		writeProblem(w, http.StatusNotFound, "WebhookNaoEncontrado", "Webhook não encontrado", "no webhook for this key", nil)
		return
	}
	s.st.webhook = nil
	w.WriteHeader(http.StatusNoContent)
}

// putSend is Efí's PUT /v3/gn/pix/{idEnvio}.
func (s *Server) putSend(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("idEnvio")
	var req struct {
		Valor   string `json:"valor"`
		Pagador struct {
			Chave       string `json:"chave"`
			InfoPagador string `json:"infoPagador"`
		} `json:"pagador"`
		Favorecido struct {
			Chave string `json:"chave"`
		} `json:"favorecido"`
	}
	s.mu.Lock()
	c := s.st.sendPuts[id]
	c.Puts++
	s.st.sendPuts[id] = c
	s.mu.Unlock()
	if !isAlnum(id, 1, 35) {
		writeProblem(w, http.StatusBadRequest, "EnvioInvalido", "Envio inválido", "idEnvio must be 1 to 35 of [a-zA-Z0-9]", nil)
		return
	}
	if !decodeBody(w, r, "EnvioInvalido", &req) {
		return
	}
	var v []violacao
	valor, ok := parseValor(req.Valor)
	if !ok || valor <= 0 {
		v = append(v, violacao{Razao: `valor must match ^\d{1,10}\.\d{2}$ and be above 0.00`, Propriedade: "valor", Valor: req.Valor})
	}
	if req.Pagador.Chave != s.opts.PixKey {
		v = append(v, violacao{Razao: "pagador.chave is not a key of this account", Propriedade: "pagador.chave", Valor: req.Pagador.Chave})
	}
	if req.Favorecido.Chave == "" || len(req.Favorecido.Chave) > 77 {
		v = append(v, violacao{Razao: "favorecido.chave is required, at most 77 characters", Propriedade: "favorecido.chave"})
	}
	if utf8.RuneCountInString(req.Pagador.InfoPagador) > 140 {
		v = append(v, violacao{Razao: "infoPagador is at most 140 characters", Propriedade: "pagador.infoPagador"})
	}
	if len(v) > 0 {
		writeProblem(w, http.StatusBadRequest, "EnvioInvalido", "Envio inválido", "the send has invalid fields", v)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, dup := s.st.sends[id]; dup {
		writeProblem(w, http.StatusConflict, "EnvioDuplicado", "Envio duplicado", "a send with this idEnvio already exists", nil)
		return
	}
	now := s.now()
	sd := &send{IDEnvio: id, E2EID: newE2EID("E", now), Valor: valor, PagadorKey: req.Pagador.Chave, InfoPagador: req.Pagador.InfoPagador,
		Favorecido: req.Favorecido.Chave, Requested: now, Status: EmProcessamento}
	s.st.sends[id] = sd
	s.st.addSendInOrder(sd)
	c = s.st.sendPuts[id]
	c.Accepted++
	s.st.sendPuts[id] = c
	writeJSON(w, http.StatusCreated, map[string]any{"idEnvio": id, "e2eId": sd.E2EID, "valor": formatValor(valor),
		"horario": map[string]string{"solicitacao": formatTime(now)}, "status": EmProcessamento})
}

// getSend is Efí's GET /v2/gn/pix/enviados/id-envio/{idEnvio}.
func (s *Server) getSend(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sd := s.st.sends[r.PathValue("idEnvio")]
	if sd == nil {
		writeProblem(w, http.StatusNotFound, "EnvioNaoEncontrado", "Envio não encontrado", "no send with this idEnvio", nil)
		return
	}
	writeJSON(w, http.StatusOK, sd.json())
}
