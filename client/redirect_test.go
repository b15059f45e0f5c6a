package client_test

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/client"
)

// recorder is a server that records every request it receives.
type recorder struct {
	mu   sync.Mutex
	reqs []string // "METHOD /path stps=…"
}

func (r *recorder) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	r.mu.Lock()
	r.reqs = append(r.reqs, req.Method+" "+req.URL.Path+" stps="+req.Header.Get("stps")+
		" key="+req.Header.Get("Idempotency-Key"))
	r.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write([]byte(`{"statusCode":200}`))
}

func (r *recorder) got() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.reqs...)
}

// TestRedirectsNotFollowed: a server answering 307 or 308 towards another
// host gets no request followed there (no credentials, no body, no key),
// with the client's own HTTP client and with one the caller passes, which
// is left as it was; the 3xx is an error naming the status and Location,
// made once (not retried), and not a *RetryError.
func TestRedirectsNotFollowed(t *testing.T) {
	t.Parallel()
	other := &recorder{}
	elsewhere := httptest.NewServer(other)
	t.Cleanup(elsewhere.Close)

	// The group returns once its parallel subtests have finished.
	t.Run("group", func(t *testing.T) {
		for _, status := range []int{http.StatusTemporaryRedirect, http.StatusPermanentRedirect} {
			t.Run(strconv.Itoa(status), func(t *testing.T) {
				t.Parallel()
				var mu sync.Mutex
				var hits int
				redirector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					mu.Lock()
					hits++
					mu.Unlock()
					http.Redirect(w, r, elsewhere.URL+"/moved", status)
				}))
				t.Cleanup(redirector.Close)

				callers := &http.Client{Timeout: 10 * time.Second}
				clients := map[string]*client.Client{}
				var err error
				clients["default"], err = client.New(redirector.URL, "cli_test_id", "sk_test_secret",
					client.WithBackoff(time.Millisecond, time.Millisecond))
				require.NoError(t, err)
				clients["caller's"], err = client.New(redirector.URL, "cli_test_id", "sk_test_secret",
					client.WithHTTPClient(callers), client.WithBackoff(time.Millisecond, time.Millisecond))
				require.NoError(t, err)

				for name, c := range clients {
					ctx := t.Context()
					calls := map[string]func() error{
						"payout": func() error {
							_, err := c.CreatePayout(ctx, client.PayoutRequest{Amount: client.Reais("1"), Description: "d",
								CallbackURL: "https://merchant.example.com/p",
								CreditParty: client.CreditParty{KeyType: client.KeyEmail, Key: "f@example.com"}})
							return err
						},
						"balance": func() error { _, err := c.Balance(ctx); return err },
						"statement": func() error {
							return c.StatementCSV(ctx, time.Now().Add(-time.Hour), time.Now(), &bytes.Buffer{})
						},
					}
					for call, f := range calls {
						mu.Lock()
						before := hits
						mu.Unlock()
						err := f()
						require.Error(t, err, "%s client, %s", name, call)
						require.ErrorContains(t, err, strconv.Itoa(status))
						require.ErrorContains(t, err, elsewhere.URL, "names the Location")
						require.ErrorContains(t, err, "redirects are not followed")
						require.Nil(t, client.AsRetryError(err), "a redirect is not retried")
						mu.Lock()
						require.Equal(t, before+1, hits, "%s client, %s: one attempt", name, call)
						mu.Unlock()
					}
				}
				require.Nil(t, callers.CheckRedirect, "the caller's client is not changed")
			})
		}
	})
	require.Empty(t, other.got(), "the redirect target received nothing")
}
