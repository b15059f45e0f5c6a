// Package admin is pixgate's administration panel at /admin: server-rendered
// pages (html/template, embedded assets, no JavaScript framework) in
// Portuguese and English for operators, who see every client, and merchant
// users, who see only their own. It owns the panel's sessions (in the
// database, cookie HttpOnly + SameSite=Strict, Secure outside the sandbox),
// per-session CSRF tokens, bcrypt passwords and the login rate limit. Money
// goes through the gateway's use cases (Gateway); its users, sessions, the
// operators' tools (clients, unmatched receipts, suspense, the PSP's
// health) and the read-only views through the back office (Backoffice):
// the panel never opens the store itself.
package admin

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"net/url"
	"sync"
	"time"
	_ "time/tzdata" // the panel shows São Paulo time on any host

	"golang.org/x/crypto/bcrypt"

	"github.com/pixgate/pixgate/internal/backoffice"
	"github.com/pixgate/pixgate/internal/ledger"
	"github.com/pixgate/pixgate/internal/pix"
)

//go:embed web
var webFS embed.FS

// CSP is the Content-Security-Policy of every panel response: only this
// origin's stylesheet and script, images inline (data:) or from here, forms
// posting back here, never framed.
const CSP = "default-src 'none'; style-src 'self'; script-src 'self'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

// SessionTTL is how long a login lasts.
const SessionTTL = 12 * time.Hour

// Options configure the panel.
type Options struct {
	Gateway    Gateway
	Backoffice Backoffice
	Log        *slog.Logger
	// SessionTTL overrides SessionTTL when positive.
	SessionTTL time.Duration
	// PasswordCost is the bcrypt cost of the users' hashes (0 means
	// PasswordCost); a login for an unknown e-mail spends the same.
	PasswordCost int
}

// Handler serves /admin/.
type Handler struct {
	gw      Gateway
	bo      Backoffice
	log     *slog.Logger
	sandbox bool
	secure  bool // cookies Secure (everywhere but the sandbox)
	ttl     time.Duration
	loc     *time.Location
	mux     *http.ServeMux
	pages   map[string]*template.Template
	assets  http.Handler
	// dummyHash is compared against when the e-mail is unknown, so a failed
	// login takes as long whether or not the user exists.
	dummyHash func() []byte
}

// New returns the panel for the gateway's environment.
func New(o Options) (*Handler, error) {
	loc, err := time.LoadLocation("America/Sao_Paulo")
	if err != nil {
		return nil, fmt.Errorf("admin: %w", err)
	}
	pages, err := parsePages()
	if err != nil {
		return nil, err
	}
	log := o.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	ttl := o.SessionTTL
	if ttl <= 0 {
		ttl = SessionTTL
	}
	assets, err := fs.Sub(webFS, "web/assets")
	if err != nil {
		return nil, fmt.Errorf("admin: %w", err)
	}
	h := &Handler{gw: o.Gateway, bo: o.Backoffice, log: log, sandbox: o.Gateway.Sandbox() != nil,
		secure: !o.Gateway.InSandbox(), ttl: ttl, loc: loc, pages: pages,
		assets: http.StripPrefix("/admin/assets/", http.FileServerFS(assets))}
	cost := o.PasswordCost
	if cost == 0 {
		cost = PasswordCost
	}
	h.dummyHash = sync.OnceValue(func() []byte {
		hash, err := bcrypt.GenerateFromPassword([]byte("pixgate: no such user"), cost)
		if err != nil {
			panic(err)
		}
		return hash
	})
	h.routes()
	return h, nil
}

