package pspsim

import (
	"crypto/subtle"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"time"
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
	api.HandleFunc("GET /v2/gn/infracoes", s.listInfractions)
	api.HandleFunc("POST /v2/gn/infracoes/{idInfracao}/defesa", s.postDefense)
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
		"scope": "cob.write cob.read pix.write pix.read webhook.write webhook.read gn.pix.send.write gn.pix.send.read gn.infractions.read gn.infractions.write",
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
