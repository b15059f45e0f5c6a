package webhook_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/internal/backoffice"
	"github.com/pixgate/pixgate/internal/gateway"
	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/provider/sandbox"
	"github.com/pixgate/pixgate/internal/store"
	"github.com/pixgate/pixgate/internal/testkit"
	"github.com/pixgate/pixgate/internal/webhook"
	"github.com/pixgate/pixgate/webhooksig"
)

func databases(t *testing.T, fn func(t *testing.T, db func(t *testing.T) *store.DB)) {
	testkit.Databases(t, func(t *testing.T, open testkit.Opener) { fn(t, open) })
}

func openPGURL(t *testing.T, url string) *store.DB { return testkit.OpenPostgresURL(t, url) }

type clock struct{ off atomic.Int64 }

func (c *clock) Now() time.Time          { return time.Now().Add(time.Duration(c.off.Load())) }
func (c *clock) Advance(d time.Duration) { c.off.Add(int64(d)) }

// receiver is a real HTTP server on loopback that records what it gets.
type receiver struct {
	srv      *httptest.Server
	mu       sync.Mutex
	got      []http.Header
	bodies   [][]byte
	answer   func(n int) (int, http.Header) // status for the n-th request (1-based)
	inflight map[string]int
	maxSame  int
}

func newReceiver(t *testing.T, answer func(n int) (int, http.Header), delay time.Duration) *receiver {
	r := &receiver{answer: answer, inflight: map[string]int{}}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		id := req.Header.Get("webhook-id")
		r.mu.Lock()
		r.got = append(r.got, req.Header.Clone())
		r.bodies = append(r.bodies, body)
		n := len(r.got)
		r.inflight[id]++
		r.maxSame = max(r.maxSame, r.inflight[id])
		r.mu.Unlock()
		time.Sleep(delay)
		r.mu.Lock()
		r.inflight[id]--
		r.mu.Unlock()
		status, h := http.StatusNoContent, http.Header(nil)
		if r.answer != nil {
			status, h = r.answer(n)
		}
		for k, v := range h {
			w.Header()[k] = v
		}
		w.WriteHeader(status)
		_, _ = w.Write([]byte(`{"ok":false,"note":"received"}`))
	}))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *receiver) count() int { r.mu.Lock(); defer r.mu.Unlock(); return len(r.got) }

type fixture struct {
	db    *store.DB
	gw    *gateway.Service
	bo    *backoffice.Service
	cred  backoffice.Credentials
	c     pix.Client
	clock *clock
	disp  *webhook.Dispatcher
}

func setup(t *testing.T, db *store.DB, schedule ...time.Duration) *fixture {
	return setupWith(t, db, false, schedule...)
}

// setupWith is setup whose gateway, when courier is set, hands the events
// it writes to the fixture's dispatcher (gateway.Config.Courier).
func setupWith(t *testing.T, db *store.DB, courier bool, schedule ...time.Duration) *fixture {
	ctx := context.Background()
	clk := &clock{}
	log := slog.New(slog.NewJSONHandler(io.Discard, nil))
	if len(schedule) == 0 {
		schedule = []time.Duration{time.Second, time.Second}
	}
	d := &webhook.Dispatcher{DB: db, Client: webhook.Guard{AllowPrivate: true}.Client(webhook.DefaultTimeout),
		Schedule: schedule, Now: clk.Now, Log: log}
	cfg := gateway.Config{DB: db, Env: "sandbox",
		ChargeTTL: time.Hour, Log: log, Provider: sandbox.New(sandbox.Config{PixKey: "pix@pixgate.dev", MerchantName: "Loja", MerchantCity: "Recife", Delay: time.Second, Now: clk.Now}), Now: clk.Now}
	if courier {
		cfg.Courier = d
	}
	gw, err := gateway.New(cfg)
	require.NoError(t, err)
	bo, err := backoffice.New(backoffice.Config{DB: db, Env: cfg.Env, Now: clk.Now})
	require.NoError(t, err)
	cred, err := bo.CreateClient(ctx, backoffice.ClientParams{Name: "m"})
	require.NoError(t, err)
	c, err := db.Client(ctx, cred.ClientID)
	require.NoError(t, err)
	return &fixture{db: db, gw: gw, bo: bo, cred: cred, c: c, clock: clk, disp: d}
}

func chargeReq(ext, url string) *gateway.ChargeRequest {
	amount := json.RawMessage("10.00")
	return &gateway.ChargeRequest{Amount: amount, ExternalID: ext, PayerQuestion: "p", PostbackURL: url,
		Payer: &gateway.Payer{Name: "M", Document: "52998224725", PhoneNumber: "11987654321", Email: "m@example.com",
			Address: &gateway.Address{Street: "R", Number: "1", Neighborhood: "C", City: "Recife", State: "PE", ZipCode: "50000000"}},
		Products: []gateway.Product{{Name: "X", Quantity: "1", Price: amount}}}
}

