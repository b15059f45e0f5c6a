package apipix

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"

	"github.com/pixgate/pixgate/internal/provider"
)

// tokenCache holds the one access token of a Client. It is its own small
// type, rather than oauth2.ReuseTokenSource, because a 401 from the API
// must be able to throw the cached token away.
type tokenCache struct {
	conf  *clientcredentials.Config
	http  *http.Client
	now   func() time.Time
	early time.Duration

	mu  sync.Mutex
	tok *oauth2.Token
}

// get returns the cached token, or fetches one when there is none or it
// expires within early. The lock is held while fetching so that concurrent
// calls share one fetch instead of each asking the PSP.
func (t *tokenCache) get(ctx context.Context) (*oauth2.Token, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.tok != nil && (t.tok.Expiry.IsZero() || t.now().Add(t.early).Before(t.tok.Expiry)) {
		return t.tok, nil
	}
	tok, err := t.conf.Token(context.WithValue(ctx, oauth2.HTTPClient, t.http))
	if err != nil {
		return nil, tokenError(err, t.now())
	}
	t.tok = tok
	return tok, nil
}

// discard forgets old if it is still the cached token, so that the next get
// fetches a new one (a concurrent call may already have replaced it).
func (t *tokenCache) discard(old *oauth2.Token) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.tok == old {
		t.tok = nil
	}
}

// errToken is a failed token fetch; retryable says whether another try
// may succeed.
type errToken struct {
	msg       string
	retryable bool
	cause     error
	status    int // the token endpoint's answer; 0 when none came
}

// Error is the scrubbed message.
func (e *errToken) Error() string { return e.msg }
func (e *errToken) Unwrap() error { return e.cause }

// tokenError rewrites an oauth2 error without the token endpoint's body,
// which oauth2 quotes verbatim and which may echo what we sent. A 429
// carries a provider.RateLimitedError.
func tokenError(err error, now time.Time) error {
	if re, ok := errors.AsType[*oauth2.RetrieveError](err); ok {
		msg := "token endpoint refused"
		status := 0
		var cause error
		if re.Response != nil {
			status = re.Response.StatusCode
			msg = fmt.Sprintf("token endpoint answered %d", status)
			if status == http.StatusTooManyRequests {
				cause = &provider.RateLimitedError{RetryAfter: retryAfter(re.Response.Header.Get("Retry-After"), now)}
			}
		}
		if re.ErrorCode != "" {
			msg += " (" + safeWord(re.ErrorCode) + ")"
		}
		return &errToken{msg: msg, retryable: status >= 500, status: status, cause: cause}
	}
	// A transport error (connection, TLS, timeout) carries the token URL
	// and the cause, neither of which is secret.
	return &errToken{msg: err.Error(), retryable: true, cause: err}
}

// safeWord keeps an OAuth error code (a registered word such as
// invalid_client) and nothing else.
func safeWord(s string) string {
	s = truncate(s, 40)
	for _, r := range s {
		if !(r == '_' || r == '-' || r == '.' || 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9') {
			return "?"
		}
	}
	return s
}

// Request is one call to the PSP, for the providers built on this client
// (efi's payouts).
type Request struct {
	Method string
	// URL is absolute; use Origin or APIURL to build it and url.PathEscape
	// for its segments.
	URL string
	// Body is sent as JSON when not nil.
	Body any
	// Header is added to the request.
	Header http.Header
	// Idempotent calls are retried after a network error, a timeout or a
	// 5xx; any other call is sent once, its unknown outcome reported.
	Idempotent bool
}

// Do sends r within the call timeout, with the access token (renewed once
// on a 401), and decodes a 2xx JSON answer into out (nil: ignore it). A 404
// to a GET or PATCH wraps provider.ErrNotFound, a 429 (of the API or the
// token endpoint) a *provider.RateLimitedError, any other 4xx
// provider.ErrRejected; anything else is an error of unknown outcome.
func (c *Client) Do(ctx context.Context, r Request, out any) error {
	ctx, cancel := context.WithTimeout(ctx, c.callTimeout)
	defer cancel()
	_, err := c.exec(ctx, r, out)
	return err
}

// attemptResult is the outcome of one attempt.
type attemptResult struct {
	err       error
	retryable bool // a network error, a timeout or a 5xx
	sent      bool // the PSP may have received the request
	// class is how the call failed for the PSP's health (a
	// provider.Fail* class or classNone); "" when the PSP answered.
	class string
}

