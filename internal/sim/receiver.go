package sim

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/pixgate/pixgate/webhooksig"
)

// maxWebhookBody bounds what the receiver reads of one delivery; pixgate's
// events are far smaller.
const maxWebhookBody = 1 << 20

// Delivery is one webhook attempt the merchant's receiver got.
type Delivery struct {
	Client    int    // index of the client whose URL it was posted to; -1 if none
	WebhookID string // the webhook-id header
	Event     string // the body's event, payment_id and refund_id (when it parses)
	PaymentID string
	RefundID  string
	// Valid is whether the signature verified with the client's webhook
	// secret.
	Valid bool
	// Status is what the receiver answered; 0 when pixgate gave up (or the
	// receiver closed) before the answer.
	Status int
	At     time.Time
	Body   []byte
}

// Receiver is the merchants' webhook receiver: a real HTTP server on
// loopback with one URL per client, which verifies each delivery's
// signature with that client's secret, records every attempt, and fails
// or is slow on demand. Its methods are safe for concurrent use.
type Receiver struct {
	clients   []Credentials
	verifiers map[string]*webhooksig.Verifier // by client id
	index     map[string]int                  // client id → index
	base      string
	srv       *http.Server
	closing   chan struct{}
	closeOnce sync.Once
	done      chan struct{}

	mu         sync.Mutex
	rng        *rand.Rand
	failRate   float64
	delay      time.Duration
	deliveries []Delivery
	invalid    int
}

// NewReceiver starts a receiver on a free loopback port for clients
// (URL(i) is client i's webhook URL); seed drives which deliveries fail
// under SetMode.
func NewReceiver(clients []Credentials, seed uint64) (*Receiver, error) {
	r := &Receiver{
		clients:   append([]Credentials(nil), clients...),
		verifiers: map[string]*webhooksig.Verifier{},
		index:     map[string]int{},
		closing:   make(chan struct{}),
		done:      make(chan struct{}),
		rng:       rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), //nolint:gosec // G404: seeded on purpose, so that a run replays
	}
	for i, c := range clients {
		v, err := webhooksig.NewVerifier(c.WebhookSecret)
		if err != nil {
			return nil, fmt.Errorf("receiver: webhook secret of client %s: %w", c.ClientID, err)
		}
		r.verifiers[c.ClientID] = v
		r.index[c.ClientID] = i
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("receiver: listen: %w", err)
	}
	r.base = "http://" + ln.Addr().String()
	mux := http.NewServeMux()
	mux.HandleFunc("POST /{client}", r.receive)
	r.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		defer close(r.done)
		_ = r.srv.Serve(ln) // ends with http.ErrServerClosed on Close
	}()
	return r, nil
}

// URL is the webhook URL of client i (its postbackUrl and callbackUrl).
func (r *Receiver) URL(clientIndex int) string {
	return r.base + "/" + r.clients[clientIndex].ClientID
}

// URLNamed is the webhook URL at name, for a client the receiver does not
// know yet (a sub-account, whose postbackUrl is sent before its secret is
// known); Register then names whose it is.
func (r *Receiver) URLNamed(name string) string { return r.base + "/" + name }

// Register makes deliveries to URLNamed(name) client i's (its index for
// API.Call), verified with c's webhook secret.
func (r *Receiver) Register(name string, i int, c Credentials) error {
	v, err := webhooksig.NewVerifier(c.WebhookSecret)
	if err != nil {
		return fmt.Errorf("receiver: webhook secret of client %s: %w", c.ClientID, err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.verifiers[name], r.index[name] = v, i
	return nil
}

// SetMode makes a share failRate (0 to 1) of the later deliveries answer
// 500, chosen by the seeded generator, and every answer wait delay first
// (keep it under pixgate's 10 s delivery timeout). SetMode(0, 0) is a
// healthy receiver.
func (r *Receiver) SetMode(failRate float64, delay time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.failRate, r.delay = min(max(failRate, 0), 1), max(delay, 0)
}

// receive handles one delivery: verify, record, then answer as the mode
// says. A delivery whose signature does not verify is answered 401, as
// docs/webhooks.md asks of a merchant.
func (r *Receiver) receive(w http.ResponseWriter, req *http.Request) {
	d := Delivery{Client: -1, WebhookID: req.Header.Get("webhook-id"), At: time.Now()}
	body, err := io.ReadAll(http.MaxBytesReader(w, req.Body, maxWebhookBody))
	d.Body = body
	var fields struct {
		Event     string `json:"event"`
		PaymentID string `json:"payment_id"`
		RefundID  string `json:"refund_id"`
	}
	_ = json.Unmarshal(body, &fields) // an unparsable body still counts as an attempt
	d.Event, d.PaymentID, d.RefundID = fields.Event, fields.PaymentID, fields.RefundID
	id := req.PathValue("client")
	r.mu.Lock()
	i, ok := r.index[id]
	v := r.verifiers[id]
	r.mu.Unlock()
	if ok && err == nil {
		d.Client = i
		d.Valid = v.Verify(req.Header, body) == nil
	}

	r.mu.Lock()
	fail := r.failRate > 0 && r.rng.Float64() < r.failRate
	delay := r.delay
	r.mu.Unlock()
	switch {
	case !d.Valid:
		d.Status = http.StatusUnauthorized
	case fail:
		d.Status = http.StatusInternalServerError
	default:
		d.Status = http.StatusNoContent
	}
	if delay > 0 && !r.wait(req.Context(), delay) {
		d.Status = 0
	}
	r.record(d)
	if d.Status != 0 {
		w.WriteHeader(d.Status)
	}
}

// wait sleeps d and reports whether it did so entirely (false: the sender
// went away or the receiver is closing).
func (r *Receiver) wait(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	case <-r.closing:
		return false
	}
}

func (r *Receiver) record(d Delivery) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.deliveries = append(r.deliveries, d)
	if !d.Valid {
		r.invalid++
	}
}

// Deliveries returns every attempt received so far, in arrival order.
func (r *Receiver) Deliveries() []Delivery {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Delivery(nil), r.deliveries...)
}

// Invalid is how many attempts did not verify: a bad or missing
// signature, or a URL of no client.
func (r *Receiver) Invalid() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.invalid
}

// Close stops the receiver; answers still waiting are dropped.
func (r *Receiver) Close() error {
	var err error
	r.closeOnce.Do(func() {
		close(r.closing)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err = r.srv.Shutdown(ctx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
			err = fmt.Errorf("receiver: close: %w", err)
		} else {
			err = nil
		}
		_ = r.srv.Close()
		<-r.done
	})
	return err
}