// routes is the panel's one route table.
func (h *Handler) routes() {
	m := http.NewServeMux()
	m.Handle("GET /admin/assets/{file}", h.assets)
	m.Handle("GET /admin/login", h.handle(h.loginPage))
	m.Handle("POST /admin/login", h.handle(h.login))
	m.Handle("POST /admin/logout", h.authed(h.logout))
	m.Handle("GET /admin/{$}", h.authed(h.home))
	m.Handle("GET /admin/clients", h.operator(h.clientsPage))
	m.Handle("POST /admin/clients", h.operator(h.createClient))
	m.Handle("GET /admin/unmatched", h.operator(h.unmatchedPage))
	m.Handle("POST /admin/unmatched/{id}/return", h.operator(h.returnUnmatched))
	m.Handle("GET /admin/statement", h.authed(h.statementPage))
	m.Handle("GET /admin/statement/download", h.authed(h.statementDownload))
	m.Handle("GET /admin/c/{client}/{$}", h.authed(h.clientOverview))
	m.Handle("GET /admin/c/{client}/transactions", h.authed(h.transactions))
	m.Handle("GET /admin/c/{client}/transactions/{id}", h.authed(h.transaction))
	m.Handle("GET /admin/c/{client}/accounts", h.authed(h.subAccounts))
	m.Handle("GET /admin/recurrences", h.authed(h.recurrences))
	m.Handle("GET /admin/c/{client}/recurrences/{id}", h.authed(h.recurrence))
	m.Handle("GET /admin/disputes", h.authed(h.disputes))
	m.Handle("GET /admin/batches", h.authed(h.batches))
	m.Handle("GET /admin/scheduled", h.authed(h.scheduled))
	m.Handle("GET /admin/c/{client}/batches/{id}", h.authed(h.batch))
	m.Handle("POST /admin/c/{client}/events/{event}/retry", h.authed(h.retryEvent))
	m.Handle("GET /admin/c/{client}/settings", h.authed(h.settings))
	m.Handle("POST /admin/c/{client}/settings/secret", h.authed(h.rotateSecret))
	m.Handle("POST /admin/c/{client}/settings/webhook-secret", h.authed(h.rotateWebhookSecret))
	m.Handle("POST /admin/c/{client}/settings/fees", h.operator(h.setFees))
	m.Handle("POST /admin/c/{client}/settings/disable", h.operator(h.disableClient))
	if h.sandbox {
		m.Handle("POST /admin/c/{client}/transactions/{id}/pay", h.authed(h.sandboxPay))
		m.Handle("POST /admin/c/{client}/transactions/{id}/expire", h.authed(h.sandboxExpire))
	}
	h.mux = m
}

// ServeHTTP sets the security headers of every panel response and routes;
// unknown paths and wrong methods get the panel's own pages.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	hd := w.Header()
	hd.Set("Content-Security-Policy", CSP)
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("X-Frame-Options", "DENY")
	hd.Set("Referrer-Policy", "same-origin")
	hd.Set("Cache-Control", "no-store")
	hd.Set("Cross-Origin-Opener-Policy", "same-origin")
	// PostgreSQL refuses a NUL byte or invalid UTF-8 in text, so such a
	// path or query (a search, an id) is the client's mistake, answered
	// here before any handler sends it to the database.
	if !pix.ValidText(r.URL.Path) || !validValues(r.URL.Query()) {
		h.fail(w, r, errBadInput)
		return
	}
	if _, pattern := h.mux.Handler(r); pattern == "" {
		h.fail(w, r, errNotFound)
		return
	}
	h.mux.ServeHTTP(w, r)
}

// httpError is an error with the page to show for it.
type httpError struct {
	status int
	key    string
	args   []any
}

func (e *httpError) Error() string { return fmt.Sprintf("admin: %d %s", e.status, e.key) }

var (
	errBadInput  = &httpError{status: http.StatusBadRequest, key: "error.400"}
	errNotFound  = &httpError{status: http.StatusNotFound, key: "error.404"}
	errForbidden = &httpError{status: http.StatusForbidden, key: "error.403"}
)

// validValues reports whether every key and value of a query or form is
// valid text.
func validValues(vs url.Values) bool {
	for k, list := range vs {
		if !pix.ValidText(k) {
			return false
		}
		for _, v := range list {
			if !pix.ValidText(v) {
				return false
			}
		}
	}
	return true
}

type handlerFunc func(w http.ResponseWriter, r *http.Request) error

// handle adapts a handler that returns an error: errors become pages here.
func (h *Handler) handle(f handlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := f(w, r); err != nil {
			h.fail(w, r, err)
		}
	})
}

func (h *Handler) fail(w http.ResponseWriter, r *http.Request, err error) {
	var he *httpError
	if !errors.As(err, &he) {
		h.log.ErrorContext(r.Context(), "admin request failed", "method", r.Method, "route", r.Pattern, "error", err.Error())
		he = &httpError{status: http.StatusInternalServerError, key: "error.500"}
	}
	v := &view{Page: "error", D: errorData{Status: he.status, Key: he.key, Args: he.args}}
	if s, ok := sessionFrom(r); ok {
		v.session(s)
	}
	h.render(w, r, he.status, v)
}

// ledgerArgs feeds the ledger partial.
type ledgerArgs struct {
	L        lang
	Postings []ledger.PostingRecord
}

// clientRowArgs feeds the clientrow template: one line of the list of
// clients, a parent's or, indented beneath it, a sub-account's.
type clientRowArgs struct {
	L   lang
	Row backoffice.AccountRow
	Sub bool
}

// errorData is what the error page shows.
type errorData struct {
	Status int
	Key    string
	Args   []any
}

