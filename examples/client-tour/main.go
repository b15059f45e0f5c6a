// Command client-tour walks through pixgate with the Go client package
// (github.com/pixgate/pixgate/client) against a sandbox server: it creates a
// charge, pays it with the sandbox tool, waits for pix.cashin.paid, sends a
// payout and waits for pix.cashout.paid, refunds part of the charge and waits
// for pix.refund.completed, then prints the balance. Webhooks are received by
// client.WebhookHandler on a local listener whose URL is the charge's
// postbackUrl and the payout's callbackUrl.
//
// Usage, with the JSON that pixgate serve or pixgate clients create prints:
//
//	PIXGATE_CLIENT_ID=... PIXGATE_CLIENT_SECRET=... PIXGATE_WEBHOOK_SECRET=whsec_... \
//	  go run ./examples/client-tour -url http://127.0.0.1:8080
//
// It exits 0 when every step succeeded, 1 with the failed step otherwise, 2
// on bad flags.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/pixgate/pixgate/client"
)

// config is what the tour needs; flags fill it, with environment defaults.
type config struct {
	BaseURL       string        // pixgate server
	ClientID      string        // stpi
	ClientSecret  string        // stps
	WebhookSecret string        // whsec_…
	Listen        string        // address of the webhook receiver
	PublicURL     string        // URL pixgate posts webhooks to; derived from Listen when empty
	Wait          time.Duration // longest wait for each webhook
}

func main() {
	cfg, err := parseFlags(os.Args[1:])
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "client-tour:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, cfg, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "client-tour: FAILED:", err)
		os.Exit(1)
	}
}

