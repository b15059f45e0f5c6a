package webhooksig_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"time"

	"github.com/pixgate/pixgate/webhooksig"
)

// ExampleVerifier_Verify shows an http.Handler that checks each pixgate
// webhook, processes each webhook-id once, and acknowledges duplicates
// with a 2xx so that pixgate stops retrying them.
func ExampleVerifier_Verify() {
	const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw" // in real code: os.Getenv("PIXGATE_WEBHOOK_SECRET")
	now := time.Unix(1_750_000_000, 0)                      // a fixed clock keeps the example deterministic

	verifier, err := webhooksig.NewVerifier(secret, webhooksig.WithClock(func() time.Time { return now }))
	if err != nil {
		panic(err)
	}

	var (
		mu   sync.Mutex
		seen = map[string]bool{} // use a database table with a unique key in production
	)
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 1<<20))
		if err != nil {
			http.Error(w, "body too large", http.StatusRequestEntityTooLarge)
			return
		}
		// Verify the raw bytes before decoding anything.
		if err := verifier.Verify(r.Header, body); err != nil {
			http.Error(w, "invalid signature", http.StatusUnauthorized)
			return
		}
		id := r.Header.Get(webhooksig.HeaderID)
		mu.Lock()
		dup := seen[id]
		mu.Unlock()
		if dup {
			w.WriteHeader(http.StatusNoContent) // already handled: acknowledge, do nothing
			return
		}
		var evt struct {
			Event     string `json:"event"`
			PaymentID string `json:"payment_id"`
		}
		if err := json.Unmarshal(body, &evt); err != nil {
			http.Error(w, "bad json", http.StatusBadRequest)
			return
		}
		fmt.Println("processing", evt.Event, evt.PaymentID)
		// Remember the id only once the event is handled, so that a failure
		// (answered with a non-2xx) is retried by pixgate.
		mu.Lock()
		seen[id] = true
		mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	})

	// Simulate pixgate: the same event delivered twice, then a forged one.
	body := []byte(`{"id":"evt_1","event":"pix.cashin.paid","statusTransaction":"PAID","value":10.5,"payment_id":"6f1c2a4e-0b5d-4c8e-9a57-3d2f1e0c9b8a"}`)
	sig, err := webhooksig.Sign(secret, "evt_1", now, body)
	if err != nil {
		panic(err)
	}
	deliver := func(body []byte, sig string) int {
		req := httptest.NewRequest(http.MethodPost, "/webhooks/pixgate", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set(webhooksig.HeaderID, "evt_1")
		req.Header.Set(webhooksig.HeaderTimestamp, strconv.FormatInt(now.Unix(), 10))
		req.Header.Set(webhooksig.HeaderSignature, sig)
		rec := httptest.NewRecorder()
		handler.ServeHTTP(rec, req)
		return rec.Code
	}
	fmt.Println(deliver(body, sig))
	fmt.Println(deliver(body, sig))
	fmt.Println(deliver(bytes.Replace(body, []byte("10.5"), []byte("1050"), 1), sig))

	// Output:
	// processing pix.cashin.paid 6f1c2a4e-0b5d-4c8e-9a57-3d2f1e0c9b8a
	// 204
	// 204
	// 401
}