// exec sends r, retrying as r.Idempotent allows, until ctx ends.
// unknownBefore reports that an earlier attempt's outcome was unknown, so
// that a later 4xx may be the PSP refusing a repeat of what succeeded.
func (c *Client) exec(ctx context.Context, r Request, out any) (unknownBefore bool, err error) {
	var body []byte
	if r.Body != nil {
		if body, err = json.Marshal(r.Body); err != nil {
			return false, fmt.Errorf("%s: %s %s: encode: %w", c.name, r.Method, c.pathOf(r.URL), err)
		}
	}
	refreshed := false
	for attempt := 0; ; attempt++ {
		res := c.attempt(ctx, r, body, out, &refreshed)
		c.note(res)
		if res.err == nil {
			return unknownBefore, nil
		}
		again := res.retryable && (r.Idempotent || !res.sent) && attempt < len(c.backoff) && ctx.Err() == nil
		// A 404 is how a never-sent transfer is told apart, and a 429 is
		// waited out by the caller, which says so: not warnings.
		level := slog.LevelWarn
		if errors.Is(res.err, provider.ErrNotFound) || errors.Is(res.err, provider.ErrRateLimited) {
			level = slog.LevelDebug
		}
		c.log.Log(ctx, level, "psp call failed", "method", r.Method, "path", c.pathOf(r.URL),
			"attempt", attempt+1, "retry", again, "error", res.err.Error())
		if res.sent && res.retryable {
			unknownBefore = true
		}
		if !again {
			return unknownBefore, res.err
		}
		t := time.NewTimer(c.backoff[attempt])
		select {
		case <-ctx.Done():
			t.Stop()
			return unknownBefore, res.err
		case <-t.C:
			// The wait may end as the budget does: an attempt without time
			// would only report a timeout that the PSP never caused.
			if ctx.Err() != nil {
				return unknownBefore, res.err
			}
		}
	}
}

// attempt makes one try of r. An idempotent call gets half of what is left
// of ctx, so that a stalled connection leaves time for a retry on a new one.
func (c *Client) attempt(ctx context.Context, r Request, body []byte, out any, refreshed *bool) attemptResult {
	if r.Idempotent {
		if dl, ok := ctx.Deadline(); ok {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, time.Until(dl)/2)
			defer cancel()
		}
	}
	path := c.pathOf(r.URL)
	fail := func(err error, retryable, sent bool, class string) attemptResult {
		return attemptResult{err: fmt.Errorf("%s: %s %s: %w", c.name, r.Method, path, err), retryable: retryable, sent: sent, class: class}
	}
	tokenFail := func(err error) attemptResult {
		var te *errToken
		return fail(fmt.Errorf("access token: %w", err), errors.As(err, &te) && te.retryable, false, tokenClass(err))
	}
	tok, err := c.tokens.get(ctx)
	if err != nil {
		return tokenFail(err)
	}
	status, hdr, data, err := c.roundTrip(ctx, r, body, tok)
	if err != nil {
		return fail(err, true, true, classify(err))
	}
	if status == http.StatusUnauthorized && !*refreshed {
		// The token may have been revoked or expired early at the PSP: a
		// new one, and this request once more with it. Never a loop.
		*refreshed = true
		c.tokens.discard(tok)
		c.log.Info("psp answered 401; renewing the access token", "method", r.Method, "path", path)
		if tok, err = c.tokens.get(ctx); err != nil {
			return tokenFail(err)
		}
		if status, hdr, data, err = c.roundTrip(ctx, r, body, tok); err != nil {
			return fail(err, true, true, classify(err))
		}
	}
	switch {
	case status >= 200 && status < 300:
		if out == nil || len(bytes.TrimSpace(data)) == 0 {
			if out != nil {
				return fail(fmt.Errorf("%d with an empty body", status), false, true, provider.FailBadAnswer)
			}
			return attemptResult{}
		}
		if err := json.Unmarshal(data, out); err != nil {
			return fail(fmt.Errorf("decode %d answer: %w", status, err), false, true, provider.FailBadAnswer)
		}
		return attemptResult{}
	case status == http.StatusNotFound && (r.Method == http.MethodGet || r.Method == http.MethodPatch):
		return fail(c.statusErr(status, data, tok, provider.ErrNotFound), false, true, "")
	case status == http.StatusTooManyRequests:
		// Refused for the PSP's rate, nothing done: never ErrRejected,
		// which would fail a transfer that may simply be sent later.
		rl := &provider.RateLimitedError{RetryAfter: retryAfter(hdr.Get("Retry-After"), c.tokens.now())}
		return fail(c.statusErr(status, data, tok, rl), false, true, "")
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		// Refused even with a fresh token: every call will be.
		return fail(c.statusErr(status, data, tok, provider.ErrRejected), false, true, provider.FailAuth)
	case status >= 400 && status < 500:
		return fail(c.statusErr(status, data, tok, provider.ErrRejected), false, true, "")
	case status >= 500:
		return fail(c.statusErr(status, data, tok, nil), true, true, provider.FailHTTP5xx)
	default:
		return fail(fmt.Errorf("unexpected status %d", status), false, true, provider.FailBadAnswer)
	}
}

