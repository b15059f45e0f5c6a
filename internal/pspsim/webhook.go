package pspsim

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// This file is the webhooks: their registration (API Pix /webhook/{chave},
// /webhookrec and /webhookcobr) and the deliveries to them.

type webhookReg struct {
	URL      string
	Created  time.Time
	SkipMTLS bool
}

// hookKindOf is what the handlers of the webhook of kind ("" for Pix, "rec"
// or "cobr") answer.
func hookKindOf(kind string) resource {
	k := resource{refused: "WebhookOperacaoInvalida", refusedTitle: "Webhook inválido",
		missing: "WebhookNaoEncontrado", missingTitle: "Webhook não encontrado", missingDetail: "no webhook for this key"}
	if kind != "" {
		k.missingDetail = "no webhook" + kind + " registered"
	}
	return k
}

// webhookSlot is where the webhook of kind is registered (s.mu held): for
// Pix ("") the account's under its key chave, and none for another key.
func (s *Server) webhookSlot(kind, chave string) **webhookReg {
	switch kind {
	case "":
		if chave != s.opts.PixKey {
			var none *webhookReg
			return &none
		}
		return &s.st.webhook
	case "rec":
		return &s.books().hookRec
	default:
		return &s.books().hookCobr
	}
}

// readWebhook reads a registration's webhookUrl; false after answering 400
// when the body is not JSON, when the key is not the account's (keyOK
// false) or when the URL is not an absolute http(s) one.
func readWebhook(w http.ResponseWriter, r *http.Request, keyOK bool) (string, bool) {
	var req struct {
		WebhookURL string `json:"webhookUrl"`
	}
	k := hookKindOf("")
	if !k.decode(w, r, &req) {
		return "", false
	}
	if !keyOK {
		k.refuse(w, "the key is not a key of this account",
			violacao{Razao: "chave is not a key of this account", Propriedade: "chave", Valor: r.PathValue("chave")})
		return "", false
	}
	u, err := url.Parse(req.WebhookURL)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		k.refuse(w, "webhookUrl must be an absolute http(s) URL",
			violacao{Razao: "webhookUrl must be an absolute URL", Propriedade: "webhookUrl", Valor: req.WebhookURL})
		return "", false
	}
	return req.WebhookURL, true
}

// register reads the registration of the webhook of kind (chave for Pix)
// and registers it; false after answering its refusal.
func (s *Server) register(w http.ResponseWriter, r *http.Request, kind, chave string) (string, bool) {
	u, ok := readWebhook(w, r, kind != "" || chave == s.opts.PixKey)
	if !ok {
		return "", false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	*s.webhookSlot(kind, chave) = &webhookReg{URL: u, Created: s.now(), SkipMTLS: r.Header.Get("x-skip-mtls-checking") == "true"}
	return u, true
}

// unregister removes the webhook of kind (chave for Pix): 204, or its 404.
func (s *Server) unregister(w http.ResponseWriter, kind, chave string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	slot := s.webhookSlot(kind, chave)
	if found(w, hookKindOf(kind), *slot) == nil {
		return
	}
	*slot = nil
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) putWebhook(w http.ResponseWriter, r *http.Request) {
	if u, ok := s.register(w, r, "", r.PathValue("chave")); ok {
		// Efí answers the registration with its URL; the API Pix documents
		// no body. pixgate must take either.
		writeJSON(w, http.StatusOK, map[string]string{"webhookUrl": u})
	}
}

func (s *Server) getWebhook(w http.ResponseWriter, r *http.Request) {
	show(s, w, hookKindOf(""), func() *webhookReg { return *s.webhookSlot("", r.PathValue("chave")) }, func(wh *webhookReg) map[string]string {
		return map[string]string{"webhookUrl": wh.URL, "chave": s.opts.PixKey, "cnpj": s.opts.CNPJ, "criacao": formatTime(wh.Created)}
	})
}

func (s *Server) deleteWebhook(w http.ResponseWriter, r *http.Request) {
	s.unregister(w, "", r.PathValue("chave"))
}

// putHook is PUT /webhookrec or /webhookcobr (kind "rec" or "cobr").
func (s *Server) putHook(w http.ResponseWriter, r *http.Request, kind string) {
	if _, ok := s.register(w, r, kind, ""); ok {
		w.WriteHeader(http.StatusOK)
	}
}

func (s *Server) getHook(w http.ResponseWriter, kind string) {
	show(s, w, hookKindOf(kind), func() *webhookReg { return *s.webhookSlot(kind, "") }, func(wh *webhookReg) map[string]string {
		return map[string]string{"webhookUrl": wh.URL, "criacao": formatTime(wh.Created)}
	})
}

// notice is a notification to deliver once s.mu is released: kind "rec"
// or "cobr", and the item.
type notice struct {
	kind string
	id   string
	item any
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

// deliverNotices posts each notice to its registered webhook, once: recs
// to <webhookrec URL>/rec as {"recs": […]}, cobrs to <webhookcobr
// URL>/cobr as {"cobsr": […]}, one item a POST. Like Pix webhooks they may
// be lost on purpose (LoseWebhooks) and are logged in Deliveries.
func (s *Server) deliverNotices(ctx context.Context, notes []notice) {
	for _, n := range notes {
		s.mu.Lock()
		wh := *s.webhookSlot(n.kind, "")
		s.mu.Unlock()
		key := "recs"
		if n.kind == "cobr" {
			key = "cobsr"
		}
		s.post(ctx, wh, n.kind, Delivery{IDs: []string{n.id}}, map[string]any{key: []any{n.item}})
	}
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
		s.deliveries = appendBounded(s.deliveries, d)
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

// appendBounded appends x to a log of at most maxLogged entries, dropping
// the oldest.
func appendBounded[T any](log []T, x T) []T {
	if len(log) >= maxLogged {
		log = log[1:]
	}
	return append(log, x)
}
