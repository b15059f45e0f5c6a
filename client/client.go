// Package client is a Go client of the pixgate API: charges (cash-in),
// payouts (cash-out), refunds, recurrences (Pix Automático), the wallet,
// the transaction history, the statement and the webhook delivery log,
// with typed requests and answers, exact money (Amount, never a float),
// retries that are safe to make, and a webhook receiver (WebhookHandler)
// that verifies, decodes and dispatches events.
//
//	c, err := client.New("https://pixgate.example.com", clientID, clientSecret)
//	charge, err := c.CreateCharge(ctx, client.ChargeRequest{Amount: client.Reais("10.50"), …})
//
// Creations (charges, payouts, refunds, recurrences) always carry an
// Idempotency-Key, generated unless the request sets one, and are retried
// with the same key on network errors, 5xx and 409 (a duplicate still in
// progress), so a lost answer never creates twice. Reads are retried the same way. A 429 is
// waited out for Retry-After and retried. Every wait honours the context.
//
// # Repeating a creation safely
//
// When the retries run out (or the context ends) without an answer that
// settles it, a creation returns a *RetryError: the request may or may not
// have been carried out. Calling again with a fresh key could then pay
// twice; calling again with the same key cannot, because the server replays
// the first answer instead of creating anything. So choose the key before
// the call, keep it with the order it belongs to (in your database, next to
// the order, so that it survives a restart), and send it again until an
// answer settles the request:
//
//	key := client.NewIdempotencyKey() // stored with the order before the call
//	payout, err := c.CreatePayout(ctx, client.PayoutRequest{IdempotencyKey: key, …})
//	if re := client.AsRetryError(err); re != nil {
//		// Unknown outcome: later, call again with re.Key (== key), never with a new key.
//	}
//
// An answer that settles the request (a created transaction, its replay,
// or an error such as a 400 or a 422 that created nothing) is not a
// *RetryError.
//
// # Redirects
//
// The client never follows a redirect: following one would send the
// client's credentials (header stps), the body and the Idempotency-Key to
// wherever the Location header points. A 3xx answer is returned as an error
// naming its status and Location; correct the base URL instead.
//
// # Using it from another module
//
// Until github.com/pixgate/pixgate is published, `go get` cannot fetch it:
// point your module at a checkout of the repository. With a replace
// directive in your go.mod (then run `go mod tidy`):
//
//	require github.com/pixgate/pixgate v0.0.0
//
//	replace github.com/pixgate/pixgate => ../pixgate
//
// or, leaving your go.mod as it is, with a workspace beside it:
//
//	go work init . ../pixgate
//
// ../pixgate being the checkout's directory. test/e2e's
// TestClientFromAnotherModule builds such a module both ways.
package client

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Client calls one pixgate server with one client's credentials. It is safe
// for concurrent use.
type Client struct {
	base        *url.URL
	id, secret  string
	http        *http.Client
	maxRetries  int
	backoffBase time.Duration
	backoffMax  time.Duration
	sleep       func(context.Context, time.Duration) error
	userAgent   string
}

// Option configures a Client.
type Option func(*Client)

// WithHTTPClient sets the HTTP client used for every request (default: a
// client with a 30 s timeout). Its Timeout bounds each attempt whole,
// except for statements (Statement, StatementCSV), read as they arrive:
// there it bounds the wait for the answer and each pause in it.
//
// The client uses a copy of h whose CheckRedirect refuses every redirect
// (see the package documentation); h itself is left as it is. A nil h
// keeps the default.
func WithHTTPClient(h *http.Client) Option {
	return func(c *Client) {
		if h != nil {
			c.http = noRedirects(h)
		}
	}
}

// noRedirects returns a copy of h that does not follow redirects: with
// credentials in custom headers (which net/http does not strip on a
// redirect to another host) following one would hand them to that host.
func noRedirects(h *http.Client) *http.Client {
	hc := *h
	hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &hc
}

// WithMaxRetries sets how many times a request may be repeated after the
// first attempt (default 3; 0 disables retries, 429 included).
func WithMaxRetries(n int) Option {
	return func(c *Client) { c.maxRetries = max(n, 0) }
}

// WithBackoff sets the exponential backoff between retries after a network
// error, a 5xx or a 409: the n-th wait is drawn at random between half and
// all of min(base·2ⁿ, maxWait). Default 250 ms and 5 s.
func WithBackoff(base, maxWait time.Duration) Option {
	return func(c *Client) { c.backoffBase, c.backoffMax = base, maxWait }
}

// WithSleep replaces how the client waits between attempts (backoff and
// Retry-After). The function must return ctx.Err() if ctx ends first. Meant
// for tests and for callers with their own scheduler.
func WithSleep(sleep func(ctx context.Context, d time.Duration) error) Option {
	return func(c *Client) { c.sleep = sleep }
}

// WithUserAgent sets the User-Agent header.
func WithUserAgent(ua string) Option { return func(c *Client) { c.userAgent = ua } }

