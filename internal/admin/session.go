package admin

import (
	"context"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/pixgate/pixgate/internal/backoffice"
	"github.com/pixgate/pixgate/internal/pix"
)

// Login rate limit: at most LoginMaxFailures failed logins per e-mail and
// address, and loginMaxPerIP per address for any e-mail, in any LoginWindow
// (an IPv6 address counts as its /64: see loginKey).
const (
	LoginMaxFailures = 5
	LoginWindow      = 15 * time.Minute
	loginMaxPerIP    = 100
	maxFormBytes     = 64 << 10
)

// session is the logged-in user of a request.
type session struct {
	session pix.Session
	user    pix.User
}

type ctxKey struct{}

func sessionFrom(r *http.Request) (*session, bool) {
	s, ok := r.Context().Value(ctxKey{}).(*session)
	return s, ok
}

// Cookie names. Outside the sandbox the session cookies carry the __Host-
// prefix, which browsers accept only with Secure, Path=/ and no Domain.
func (h *Handler) sessionCookie() string {
	if h.secure {
		return "__Host-pixgate_session"
	}
	return "pixgate_session"
}

func (h *Handler) loginCookie() string {
	if h.secure {
		return "__Host-pixgate_login"
	}
	return "pixgate_login"
}

func (h *Handler) setCookie(w http.ResponseWriter, name, value string, maxAge int) {
	//nolint:gosec // G124: Secure is set outside the sandbox, which serves plain http.
	http.SetCookie(w, &http.Cookie{Name: name, Value: value, Path: "/", MaxAge: maxAge,
		HttpOnly: true, Secure: h.secure, SameSite: http.SameSiteStrictMode})
}