func parseFlags(args []string) (config, error) {
	env := func(k, def string) string {
		if v := os.Getenv(k); v != "" {
			return v
		}
		return def
	}
	var cfg config
	fs := flag.NewFlagSet("client-tour", flag.ContinueOnError)
	fs.StringVar(&cfg.BaseURL, "url", env("PIXGATE_URL", "http://127.0.0.1:8080"), "pixgate base URL (env PIXGATE_URL)")
	fs.StringVar(&cfg.ClientID, "client-id", os.Getenv("PIXGATE_CLIENT_ID"), "client id, header stpi (env PIXGATE_CLIENT_ID)")
	fs.StringVar(&cfg.ClientSecret, "client-secret", os.Getenv("PIXGATE_CLIENT_SECRET"), "client secret, header stps (env PIXGATE_CLIENT_SECRET)")
	fs.StringVar(&cfg.WebhookSecret, "webhook-secret", os.Getenv("PIXGATE_WEBHOOK_SECRET"), "client's webhook secret whsec_… (env PIXGATE_WEBHOOK_SECRET)")
	fs.StringVar(&cfg.Listen, "listen", env("PIXGATE_TOUR_LISTEN", "127.0.0.1:0"), "listen address of the webhook receiver (env PIXGATE_TOUR_LISTEN)")
	fs.StringVar(&cfg.PublicURL, "public-url", os.Getenv("PIXGATE_TOUR_PUBLIC_URL"), "webhook URL given to pixgate, when it cannot reach the listen address as is (env PIXGATE_TOUR_PUBLIC_URL)")
	fs.DurationVar(&cfg.Wait, "wait", 30*time.Second, "longest wait for each webhook")
	if err := fs.Parse(args); err != nil {
		return config{}, err
	}
	if fs.NArg() > 0 {
		return config{}, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if cfg.ClientID == "" || cfg.ClientSecret == "" || cfg.WebhookSecret == "" {
		return config{}, errors.New("client id, client secret and webhook secret are required (-client-id, -client-secret, -webhook-secret or PIXGATE_CLIENT_ID, PIXGATE_CLIENT_SECRET, PIXGATE_WEBHOOK_SECRET)")
	}
	return cfg, nil
}

// receive starts the webhook receiver: every verified event lands in the
// inbox it returns, with the URL webhooks are sent to and its stop.
func receive(cfg config, out io.Writer) (*inbox, string, func(), error) {
	in := newInbox()
	wh, err := client.WebhookHandler(cfg.WebhookSecret, client.EventHandlers{OnOther: in.add,
		OnCashinPaid: in.add, OnCashoutPaid: in.add, OnCashoutFailed: in.add, OnRefundCompleted: in.add, OnRefundFailed: in.add})
	if err != nil {
		return nil, "", nil, err
	}
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return nil, "", nil, fmt.Errorf("webhook receiver: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("POST /webhooks/pixgate", wh)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	hook := cfg.PublicURL
	if hook == "" {
		hook = "http://" + ln.Addr().String() + "/webhooks/pixgate"
	}
	fmt.Fprintf(out, "webhooks: listening on %s, sent to %s\n", ln.Addr(), hook)
	return in, hook, func() { srv.Close() }, nil
}

// run is the tour. Each step prints one line to out.
func run(ctx context.Context, cfg config, out io.Writer) error {
	c, err := client.New(cfg.BaseURL, cfg.ClientID, cfg.ClientSecret)
	if err != nil {
		return err
	}
	in, hook, stop, err := receive(cfg, out)
	if err != nil {
		return err
	}
	defer stop()

	bal, err := c.Balance(ctx)
	if err != nil {
		return fmt.Errorf("balance: %w", err)
	}
	fmt.Fprintf(out, "balance: available R$ %s, pending R$ %s\n", bal.Available, bal.Pending)

	// 1. A charge of R$ 20.00, paid in the sandbox.
	order := "tour-" + client.NewIdempotencyKey()[:12]
	amount := client.Reais("20.00")
	charge, err := c.CreateCharge(ctx, client.ChargeRequest{
		Amount: amount, ExternalID: order, PayerQuestion: "Pedido " + order, PostbackURL: hook,
		Payer: client.Payer{Name: "Maria da Silva", Document: "52998224725", PhoneNumber: "11987654321",
			Email: "maria@example.com", Address: client.Address{Street: "Avenida Paulista", Number: "1000",
				Neighborhood: "Bela Vista", City: "São Paulo", State: "SP", ZipCode: "01310100"}},
		Products: []client.Product{{Name: "Camiseta", Quantity: "1", Price: amount}},
	})
	if err != nil {
		return fmt.Errorf("create charge: %w", err)
	}
	fmt.Fprintf(out, "charge: %s R$ %s created (%s), external_id %s\n", charge.PaymentID, charge.Amount, charge.Status, order)
	paid, err := c.SandboxPay(ctx, charge.PaymentID)
	if err != nil {
		return fmt.Errorf("sandbox pay: %w", err)
	}
	fmt.Fprintf(out, "sandbox: charge %s paid (%s)\n", paid.PaymentID, paid.Status)
	e, err := in.wait(ctx, cfg.Wait, client.EventCashinPaid, "", func(e client.Event) bool { return e.PaymentID == charge.PaymentID })
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "webhook: %s for %s, R$ %s (fee R$ %s)\n", e.Event, e.PaymentID, e.Value, e.Tax)

	// 2. A payout of R$ 5.00 to a PIX key. Its Idempotency-Key is chosen
	// before the call (a real program stores it with what the payout pays
	// for): when the outcome is unknown (a *client.RetryError), the same
	// request goes again with the same key, and the server replays the
	// payout instead of paying twice. A new key there could pay twice.
	payReq := client.PayoutRequest{
		Amount: client.Reais("5.00"), Description: "Pagamento fornecedor " + order,
		CreditParty: client.CreditParty{Name: "Fornecedor Ltda", KeyType: client.KeyEmail, Key: "fornecedor@example.com"},
		CallbackURL: hook, IdempotencyKey: client.NewIdempotencyKey(),
	}
	payout, err := c.CreatePayout(ctx, payReq)
	if re := client.AsRetryError(err); re != nil {
		fmt.Fprintf(out, "payout: outcome unknown (%v); sending it again with Idempotency-Key %s\n", re.Err, re.Key)
		payout, err = c.CreatePayout(ctx, payReq)
	}
	if err != nil {
		return fmt.Errorf("create payout: %w", err)
	}
	fmt.Fprintf(out, "payout: %s R$ %s + fee R$ %s (%s)\n", payout.TransactionID, payout.Amount, payout.Tax, payout.Status)
	isPayout := func(e client.Event) bool {
		return e.TransactionID == payout.TransactionID || e.PaymentID == payout.TransactionID
	}
	if e, err = in.wait(ctx, cfg.Wait, client.EventCashoutPaid, client.EventCashoutFailed, isPayout); err != nil {
		return err
	}
	fmt.Fprintf(out, "webhook: %s for %s, R$ %s\n", e.Event, payout.TransactionID, e.Value)

	// 3. A refund of R$ 3.50 of the charge.
	refund, err := c.CreateRefund(ctx, client.RefundRequest{PaymentID: charge.PaymentID,
		Amount: client.Reais("3.50"), Reason: "item devolvido"})
	if err != nil {
		return fmt.Errorf("create refund: %w", err)
	}
	fmt.Fprintf(out, "refund: %s R$ %s of %s (%s)\n", refund.RefundID, refund.Amount, refund.PaymentID, refund.Status)
	isRefund := func(e client.Event) bool { return e.RefundID == refund.RefundID }
	if e, err = in.wait(ctx, cfg.Wait, client.EventRefundCompleted, client.EventRefundFailed, isRefund); err != nil {
		return err
	}
	fmt.Fprintf(out, "webhook: %s for %s, R$ %s\n", e.Event, refund.RefundID, e.Value)

	if bal, err = c.Balance(ctx); err != nil {
		return fmt.Errorf("balance: %w", err)
	}
	fmt.Fprintf(out, "balance: available R$ %s, pending R$ %s\n", bal.Available, bal.Pending)
	fmt.Fprintln(out, "done")
	return nil
}

// inbox keeps the events received, so a wait finds an event that arrived
// before it began. Deliveries are at least once: duplicates (same ID) are
// kept once.
type inbox struct {
	mu      sync.Mutex
	events  []client.Event
	seen    map[string]bool
	changed chan struct{} // closed and replaced on each new event
}

func newInbox() *inbox {
	return &inbox{seen: map[string]bool{}, changed: make(chan struct{})}
}

func (b *inbox) add(_ context.Context, e client.Event) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.seen[e.ID] {
		b.seen[e.ID] = true
		b.events = append(b.events, e)
		close(b.changed)
		b.changed = make(chan struct{})
	}
	return nil
}

// wait returns the first event of type want that match accepts, or an error
// when one of type fail (if not empty) arrives first, ctx ends, or timeout
// passes.
func (b *inbox) wait(ctx context.Context, timeout time.Duration, want, fail string, match func(client.Event) bool) (client.Event, error) {
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	for {
		b.mu.Lock()
		changed := b.changed
		for _, e := range b.events {
			if !match(e) {
				continue
			}
			switch e.Event {
			case want:
				b.mu.Unlock()
				return e, nil
			case fail:
				b.mu.Unlock()
				return client.Event{}, fmt.Errorf("waiting for %s: received %s (%s)", want, e.Event, e.StatusTransaction)
			}
		}
		b.mu.Unlock()
		select {
		case <-changed:
		case <-timer.C:
			return client.Event{}, fmt.Errorf("no %s webhook within %s (can the pixgate server reach the webhook URL? is the webhook secret right?)", want, timeout)
		case <-ctx.Done():
			return client.Event{}, fmt.Errorf("waiting for %s: %w", want, ctx.Err())
		}
	}
}