// New returns a client of the pixgate server at baseURL (for example
// "https://pixgate.example.com"), authenticated by clientID (header stpi)
// and secret (header stps).
func New(baseURL, clientID, secret string, opts ...Option) (*Client, error) {
	u, err := url.Parse(baseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("client: base URL %q is not an absolute http(s) URL", baseURL)
	}
	if clientID == "" || secret == "" {
		return nil, errors.New("client: client id and secret are required")
	}
	u.Path = strings.TrimSuffix(u.Path, "/")
	c := &Client{
		base: u, id: clientID, secret: secret,
		http:        noRedirects(&http.Client{Timeout: 30 * time.Second}),
		maxRetries:  3,
		backoffBase: 250 * time.Millisecond,
		backoffMax:  5 * time.Second,
		sleep:       sleepCtx,
		userAgent:   "pixgate-go-client/1",
	}
	for _, o := range opts {
		o(c)
	}
	return c, nil
}

// RateLimit is the rate-limit state the server reported with an answer.
type RateLimit struct {
	Limit     int           // accepted requests allowed per rolling 60 s
	Remaining int           // requests still allowed now
	Reset     time.Duration // until the oldest counted request leaves the window
}

// Response is what every answer carries besides its body. It is embedded in
// every result type and in Error.
type Response struct {
	StatusCode         int
	RequestID          string // X-Request-Id, to quote to support
	RateLimit          RateLimit
	IdempotentReplayed bool   // the answer replays an earlier request's
	IdempotencyKey     string // the key sent, for creations
	Attempts           int    // HTTP attempts made, retries included
	Header             http.Header
}

// policy says which failures a request may be retried after. A 429 is
// always retried: the server did nothing with the request.
type policy struct {
	network  bool // network errors: the request may or may not have been seen
	status5x bool
	conflict bool // 409 in progress
}

var (
	readPolicy     = policy{network: true, status5x: true}
	creationPolicy = policy{network: true, status5x: true, conflict: true}
	unsafePolicy   = policy{}
)

type call struct {
	method, path string
	query        url.Values
	body         any
	idemKey      string
	policy       policy
}

const maxBody = 8 << 20

// do runs one API call with its retries and decodes a 2xx body into out.
func (c *Client) do(ctx context.Context, k call, out any) (Response, error) {
	var payload []byte
	if k.body != nil {
		var err error
		if payload, err = json.Marshal(k.body); err != nil {
			return Response{}, fmt.Errorf("client: encoding request: %w", err)
		}
	}
	target := c.target(k.path, k.query)

	// unsettled says whether the last failure was one worth retrying,
	// which leaves a creation's outcome unknown.
	var unsettled bool
	resp, err := c.retrying(ctx, func(attempt int) (Response, bool, error) {
		resp, retry, err := c.try(ctx, k, target, payload, attempt, out)
		unsettled = retry
		return resp, retry, err
	})
	if err != nil && unsettled && k.idemKey != "" {
		err = &RetryError{Key: k.idemKey, Attempts: resp.Attempts, Err: err, op: k.method + " " + k.path}
	}
	return resp, err
}

// try makes attempt number attempt of k and says whether a failure may be
// retried under k's policy.
func (c *Client) try(ctx context.Context, k call, target string, payload []byte, attempt int, out any) (Response, bool, error) {
	resp, status, raw, err := c.attempt(ctx, k.method, target, payload, k.idemKey)
	resp.Attempts = attempt
	resp.IdempotencyKey = k.idemKey
	if err != nil {
		return resp, k.policy.network, err
	}
	if status >= 200 && status < 300 {
		if out != nil && len(raw) > 0 {
			if err := json.Unmarshal(raw, out); err != nil {
				return resp, false, fmt.Errorf("client: decoding %s %s answer: %w", k.method, k.path, err)
			}
		}
		return resp, false, nil
	}
	if status >= 300 && status < 400 {
		return resp, false, redirectError(k.method, k.path, status, resp.Header)
	}
	retry := status == http.StatusTooManyRequests ||
		(status >= 500 && k.policy.status5x) ||
		(status == http.StatusConflict && k.policy.conflict)
	return resp, retry, decodeError(resp, status, raw)
}

// redirectError is the error of a 3xx answer, which the client does not
// follow (see noRedirects).
func redirectError(method, path string, status int, h http.Header) error {
	where := ""
	if loc := h.Get("Location"); loc != "" {
		where = fmt.Sprintf(" to %q", loc)
	}
	return fmt.Errorf("client: %s %s answered %d %s%s; redirects are not followed, so that the credentials "+
		"are sent nowhere else: check the base URL", method, path, status, http.StatusText(status), where)
}

// target is the URL of the API's path with query.
func (c *Client) target(path string, query url.Values) string {
	u := *c.base
	u.Path += path
	u.RawQuery = query.Encode()
	return u.String()
}