// randomToken returns 32 random bytes as URL-safe Base64.
func (h *Handler) randomToken() (string, error) {
	b := make([]byte, 32)
	if _, err := io.ReadFull(h.bo.Rand(), b); err != nil {
		return "", fmt.Errorf("random token: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// sessionID is the stored id of a session token: hex SHA-256.
func sessionID(token string) string { return pix.HashSecret(token) }

func (h *Handler) now() time.Time { return h.bo.Now().UTC().Truncate(time.Millisecond) }

// errNoSession is currentSession's answer for a request without a live
// session.
var errNoSession = errors.New("admin: no session")

// currentSession returns the request's live session, or errNoSession.
func (h *Handler) currentSession(r *http.Request) (*session, error) {
	c, err := r.Cookie(h.sessionCookie())
	if err != nil || c.Value == "" || len(c.Value) > 100 {
		return nil, errNoSession
	}
	s, u, err := h.bo.SessionUser(r.Context(), sessionID(c.Value), h.now())
	if pix.ErrorCode(err) == pix.ENotFound {
		return nil, errNoSession
	}
	if err != nil {
		return nil, err
	}
	return &session{session: s, user: u}, nil
}

// authed serves f only to a logged-in user; anyone else is sent to the
// login page. Every POST must carry the session's CSRF token.
func (h *Handler) authed(f handlerFunc) http.Handler {
	return h.handle(func(w http.ResponseWriter, r *http.Request) error {
		s, err := h.currentSession(r)
		if errors.Is(err, errNoSession) {
			if r.Method == http.MethodGet {
				return redirect(w, "/admin/login")
			}
			return redirect(w, "/admin/login?m=expired")
		}
		if err != nil {
			return err
		}
		if r.Method == http.MethodPost {
			if err := h.checkForm(w, r, s.session.CSRFToken); err != nil {
				return err
			}
		}
		return f(w, r.WithContext(context.WithValue(r.Context(), ctxKey{}, s)))
	})
}

// operator is authed for operators only; merchant users get 404, as for
// any page they may not see.
func (h *Handler) operator(f handlerFunc) http.Handler {
	return h.authed(func(w http.ResponseWriter, r *http.Request) error {
		s, _ := sessionFrom(r)
		if s.user.Role != pix.RoleOperator {
			return errNotFound
		}
		return f(w, r)
	})
}

// checkForm parses a POST form and requires its csrf field to equal want,
// compared in constant time. A request the browser marks as coming from
// another site is refused whatever it carries.
func (h *Handler) checkForm(w http.ResponseWriter, r *http.Request, want string) error {
	if site := r.Header.Get("Sec-Fetch-Site"); site == "cross-site" || site == "same-site" {
		return errForbidden
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
	if err := r.ParseForm(); err != nil {
		return errForbidden
	}
	got := r.PostForm.Get("csrf")
	if want == "" || subtle.ConstantTimeCompare([]byte(got), []byte(want)) != 1 {
		return errForbidden
	}
	if !validValues(r.PostForm) {
		return errBadInput
	}
	return nil
}

type loginData struct {
	Email string
}

func (h *Handler) loginPage(w http.ResponseWriter, r *http.Request) error {
	if _, err := h.currentSession(r); err == nil {
		return redirect(w, "/admin/")
	}
	tok, err := h.randomToken()
	if err != nil {
		return err
	}
	h.setCookie(w, h.loginCookie(), tok, 3600)
	v := &view{Page: "login", CSRF: tok, D: loginData{}}
	switch r.URL.Query().Get("m") {
	case "expired":
		v.Alert = "login.expired"
	case "loggedout":
		v.Notice = "login.loggedout"
	}
	h.render(w, r, http.StatusOK, v)
	return nil
}

// login checks the rate limit, then the password; on success it starts a
// new session (a fresh token: a session id never survives a login).
func (h *Handler) login(w http.ResponseWriter, r *http.Request) error {
	c, err := r.Cookie(h.loginCookie())
	if err != nil {
		return errForbidden
	}
	if err := h.checkForm(w, r, c.Value); err != nil {
		return err
	}
	ctx := r.Context()
	email := normalizeEmail(r.PostForm.Get("email"))
	password := r.PostForm.Get("password")
	if len(email) > 254 {
		email = email[:254]
	}
	ip := loginKey(remoteIP(r))
	now := h.now()

	// Every attempt is logged before the password is checked (a success
	// clears the log), so concurrent guesses count too.
	limited, err := h.bo.NoteLoginAttempt(ctx, email, ip, now, backoffice.LoginLimit{PerPair: LoginMaxFailures, PerIP: loginMaxPerIP, Window: LoginWindow})
	if err != nil {
		return err
	}
	if limited {
		h.log.WarnContext(ctx, "admin login rate limited", "ip", ip)
		minutes := int(LoginWindow / time.Minute)
		w.Header().Set("Retry-After", fmt.Sprint(int(LoginWindow/time.Second)))
		return &httpError{status: http.StatusTooManyRequests, key: "error.429", args: []any{minutes}}
	}

	u, err := h.bo.UserByEmail(ctx, email)
	if err != nil && pix.ErrorCode(err) != pix.ENotFound {
		return err
	}
	hash := []byte(u.PasswordHash)
	if err != nil {
		hash = h.dummyHash()
	}
	ok := bcrypt.CompareHashAndPassword(hash, []byte(password)) == nil && err == nil && len(password) <= 72
	if ok && u.Role != pix.RoleOperator {
		// A disabled client's users are refused as the API refuses the
		// client: with the same answer as a wrong password, so the form
		// tells nobody which passwords are right; the attempt stays counted.
		if ok, err = h.clientActive(ctx, u.ClientID); err != nil {
			return err
		}
		if !ok {
			h.log.InfoContext(ctx, "admin login refused: client disabled", "user_id", u.ID, "client_id", u.ClientID)
		}
	}
	if !ok {
		v := &view{Page: "login", Self: "/admin/login", CSRF: c.Value, Alert: "login.failed", D: loginData{Email: email}}
		h.render(w, r, http.StatusUnauthorized, v)
		return nil
	}

	tok, err := h.randomToken()
	if err != nil {
		return err
	}
	csrf, err := h.randomToken()
	if err != nil {
		return err
	}
	sess := pix.Session{ID: sessionID(tok), UserID: u.ID, CSRFToken: csrf, CreatedAt: now, ExpiresAt: now.Add(h.ttl)}
	replaced := ""
	if old, _ := r.Cookie(h.sessionCookie()); old != nil && old.Value != "" {
		replaced = sessionID(old.Value)
	}
	if err := h.bo.StartSession(ctx, sess, replaced, email, ip, LoginWindow); err != nil {
		return err
	}
	h.log.InfoContext(ctx, "admin login", "user_id", u.ID, "role", u.Role)
	h.setCookie(w, h.sessionCookie(), tok, int(h.ttl/time.Second))
	h.setCookie(w, h.loginCookie(), "", -1)
	return redirect(w, "/admin/")
}

// clientActive reports whether the client exists and is active.
func (h *Handler) clientActive(ctx context.Context, clientID string) (bool, error) {
	c, err := h.gw.Client(ctx, clientID)
	if pix.ErrorCode(err) == pix.ENotFound {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return c.Status == pix.ClientActive, nil
}

func (h *Handler) logout(w http.ResponseWriter, r *http.Request) error {
	s, _ := sessionFrom(r)
	if err := h.bo.EndSession(r.Context(), s.session.ID); err != nil {
		return err
	}
	h.setCookie(w, h.sessionCookie(), "", -1)
	return redirect(w, "/admin/login?m=loggedout")
}

// remoteIP is the address the connection comes from. X-Forwarded-For is
// not trusted: behind a proxy every user shares the proxy's address.
func remoteIP(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// loginKey is the address the login limit counts attempts under: an IPv4
// address itself, an IPv6 address its /64, since one subscriber is
// usually given a whole /64 and could otherwise take a fresh address for
// every guess.
func loginKey(ip string) string {
	a, err := netip.ParseAddr(ip)
	if err != nil {
		return ip
	}
	a = a.Unmap().WithZone("")
	if a.Is4() {
		return a.String()
	}
	return netip.PrefixFrom(a, 64).Masked().String()
}