// paidCharge creates and pays a charge whose webhooks go to url.
func (f *fixture) paidCharge(t *testing.T, ext, url string) string {
	ctx := context.Background()
	resp, _, err := f.gw.CreateCharge(ctx, f.c, gateway.Keyed(chargeReq(ext, url), "", []byte(`{"e":"`+ext+`"}`)))
	require.NoError(t, err)
	tr, err := f.db.Transaction(ctx, f.c.ID, resp.PaymentID)
	require.NoError(t, err)
	_, err = f.gw.Sandbox().Pay(ctx, tr)
	require.NoError(t, err)
	return resp.PaymentID
}

// deliveries fails through t: the test, or the collector of a condition
// that runs in a goroutine of its own.
func (f *fixture) deliveries(t require.TestingT, id string) []gateway.DeliveryView {
	v, err := f.gw.Deliveries(context.Background(), f.c, id)
	require.NoError(t, err)
	return v
}

// everyEventKind makes one event of each kind, all to url, through the
// gateway's use cases: cash-in paid, refund completed and failed, cash-in
// cancelled, payouts paid, failed and reversed (settled over three rounds
// of the fake clock). It returns the paid charge's id.
func (f *fixture) everyEventKind(t *testing.T, url string) string {
	ctx := context.Background()
	paid := f.paidCharge(t, "c1", url)
	_, _, err := f.gw.CreateRefund(ctx, f.c, gateway.Keyed(&gateway.RefundRequest{PaymentID: paid, Amount: json.RawMessage("1.00")}, "", []byte(`{"r":1}`)))
	require.NoError(t, err)
	_, _, err = f.gw.CreateRefund(ctx, f.c, gateway.Keyed(&gateway.RefundRequest{PaymentID: paid, Amount: json.RawMessage("1.00"), Reason: "sandbox:fail"}, "", []byte(`{"r":2}`)))
	require.NoError(t, err)
	resp, _, err := f.gw.CreateCharge(ctx, f.c, gateway.Keyed(chargeReq("c2", url), "", []byte(`{"c":2}`)))
	require.NoError(t, err)
	_, err = f.gw.Sandbox().ExpireCharge(ctx, f.c, resp.PaymentID)
	require.NoError(t, err)
	for i, key := range []string{"a@example.com", "b@fail.sandbox", "c@reverse.sandbox"} {
		ext := []string{"p1", "p2", "p3"}[i]
		_, _, err := f.gw.CreatePayout(ctx, f.c, gateway.Keyed(&gateway.PayoutRequest{Amount: json.RawMessage("1"), Description: "d", CallbackURL: url,
			ExternalID: &ext, CreditParty: &pix.CreditParty{Name: "n", KeyType: "EMAIL", Key: key}}, "", []byte(`{"p":"`+ext+`"}`)))

		require.NoError(t, err)
	}
	for i := 0; i < 3; i++ {
		f.clock.Advance(2 * time.Second)
		_, err = f.gw.Transfers().StepDue(ctx, pix.TransferPayout, 100)
		require.NoError(t, err)
		_, err = f.gw.Transfers().StepDue(ctx, pix.TransferRefund, 100)
		require.NoError(t, err)
	}
	return paid
}

// everyEventKindSent is what everyEventKind sends, by event.
var everyEventKindSent = map[string]int{
	pix.EventCashinPaid: 1, pix.EventCashinCancelled: 1, pix.EventRefundCompleted: 1, pix.EventRefundFailed: 1,
	pix.EventCashoutPaid: 2, pix.EventCashoutFailed: 1, pix.EventCashoutReversed: 1,
}

// run runs f's dispatcher until the test ends.
func (f *fixture) run(t *testing.T) {
	testkit.RunUntilCleanup(t, "the dispatcher did not stop", f.disp.Run)
}