// retrying runs try (attempt 1, 2, …) until it succeeds, fails with retry
// false, runs out of retries or ctx ends. A 429 waits its Retry-After;
// any other failure retried backs off.
func (c *Client) retrying(ctx context.Context, try func(attempt int) (resp Response, retry bool, err error)) (Response, error) {
	var failures int // retries caused by network errors, 5xx, 409
	for attempt := 1; ; attempt++ {
		resp, retry, err := try(attempt)
		if err == nil || !retry || ctx.Err() != nil || attempt > c.maxRetries {
			return resp, err
		}
		wait := c.backoff(failures)
		if e := AsError(err); e != nil && e.StatusCode == http.StatusTooManyRequests {
			wait = e.RetryAfter
		} else {
			failures++
		}
		if err := c.sleep(ctx, wait); err != nil {
			return resp, err
		}
	}
}

// attempt makes one HTTP request and reads the whole answer.
func (c *Client) attempt(ctx context.Context, method, target string, payload []byte, idemKey string) (Response, int, []byte, error) {
	req, err := c.newRequest(ctx, method, target, payload, idemKey)
	if err != nil {
		return Response{}, 0, nil, err
	}
	res, err := c.http.Do(req)
	if err != nil {
		return Response{}, 0, nil, err
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(res.Body, maxBody))
	if err != nil {
		// The answer was cut: as unknown an outcome as no answer.
		return Response{}, 0, nil, fmt.Errorf("client: reading answer: %w", err)
	}
	return responseOf(res), res.StatusCode, raw, nil
}

// newRequest is one HTTP request of the API: credentials, a JSON payload
// if any, and the Idempotency-Key if any.
func (c *Client) newRequest(ctx context.Context, method, target string, payload []byte, idemKey string) (*http.Request, error) {
	var body io.Reader
	if payload != nil {
		body = bytes.NewReader(payload)
	}
	req, err := http.NewRequestWithContext(ctx, method, target, body)
	if err != nil {
		return nil, fmt.Errorf("client: %w", err)
	}
	req.Header.Set("stpi", c.id)
	req.Header.Set("stps", c.secret)
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", c.userAgent)
	if payload != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if idemKey != "" {
		req.Header.Set("Idempotency-Key", idemKey)
	}
	return req, nil
}

func responseOf(res *http.Response) Response {
	h := res.Header
	atoi := func(name string) int { n, _ := strconv.Atoi(h.Get(name)); return n }
	return Response{
		StatusCode: res.StatusCode,
		RequestID:  h.Get("X-Request-Id"),
		RateLimit: RateLimit{
			Limit:     atoi("X-RateLimit-Limit"),
			Remaining: atoi("X-RateLimit-Remaining"),
			Reset:     time.Duration(atoi("X-RateLimit-Reset")) * time.Second,
		},
		IdempotentReplayed: h.Get("Idempotent-Replayed") == "true",
		Header:             h,
	}
}

func decodeError(resp Response, status int, raw []byte) *Error {
	var body struct {
		StatusCode int           `json:"statusCode"`
		Message    string        `json:"message"`
		Error      string        `json:"error"`
		RetryAfter *int64        `json:"retryAfter"`
		Details    []ErrorDetail `json:"details"`
	}
	e := &Error{StatusCode: status, Response: resp}
	if json.Unmarshal(raw, &body) == nil {
		e.Message, e.Err, e.Details = body.Message, body.Error, body.Details
		if body.RetryAfter != nil && *body.RetryAfter > 0 {
			e.RetryAfter = time.Duration(*body.RetryAfter) * time.Second
		}
	}
	if e.Message == "" {
		e.Message = http.StatusText(status)
	}
	if s := resp.Header.Get("Retry-After"); s != "" {
		if n, err := strconv.ParseInt(s, 10, 64); err == nil && n >= 0 {
			e.RetryAfter = time.Duration(n) * time.Second
		} else if t, err := http.ParseTime(s); err == nil {
			e.RetryAfter = max(time.Until(t), 0)
		}
	}
	return e
}

// backoff is the wait before retry n (0-based): between half and all of
// min(base·2ⁿ, max).
func (c *Client) backoff(n int) time.Duration {
	d := c.backoffBase
	for i := 0; i < n && d < c.backoffMax; i++ {
		d *= 2
	}
	d = min(d, c.backoffMax)
	if d <= 1 {
		return d
	}
	half := d / 2
	return half + time.Duration(randUint64()%uint64(d-half+1)) // #nosec G115 -- d > 0
}

func randUint64() uint64 {
	var b [8]byte
	_, _ = rand.Read(b[:]) // never fails
	return binary.LittleEndian.Uint64(b[:])
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// NewIdempotencyKey returns a fresh random Idempotency-Key (32 hex digits),
// the kind the client generates for creations that set none.
func NewIdempotencyKey() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // never fails
	return hex.EncodeToString(b[:])
}

func keyOr(k string) string {
	if k == "" {
		return NewIdempotencyKey()
	}
	return k
}