// view is what every page template receives.
type view struct {
	L        lang
	Page     string // template name, also the active navigation item
	LoggedIn bool
	User     pix.User
	CSRF     string
	Sandbox  bool
	Client   *pix.Client // the client the page is about, if any
	// Parent is Client's parent when Client is a sub-account; ReadOnly
	// says the viewer is that parent's merchant user, who reads the
	// sub-account's pages but is offered no action on them.
	Parent   *pix.Client
	ReadOnly bool
	Notice   string // message key of a success notice
	Alert    string // message key of an error notice
	LangPT   string // this page in Portuguese
	LangEN   string // this page in English
	Self     string // the GET page a POST's answer stands for, if any
	D        any    // the page's own data
}

func (v *view) session(s *session) {
	v.LoggedIn, v.User, v.CSRF = true, s.user, s.session.CSRFToken
}

// Operator reports whether the viewer sees every client.
func (v *view) Operator() bool { return v.LoggedIn && v.User.Role == pix.RoleOperator }

// ClientBase is the path prefix of the current client's pages.
func (v *view) ClientBase() string {
	if v.Client == nil {
		return ""
	}
	return "/admin/c/" + url.PathEscape(v.Client.ID)
}

// render executes the page into a buffer first, so a template error never
// sends half a page.
func (h *Handler) render(w http.ResponseWriter, r *http.Request, status int, v *view) {
	v.L = pickLang(w, r, h.loc, h.secure)
	v.Sandbox = h.sandbox
	h.parentOf(r, v)
	if r.Method == http.MethodGet {
		v.LangPT, v.LangEN = withLang(r.URL, langPT), withLang(r.URL, langEN)
	} else {
		// A page answering a POST (a secret shown once) cannot be reloaded:
		// switching language goes to the page's GET form.
		self := &url.URL{Path: v.Self}
		if v.Self == "" {
			self.Path = "/admin/"
		}
		v.LangPT, v.LangEN = withLang(self, langPT), withLang(self, langEN)
	}
	t, ok := h.pages[v.Page]
	if !ok {
		t = h.pages["error"]
	}
	var buf bytes.Buffer
	if err := t.ExecuteTemplate(&buf, "layout", v); err != nil {
		h.log.ErrorContext(r.Context(), "admin template failed", "page", v.Page, "error", err.Error())
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

func withLang(u *url.URL, code string) string {
	q := u.Query()
	q.Set("lang", code)
	c := url.URL{Path: u.Path, RawQuery: q.Encode()}
	return c.String()
}

// redirect answers a POST with 303 See Other to path (always a local path
// this package built).
func redirect(w http.ResponseWriter, path string) error {
	w.Header().Set("Location", path)
	w.WriteHeader(http.StatusSeeOther)
	return nil
}

func parsePages() (map[string]*template.Template, error) {
	names := []string{"login", "error", "home", "overview", "clients", "client_created", "transactions", "transaction", "settings", "statement", "unmatched", "recurrences", "recurrence", "disputes", "accounts", "batches", "batch", "scheduled"}
	out := make(map[string]*template.Template, len(names))
	for _, name := range names {
		t, err := template.New(name).Funcs(funcs).ParseFS(webFS, "web/layout.html", "web/partials.html", "web/"+name+".html")
		if err != nil {
			return nil, fmt.Errorf("admin: parse %s: %w", name, err)
		}
		out[name] = t
	}
	return out, nil
}

var funcs = template.FuncMap{
	"txURL":       txPath,
	"recURL":      recurrencePath,
	"recsURL":     recurrencesPath,
	"dispsURL":    disputesPath,
	"batchURL":    batchPath,
	"ledger":      func(l lang, ps []ledger.PostingRecord) ledgerArgs { return ledgerArgs{L: l, Postings: ps} },
	"clientURL":   clientBase,
	"accountsURL": accountsPath,
	"clientRow": func(l lang, row backoffice.AccountRow, sub bool) clientRowArgs {
		return clientRowArgs{L: l, Row: row, Sub: sub}
	},
	"int64": func(n int) int64 { return int64(n) },
	// maskDoc is how the panel shows a sub-account's CPF or CNPJ: enough
	// to tell two apart, never the whole number.
	"maskDoc": func(s string) string {
		if s == "" {
			return "—"
		}
		return pix.MaskDocument(s)
	},
	"pathEscape":  url.PathEscape,
	"queryEscape": url.QueryEscape,
	"ms":          func(d time.Duration) int64 { return d.Milliseconds() },
	"shortID":     shortID,
	// inc counts a recurrence's cycles from 1, as people do; the store
	// numbers them from 0.
	"inc": func(n int) int { return n + 1 },
}

// shortID is the first 8 characters of an id and an ellipsis: what a phone's
// transactions table shows, the full id being on the detail page it links to.
func shortID(id string) string {
	if len(id) <= 9 {
		return id
	}
	return id[:8] + "…"
}
