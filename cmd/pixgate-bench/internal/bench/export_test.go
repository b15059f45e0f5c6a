package bench

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"net/http"
	"time"

	"github.com/pixgate/pixgate/internal/pix"
)

// Hook gives tests a look inside a run between its load and its check.
type Hook struct{ r *runner }

// ClientIDs returns the ids of the clients the run used.
func (h Hook) ClientIDs() []string {
	ids := make([]string, len(h.r.clients))
	for i, c := range h.r.clients {
		ids[i] = c.cred.ID
	}
	return ids
}

// FabricatePaidCharge records a charge the server never acknowledged as if
// it had been created and paid.
func (h Hook) FabricatePaidCharge(client int, paymentID string, amount pix.Amount) {
	h.r.clients[client].addCharge(&chargeRec{id: paymentID, ext: "fabricated-" + paymentID, amount: amount, pay: payAcked}, false)
}

// SetAfterLoad installs f to run after the load and before the check, until
// the returned function is called.
func SetAfterLoad(f func(ctx context.Context, h Hook) error) (restore func()) {
	afterLoad = func(ctx context.Context, r *runner) error { return f(ctx, Hook{r}) }
	return func() { afterLoad = nil }
}

// Schedule exposes the mix's interleaved cycle.
var Schedule = schedule

// NewDirectTransport exposes the load generator's HTTP transport: at most
// maxIdle idle connections, each reused only within idleKeep, trusting
// roots for https (nil: the system's).
func NewDirectTransport(maxIdle int, idleKeep time.Duration, roots *x509.CertPool) interface {
	http.RoundTripper
	CloseIdleConnections()
} {
	t := newDirectTransport(maxIdle)
	t.idleKeep = idleKeep
	if roots != nil {
		t.tls = &tls.Config{RootCAs: roots}
	}
	return t
}
