package sim

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// API calls the system under test as its merchants do: over HTTP, to any
// node that answers.
type API struct {
	addrs []string
	up    func(i int) bool
	http  *http.Client
	next  atomic.Uint64

	mu sync.RWMutex
	// clients are the merchants: the cluster's, then the sub-accounts the
	// workload made.
	clients []Credentials
}

// AddClient adds a merchant (a sub-account the workload made) and returns
// its index for Call.
func (a *API) AddClient(c Credentials) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.clients = append(a.clients, c)
	return len(a.clients) - 1
}

// Clients returns every merchant Call can act as, by index.
func (a *API) Clients() []Credentials {
	a.mu.RLock()
	defer a.mu.RUnlock()
	return append([]Credentials(nil), a.clients...)
}

// NewAPI returns an API over the nodes at addrs (up tells which are
// running) for the merchant clients.
func NewAPI(addrs []string, up func(i int) bool, clients []Credentials) *API {
	return &API{addrs: addrs, up: up, clients: clients, http: &http.Client{
		Timeout:   20 * time.Second, // above pixgate's 5 s bound on a charge's PSP call
		Transport: &http.Transport{MaxIdleConnsPerHost: 64},
		// A merchant's client must never follow a redirect with its credentials.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
}

// errNoNode: no node could be reached.
var errNoNode = errors.New("sim: no node answered")

// Call sends one request as client to one node, trying the next node when
// a node cannot be reached; it returns the first answer any node gave.
func (a *API) Call(ctx context.Context, client int, method, path string, header map[string]string, body []byte) (int, http.Header, []byte, error) {
	start := int(a.next.Add(1) % uint64(len(a.addrs))) //nolint:gosec // G115: reduced below len(a.addrs) first
	last := errNoNode
	for k := range a.addrs {
		i := (start + k) % len(a.addrs)
		if !a.up(i) {
			continue
		}
		status, h, b, err := a.once(ctx, a.addrs[i], client, method, path, header, body)
		if err == nil {
			return status, h, b, nil
		}
		last = err
	}
	return 0, nil, nil, last
}

// Forge posts body to path of any live node without a merchant's
// credentials, as someone who is not a merchant would; it returns the
// status (0 when no node answered).
func (a *API) Forge(ctx context.Context, path string, body []byte) int {
	start := int(a.next.Add(1) % uint64(len(a.addrs))) //nolint:gosec // G115: reduced below len(a.addrs) first
	for k := range a.addrs {
		i := (start + k) % len(a.addrs)
		if !a.up(i) {
			continue
		}
		status, _, _, err := a.once(ctx, a.addrs[i], -1, http.MethodPost, path, nil, body)
		if err == nil {
			return status
		}
	}
	return 0
}

func (a *API) once(ctx context.Context, addr string, client int, method, path string, header map[string]string, body []byte) (int, http.Header, []byte, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, "http://"+addr+path, rd)
	if err != nil {
		return 0, nil, nil, fmt.Errorf("request: %w", err)
	}
	if client >= 0 {
		a.mu.RLock()
		c := a.clients[client]
		a.mu.RUnlock()
		req.Header.Set("stpi", c.ClientID)
		req.Header.Set("stps", c.ClientSecret)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := a.http.Do(req)
	if err != nil {
		return 0, nil, nil, fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, nil, nil, fmt.Errorf("%s %s: read answer: %w", method, path, err)
	}
	return resp.StatusCode, resp.Header, b, nil
}

// retryable is an answer whose outcome the merchant cannot know (no
// answer, 5xx) or that asks to come back (409 in progress, 429).
func retryable(status int, err error) bool {
	return err != nil || status >= 500 || status == http.StatusConflict || status == http.StatusTooManyRequests
}

// CallRetrying is Call repeated with the same request — the same
// Idempotency-Key — while the outcome is unknown, as a careful merchant
// does, for at most attempts tries; it returns the last answer.
func (a *API) CallRetrying(ctx context.Context, attempts int, client int, method, path string, header map[string]string, body []byte) (int, []byte, error) {
	var (
		status int
		b      []byte
		err    error
	)
	wait := 100 * time.Millisecond
	for n := 0; n < attempts; n++ {
		status, _, b, err = a.Call(ctx, client, method, path, header, body)
		if !retryable(status, err) {
			return status, b, nil
		}
		select {
		case <-ctx.Done():
			return status, b, ctx.Err()
		case <-time.After(wait):
		}
		wait = min(2*wait, 2*time.Second)
	}
	return status, b, err
}
