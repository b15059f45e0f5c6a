package webhook_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/internal/testkit"
)

// TestRunDrainsWithinGrace: when its context ends, Run lets an attempt in
// flight finish up to Grace, then abandons it; the event stays pending (it
// is sent again later) and the abandoned attempt is recorded.
func TestRunDrainsWithinGrace(t *testing.T) {
	t.Parallel()
	f := setup(t, testkit.OpenSQLite(t))
	arrived := make(chan struct{}, 1)
	release := make(chan struct{})
	hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived <- struct{}{}
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(func() { close(release); hang.Close() })
	id := f.paidCharge(t, "hang", hang.URL)
	f.disp.Grace = 300 * time.Millisecond
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { f.disp.Run(ctx); close(done) }()
	<-arrived
	cancel()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return after its grace period")
	}
	d := f.deliveries(t, id)[0]
	require.Equal(t, "pending", d.Status, "abandoned, to be sent again")
	require.Len(t, d.Attempts, 1)
	require.NotNil(t, d.Attempts[0].Error)
}