func TestEveryEventTypeIsDeliveredSigned(t *testing.T) {
	t.Parallel()
	databases(t, func(t *testing.T, open func(t *testing.T) *store.DB) {
		f := setup(t, open(t))
		ctx := context.Background()
		rec := newReceiver(t, nil, 0)
		url := rec.srv.URL + "/hook"

		paid := f.everyEventKind(t, url)
		n, err := f.disp.DeliverDue(ctx)
		require.NoError(t, err)
		require.Equal(t, 8, n)

		verifier, err := webhooksig.NewVerifier(f.cred.WebhookSecret, webhooksig.WithClock(f.clock.Now))
		require.NoError(t, err)
		seen := map[string]int{}
		for i, h := range rec.got {
			require.NoError(t, verifier.Verify(h, rec.bodies[i]))
			require.Equal(t, "application/json", h.Get("Content-Type"))
			var body map[string]any
			require.NoError(t, json.Unmarshal(rec.bodies[i], &body))
			require.Equal(t, h.Get("webhook-id"), body["id"])
			seen[body["event"].(string)]++
			switch body["event"] {
			case pix.EventCashinPaid:
				require.Equal(t, "PAID", body["statusTransaction"])
				require.Equal(t, 10.0, body["value"])
			case pix.EventCashoutReversed:
				require.Equal(t, "REVERSED", body["statusTransaction"])
				require.NotEmpty(t, body["transaction_id"])
			case pix.EventRefundCompleted, pix.EventRefundFailed:
				require.NotEmpty(t, body["refund_id"])
				require.Equal(t, paid, body["payment_id"])
			}
		}
		require.Equal(t, everyEventKindSent, seen)
		for _, d := range f.deliveries(t, paid) {
			require.Equal(t, "delivered", d.Status)
			require.Len(t, d.Attempts, 1)
			require.Equal(t, http.StatusNoContent, *d.Attempts[0].StatusCode)
			require.Nil(t, d.Attempts[0].Error)
		}
		n, err = f.disp.DeliverDue(ctx)
		require.NoError(t, err)
		require.Zero(t, n, "delivered events are not sent again")
	})
}

func TestRetriesUntilSuccess(t *testing.T) {
	t.Parallel()
	databases(t, func(t *testing.T, open func(t *testing.T) *store.DB) {
		f := setup(t, open(t), 5*time.Second, 5*time.Minute, 30*time.Minute)
		ctx := context.Background()
		rec := newReceiver(t, func(n int) (int, http.Header) {
			if n <= 2 {
				return http.StatusInternalServerError, nil
			}
			return http.StatusOK, nil
		}, 0)
		var logs testkit.Buffer
		f.disp.Log = slog.New(slog.NewJSONHandler(&logs, nil)) // info and above
		id := f.paidCharge(t, "c1", rec.srv.URL)
		for _, wait := range []time.Duration{0, 6 * time.Second, 6 * time.Minute} {
			f.clock.Advance(wait)
			n, err := f.disp.DeliverDue(ctx)
			require.NoError(t, err)
			require.Equal(t, 1, n, "one attempt after %s", wait)
			n, err = f.disp.DeliverDue(ctx)
			require.NoError(t, err)
			require.Zero(t, n, "nothing due before the next wait")
		}
		d := f.deliveries(t, id)
		require.Len(t, d, 1)
		require.Equal(t, "delivered", d[0].Status)
		require.Len(t, d[0].Attempts, 3)
		require.Equal(t, 500, *d[0].Attempts[0].StatusCode)
		require.Equal(t, 200, *d[0].Attempts[2].StatusCode)
		ids := map[string]bool{}
		for _, h := range rec.got {
			ids[h.Get("webhook-id")] = true
		}
		require.Len(t, ids, 1, "the same webhook-id on every attempt")
		// The failed attempts are logged for the operator; the delivered
		// one only in its attempt record.
		var outcomes []string
		for _, line := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
			var l map[string]any
			require.NoError(t, json.Unmarshal([]byte(line), &l))
			require.Equal(t, "webhook attempt", l["msg"])
			outcomes = append(outcomes, l["outcome"].(string))
		}
		require.Equal(t, []string{webhook.OutcomeRetry, webhook.OutcomeRetry}, outcomes)
	})
}

func TestGiveUpAfterScheduleAndOn410(t *testing.T) {
	t.Parallel()
	databases(t, func(t *testing.T, open func(t *testing.T) *store.DB) {
		f := setup(t, open(t), time.Second, time.Second)
		ctx := context.Background()
		failing := newReceiver(t, func(int) (int, http.Header) { return http.StatusBadGateway, nil }, 0)
		gone := newReceiver(t, func(int) (int, http.Header) { return http.StatusGone, nil }, 0)
		a := f.paidCharge(t, "a", failing.srv.URL)
		b := f.paidCharge(t, "b", gone.srv.URL)
		for i := 0; i < 5; i++ {
			_, err := f.disp.DeliverDue(ctx)
			require.NoError(t, err)
			f.clock.Advance(2 * time.Second)
		}
		require.Equal(t, 3, failing.count(), "first attempt + 2 retries")
		require.Equal(t, 1, gone.count(), "410 stops at once")
		require.Equal(t, "failed", f.deliveries(t, a)[0].Status)
		require.Equal(t, "failed", f.deliveries(t, b)[0].Status)

		// A manual retry sends it again with the same id.
		require.NoError(t, f.gw.RetryDelivery(ctx, f.c, f.deliveries(t, b)[0].EventID))
		_, err := f.disp.DeliverDue(ctx)
		require.NoError(t, err)
		require.Equal(t, 2, gone.count())
		require.Equal(t, gone.got[0].Get("webhook-id"), gone.got[1].Get("webhook-id"))
	})
}

