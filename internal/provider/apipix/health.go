package apipix

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/pixgate/pixgate/internal/provider"
)

// health is what the calls of a Client have seen of the PSP. Every call
// records its outcome here, so it is safe for concurrent use.
type health struct {
	now func() time.Time
	mu  sync.Mutex
	h   provider.Health
}

// answered records a call that got an answer from the PSP.
func (h *health) answered() {
	t := h.now()
	h.mu.Lock()
	defer h.mu.Unlock()
	h.h.Up, h.h.LastSuccess = true, t
}

// failed records a call that failed with class (a provider.Fail* class).
func (h *health) failed(class string) {
	t := h.now()
	h.mu.Lock()
	defer h.mu.Unlock()
	h.h.Up, h.h.LastFailure, h.h.LastFailClass = false, t, class
}

// webhook records a successful reading of the webhook registration.
func (h *health) webhook(state provider.WebhookState, host string) {
	t := h.now()
	h.mu.Lock()
	defer h.mu.Unlock()
	h.h.Webhook, h.h.WebhookHost, h.h.WebhookCheckedAt = state, host, t
}

func (h *health) get() provider.Health {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.h
}

// Health is what the client's calls have seen of the PSP: whether the
// last one got an answer, when one last did, how the last one failed, and
// the last reading of the webhook registration (provider.HealthReporter).
func (c *Client) Health() provider.Health { return c.health.get() }

// note records the outcome of one attempt: class "" with no error, or
// with the PSP's own 4xx answer, means the PSP answered. An attempt that
// ended because the caller gave up (context canceled) says nothing about
// the PSP and is not recorded.
func (c *Client) note(res attemptResult) {
	switch {
	case res.err == nil || res.class == "":
		c.health.answered()
	case res.class != classNone:
		c.health.failed(res.class)
	}
}

// classNone marks an attempt that tells nothing of the PSP.
const classNone = "-"

// classify is the provider.Fail* class of a transport error (the text of
// which may carry addresses and is never shown to operators).
func classify(err error) string {
	var (
		opErr   *net.OpError
		dnsErr  *net.DNSError
		netErr  net.Error
		verify  *tls.CertificateVerificationError
		unknown x509.UnknownAuthorityError
		invalid x509.CertificateInvalidError
		host    x509.HostnameError
		record  tls.RecordHeaderError
	)
	switch {
	case errors.Is(err, context.Canceled):
		return classNone
	case errors.As(err, &verify), errors.As(err, &unknown), errors.As(err, &invalid), errors.As(err, &host), errors.As(err, &record),
		// A TLS alert from the PSP (an expired or missing client
		// certificate) arrives as a "remote error".
		errors.As(err, &opErr) && opErr.Op == "remote error",
		strings.Contains(err.Error(), "tls: "):
		return provider.FailTLS
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &netErr) && netErr.Timeout():
		return provider.FailTimeout
	case errors.Is(err, syscall.ECONNREFUSED):
		return provider.FailConnectionRefused
	case errors.As(err, &dnsErr):
		return provider.FailDNS
	}
	return provider.FailConnection
}

// CheckWebhook reads GET /webhook/{chave} and says whether the PSP holds
// this client's webhook URL for the merchant's key, another one (another
// deployment on the same PSP account took it over), or none
// (provider.WebhookChecker). A successful reading is kept in Health; when
// another URL is held, Health also says its host (never its path, which
// holds that deployment's secret).
func (c *Client) CheckWebhook(ctx context.Context) (provider.WebhookState, error) {
	var ans struct {
		WebhookURL string `json:"webhookUrl"`
	}
	err := c.Do(ctx, Request{Method: http.MethodGet, URL: c.api + "/webhook/" + url.PathEscape(c.pixKey), Idempotent: true}, &ans)
	state, host := provider.WebhookOurs, ""
	switch {
	case errors.Is(err, provider.ErrNotFound):
		state = provider.WebhookNone
	case err != nil:
		return provider.WebhookUnknown, fmt.Errorf("read webhook: %w", err)
	case !sameURL(ans.WebhookURL, c.webhookURL):
		state = provider.WebhookOther
		if u, perr := url.Parse(ans.WebhookURL); perr == nil {
			host = truncate(u.Host, 100)
		}
	}
	c.health.webhook(state, host)
	return state, nil
}

// sameURL reports whether the PSP's copy a of our webhook URL b is b:
// scheme and host compared as the PSP may have normalised them (case, a
// trailing slash).
func sameURL(a, b string) bool {
	ua, err1 := url.Parse(a)
	ub, err2 := url.Parse(b)
	if err1 != nil || err2 != nil {
		return false
	}
	return strings.EqualFold(ua.Scheme, ub.Scheme) && strings.EqualFold(ua.Host, ub.Host) &&
		strings.TrimSuffix(ua.EscapedPath(), "/") == strings.TrimSuffix(ub.EscapedPath(), "/")
}

// webhookSecretPath matches the secret path of any pixgate webhook URL,
// ours or another deployment's, whole or cut short by the PSP.
var webhookSecretPath = regexp.MustCompile(`/psp/webhook/[A-Za-z0-9_-]+`)

// webhookSecret is the <secret> of a webhook URL ending in
// /psp/webhook/<secret> ("" for another form).
func webhookSecret(u string) string {
	_, after, ok := strings.Cut(u, "/psp/webhook/")
	if !ok {
		return ""
	}
	return after
}

// scrub removes from a PSP's text what must never be logged: the client
// secret, the access token, the webhook URL and its secret (a PSP may
// quote the URL it was given).
func (c *Client) scrub(text, token string) string {
	for _, s := range []struct{ secret, with string }{
		{c.webhookURL, "[webhook URL]"}, {c.secret, "[redacted]"}, {token, "[redacted]"}, {c.hookSecret, "[redacted]"},
	} {
		if s.secret != "" {
			text = strings.ReplaceAll(text, s.secret, s.with)
		}
	}
	return webhookSecretPath.ReplaceAllString(text, "/psp/webhook/[redacted]")
}

// tokenClass is the provider.Fail* class of a failed token fetch.
func tokenClass(err error) string {
	var te *errToken
	switch {
	case errors.Is(err, provider.ErrRateLimited):
		return "" // the token endpoint answered: it is up, only busy
	case !errors.As(err, &te) || te.cause != nil:
		return classify(err)
	case te.status >= 500:
		return provider.FailHTTP5xx
	case te.status == 0:
		return provider.FailBadAnswer
	}
	// The token endpoint refused the client credentials or certificate.
	return provider.FailAuth
}
