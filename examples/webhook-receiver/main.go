// Command webhook-receiver is a minimal merchant-side receiver of pixgate
// webhooks. It verifies each delivery with package webhooksig, handles each
// webhook-id once, logs the event type and payment_id, and answers 204 at once.
//
// Usage:
//
//	PIXGATE_WEBHOOK_SECRET=whsec_... go run ./examples/webhook-receiver -addr 127.0.0.1:9000
//
// then create charges with "postbackUrl": "http://127.0.0.1:9000/webhooks/pixgate"
// (private URLs are accepted in sandbox only; in production the URL must be
// public).
//
// The set of seen ids lives in memory, so it is lost on restart and not
// shared between instances: a real receiver records webhook-id in its
// database, in the same transaction as the work the event triggers, under a
// unique constraint.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/pixgate/pixgate/webhooksig"
)

// maxBody bounds a webhook body; pixgate's are well under 1 KiB.
const maxBody = 64 << 10

// keepIDs is how long a webhook-id is remembered: longer than pixgate's
// whole retry schedule (about 28 h by default).
const keepIDs = 72 * time.Hour

func main() {
	addr := flag.String("addr", "127.0.0.1:9000", "listen address")
	path := flag.String("path", "/webhooks/pixgate", "URL path that receives webhooks")
	flag.Parse()

	log := slog.New(slog.NewJSONHandler(os.Stdout, nil))
	verifier, err := webhooksig.NewVerifier(os.Getenv("PIXGATE_WEBHOOK_SECRET"))
	if err != nil {
		log.Error("PIXGATE_WEBHOOK_SECRET must hold the client's webhook_secret (whsec_...)", "error", err.Error())
		os.Exit(2)
	}

	mux := http.NewServeMux()
	mux.Handle("POST "+*path, &receiver{verifier: verifier, log: log, seen: map[string]time.Time{}})
	srv := &http.Server{
		Addr:              *addr,
		Handler:           mux,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       10 * time.Second,
		WriteTimeout:      10 * time.Second,
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdown)
	}()

	log.Info("listening", "addr", *addr, "path", *path)
	if err := srv.ListenAndServe(); err != nil && !errors.Is(err, http.ErrServerClosed) {
		log.Error("serve", "error", err.Error())
		os.Exit(1)
	}
}

// event holds the body fields this receiver looks at (see docs/webhooks.md).
type event struct {
	ID                string  `json:"id"`
	Event             string  `json:"event"`
	StatusTransaction string  `json:"statusTransaction"`
	PaymentID         string  `json:"payment_id"`
	ExternalID        *string `json:"external_id"`
	RefundID          string  `json:"refund_id"`
}

// receiver handles pixgate webhooks.
type receiver struct {
	verifier *webhooksig.Verifier
	log      *slog.Logger

	mu   sync.Mutex
	seen map[string]time.Time // webhook-id → when it was handled
}

func (rc *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	if err != nil {
		http.Error(w, "body too large", http.StatusRequestEntityTooLarge)
		return
	}
	// Verify the exact bytes received, before decoding them.
	if err := rc.verifier.Verify(r.Header, body); err != nil {
		rc.log.Warn("webhook rejected", "reason", err.Error(), "remote", r.RemoteAddr)
		http.Error(w, "invalid signature", http.StatusUnauthorized)
		return
	}
	id := r.Header.Get(webhooksig.HeaderID)
	if rc.handled(id) {
		rc.log.Info("duplicate webhook ignored", "webhook_id", id)
		w.WriteHeader(http.StatusNoContent) // a 2xx stops pixgate's retries
		return
	}

	var e event
	if err := json.Unmarshal(body, &e); err != nil {
		rc.log.Error("signed webhook with a bad body", "webhook_id", id, "error", err.Error())
		http.Error(w, "bad body", http.StatusBadRequest)
		return
	}
	// Do the real work here, or queue it durably and answer: pixgate waits at
	// most 10 s for the answer. Unknown event types are acknowledged too.
	rc.log.Info("webhook", "webhook_id", id, "event", e.Event, "status", e.StatusTransaction,
		"payment_id", e.PaymentID, "refund_id", e.RefundID)

	rc.remember(id)
	w.WriteHeader(http.StatusNoContent)
}

// handled reports whether id was already processed.
func (rc *receiver) handled(id string) bool {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	_, ok := rc.seen[id]
	return ok
}

// remember records id as processed and forgets ids older than keepIDs.
func (rc *receiver) remember(id string) {
	now := time.Now()
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.seen[id] = now
	if len(rc.seen)%1024 == 0 {
		for k, at := range rc.seen {
			if now.Sub(at) > keepIDs {
				delete(rc.seen, k)
			}
		}
	}
}