func TestRetryAfterIsHonoured(t *testing.T) {
	t.Parallel()
	databases(t, func(t *testing.T, open func(t *testing.T) *store.DB) {
		f := setup(t, open(t), time.Second, time.Second)
		ctx := context.Background()
		rec := newReceiver(t, func(n int) (int, http.Header) {
			if n == 1 {
				return http.StatusTooManyRequests, http.Header{"Retry-After": {"120"}}
			}
			return http.StatusOK, nil
		}, 0)
		f.paidCharge(t, "a", rec.srv.URL)
		_, err := f.disp.DeliverDue(ctx)
		require.NoError(t, err)
		f.clock.Advance(30 * time.Second) // past the 1 s schedule, before Retry-After
		n, err := f.disp.DeliverDue(ctx)
		require.NoError(t, err)
		require.Zero(t, n)
		f.clock.Advance(100 * time.Second)
		n, err = f.disp.DeliverDue(ctx)
		require.NoError(t, err)
		require.Equal(t, 1, n)
		require.Equal(t, 2, rec.count())
	})
}

func TestRotatedSecretSignsWithBoth(t *testing.T) {
	t.Parallel()
	databases(t, func(t *testing.T, open func(t *testing.T) *store.DB) {
		f := setup(t, open(t))
		ctx := context.Background()
		rec := newReceiver(t, nil, 0)
		newCred, err := f.bo.RotateWebhookSecret(ctx, f.c.ID)
		require.NoError(t, err)
		f.paidCharge(t, "a", rec.srv.URL)
		_, err = f.disp.DeliverDue(ctx)
		require.NoError(t, err)
		for _, secret := range []string{f.cred.WebhookSecret, newCred.WebhookSecret} {
			v, err := webhooksig.NewVerifier(secret, webhooksig.WithClock(f.clock.Now))
			require.NoError(t, err)
			require.NoError(t, v.Verify(rec.got[0], rec.bodies[0]))
		}
		// After the overlap only the new secret signs.
		f.clock.Advance(25 * time.Hour)
		f.paidCharge(t, "b", rec.srv.URL)
		_, err = f.disp.DeliverDue(ctx)
		require.NoError(t, err)
		old, err := webhooksig.NewVerifier(f.cred.WebhookSecret, webhooksig.WithClock(f.clock.Now))
		require.NoError(t, err)
		require.Error(t, old.Verify(rec.got[1], rec.bodies[1]))
	})
}

func TestPrivateDestinationRefused(t *testing.T) {
	t.Parallel()
	databases(t, func(t *testing.T, open func(t *testing.T) *store.DB) {
		f := setup(t, open(t))
		ctx := context.Background()
		rec := newReceiver(t, nil, 0)
		id := f.paidCharge(t, "a", rec.srv.URL) // accepted: this gateway allows private URLs
		f.disp.Client = webhook.Guard{AllowPrivate: false}.Client(webhook.DefaultTimeout)
		_, err := f.disp.DeliverDue(ctx)
		require.NoError(t, err)
		require.Zero(t, rec.count(), "never dialed")
		d := f.deliveries(t, id)[0]
		require.Equal(t, "failed", d.Status)
		require.Nil(t, d.Attempts[0].StatusCode)
		require.Equal(t, webhook.ClassNotAllowed, *d.Attempts[0].Error)
	})
}

// TestTwoDispatchersNeverOverlap: two nodes on one PostgreSQL deliver every
// event, and never the same event at the same time.
func TestTwoDispatchersNeverOverlap(t *testing.T) {
	t.Parallel()
	url := testkit.MigratedPostgresURL(t)
	f := setup(t, openPGURL(t, url))
	rec := newReceiver(t, nil, 30*time.Millisecond)
	const events = 40
	for i := 0; i < events; i++ {
		f.paidCharge(t, "e"+string(rune('A'+i%26))+string(rune('a'+i/26)), rec.srv.URL)
	}
	other := &webhook.Dispatcher{DB: openPGURL(t, url), Client: f.disp.Client, Schedule: f.disp.Schedule, Now: f.clock.Now, Log: f.disp.Log, PerHost: 8}
	f.disp.PerHost = 8
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for _, d := range []*webhook.Dispatcher{f.disp, other} {
		wg.Add(1)
		go func() { defer wg.Done(); d.Run(ctx) }()
	}
	require.Eventually(t, func() bool { return rec.count() >= events }, 20*time.Second, 20*time.Millisecond)
	cancel()
	wg.Wait()
	rec.mu.Lock()
	defer rec.mu.Unlock()
	require.Equal(t, 1, rec.maxSame, "no event was ever in flight twice")
	require.Len(t, rec.got, events, "each delivered once")
}