// roundTrip sends one HTTP request and reads at most maxBody of the answer.
func (c *Client) roundTrip(ctx context.Context, r Request, body []byte, tok *oauth2.Token) (int, http.Header, []byte, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, r.Method, r.URL, rd)
	if err != nil {
		return 0, nil, nil, fmt.Errorf("build request: %w", err)
	}
	for k, vs := range r.Header {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	tok.SetAuthHeader(req)
	resp, err := c.http.Do(req)
	if err != nil {
		return 0, nil, nil, err //nolint:wrapcheck // attempt wraps it with method and path
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxBody+1))
	if err != nil {
		return 0, nil, nil, fmt.Errorf("read answer: %w", err)
	}
	if len(data) > maxBody {
		return 0, nil, nil, fmt.Errorf("answer larger than %d bytes", maxBody)
	}
	return resp.StatusCode, resp.Header, data, nil
}

// maxRetryAfter bounds what is read of a Retry-After, so that no PSP's
// figure overflows a duration.
const maxRetryAfter = time.Hour

// retryAfter reads a Retry-After header, delay-seconds or an HTTP-date;
// zero when it is absent, unreadable or in the past.
func retryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		return time.Duration(min(max(n, 0), int64(maxRetryAfter/time.Second))) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		return min(max(t.Sub(now), 0), maxRetryAfter)
	}
	return 0
}

// problem is an RFC 7807 body as the API Pix sends with every 4xx and 5xx.
type problem struct {
	Title     string `json:"title"`
	Detail    string `json:"detail"`
	Violacoes []struct {
		Razao       string `json:"razao"`
		Propriedade string `json:"propriedade"`
	} `json:"violacoes"`
}

// StatusError is a PSP answer other than 2xx, with the PSP's own words
// (problem title, detail and violations) for the log.
type StatusError struct {
	Status int
	Text   string // the PSP's problem text, scrubbed and shortened
	kind   error  // provider.ErrNotFound, provider.ErrRejected, a *provider.RateLimitedError or nil
}

// Error says the status and the PSP's words.
func (e *StatusError) Error() string {
	s := fmt.Sprintf("answered %d %s", e.Status, http.StatusText(e.Status))
	if e.Text != "" {
		s += ": " + e.Text
	}
	return s
}

// Unwrap gives provider.ErrNotFound, provider.ErrRejected or a
// *provider.RateLimitedError when the status means one.
func (e *StatusError) Unwrap() error { return e.kind }

// statusErr builds the StatusError of an answer. The PSP's text is scrubbed
// of the client secret and the token, in case a PSP echoes what it got.
func (c *Client) statusErr(status int, data []byte, tok *oauth2.Token, kind error) error {
	var p problem
	var parts []string
	if json.Unmarshal(data, &p) == nil {
		for _, s := range []string{p.Title, p.Detail} {
			if s != "" {
				parts = append(parts, s)
			}
		}
		for _, v := range p.Violacoes {
			parts = append(parts, strings.TrimSpace(v.Propriedade+" "+v.Razao))
		}
	}
	text := c.scrub(strings.Join(parts, ": "), tok.AccessToken)
	text = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return ' '
		}
		return r
	}, truncate(text, 300))
	return &StatusError{Status: status, Text: text, kind: kind}
}

// pathOf is u without the origin, for log lines and errors.
func (c *Client) pathOf(u string) string {
	if p, ok := strings.CutPrefix(u, c.origin); ok {
		if i := strings.IndexByte(p, '?'); i >= 0 {
			return p[:i]
		}
		return p
	}
	return u
}
