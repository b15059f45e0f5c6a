package gateway

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/internal/outbox"
	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/provider/sandbox"
	"github.com/pixgate/pixgate/internal/store"
	"github.com/pixgate/pixgate/internal/testkit"
	"github.com/pixgate/pixgate/internal/webhook"
)

// TestOutboxHandsEventsToTheDispatcher writes events through the outbox with
// a real dispatcher running two workers, no tick and no wake-up wired: the
// events that found a free worker are written leased to it and delivered
// at once, without a claim; another node's claim gets only the one written
// beyond the free workers; a transaction that fails after writing its
// events gives its workers back.
func TestOutboxHandsEventsToTheDispatcher(t *testing.T) {
	t.Parallel()
	testkit.Databases(t, func(t *testing.T, open testkit.Opener) {
		ctx := context.Background()
		db := open(t)
		log := slog.New(slog.NewJSONHandler(io.Discard, nil))
		d := &webhook.Dispatcher{DB: db, Client: webhook.Guard{AllowPrivate: true}.Client(webhook.DefaultTimeout),
			Schedule: []time.Duration{time.Second}, Log: log, Workers: 2, Interval: time.Hour}
		s, err := New(Config{DB: db, Env: "sandbox", Courier: d,
			ChargeTTL: time.Hour, Log: log, Provider: sandbox.New(sandbox.Config{PixKey: "pix@pixgate.dev", MerchantName: "Loja", MerchantCity: "Recife", Delay: time.Second})})
		require.NoError(t, err)
		// The back office creates clients; gateway's tests store one as it does.
		cred := pix.Client{ID: "cli_test_outbox", Name: "m", Environment: s.Env, SecretHash: pix.HashSecret("sk_test_outbox"),
			WebhookSecret: "whsec_" + base64.StdEncoding.EncodeToString(make([]byte, 32)), Status: pix.ClientActive, CreatedAt: s.now()}
		require.NoError(t, db.Write(ctx, func(tx *store.Tx) error { return tx.InsertClient(ctx, cred) }))

		var mu sync.Mutex
		var got []string
		hold := make(chan struct{})
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			got = append(got, r.Header.Get("webhook-id"))
			mu.Unlock()
			<-hold
			w.WriteHeader(http.StatusNoContent)
		}))
		t.Cleanup(srv.Close)
		var release sync.Once
		unhold := func() { release.Do(func() { close(hold) }) }
		t.Cleanup(unhold) // runs before srv.Close: a failed check must not leave deliveries hanging
		received := func() []string { mu.Lock(); defer mu.Unlock(); return append([]string(nil), got...) }

		testkit.RunUntilCleanup(t, "the dispatcher did not stop: a reservation was never given back", d.Run)
		require.Eventually(t, func() bool { _, _, n := d.Reserve(1); d.Release(n); return n == 1 },
			5*time.Second, time.Millisecond, "the dispatcher takes reservations once it runs")

		event := func(i int) pix.Event {
			return pix.Event{ID: fmt.Sprintf("evt_outbox%d", i), ClientID: cred.ID, TransactionID: "t", Type: pix.EventCashinPaid,
				URL: srv.URL, Payload: `{"n":` + fmt.Sprint(i) + `}`, CreatedAt: s.now()}
		}

		errBoom := errors.New("rolled back")
		err = s.w.Write(ctx, func(tx *store.Tx, o *outbox.Events) error {
			if err := o.Insert(ctx, tx, event(1), event(2)); err != nil {
				return err
			}
			return errBoom
		})
		require.ErrorIs(t, err, errBoom)
		_, _, n := d.Reserve(2)
		d.Release(n)
		require.Equal(t, 2, n, "a failed transaction gave its workers back")

		require.NoError(t, s.w.Write(ctx, func(tx *store.Tx, o *outbox.Events) error {
			return o.Insert(ctx, tx, event(3), event(4), event(5))
		}))
		require.Eventually(t, func() bool { return len(received()) == 2 }, 10*time.Second, time.Millisecond,
			"the two events written leased are delivered with no claim, tick or wake-up")
		require.ElementsMatch(t, []string{"evt_outbox3", "evt_outbox4"}, received())

		// Another node finds only the event written unleased; the leased
		// ones stay this node's until their lease runs out. (A claim of
		// this node's dispatcher that began before the write — woken when
		// the failed transaction gave its workers back — may have taken
		// the unleased one first, or be taking it: then it is, or is about
		// to be, this node's, and the other finds nothing.)
		// This node's claim may hold the row for a moment (SKIP LOCKED
		// skips it) and then commit or give it up: look again until the
		// other node gets it or this node's claim has committed.
		deadline := time.Now().Add(10 * time.Second)
		for {
			now := s.now()
			var claimed []pix.Event
			require.NoError(t, db.Write(ctx, func(tx *store.Tx) error {
				claimed, err = tx.ClaimEvents(ctx, "other-node", now, now.Add(time.Minute), 10)
				return err
			}))
			if len(claimed) > 0 {
				ids := make([]string, len(claimed))
				for i, e := range claimed {
					ids[i] = e.ID
				}
				require.Equal(t, []string{"evt_outbox5"}, ids, "another node claimed only the event written unleased")
				require.NoError(t, db.Write(ctx, func(tx *store.Tx) error { return tx.ReleaseEvent(ctx, "other-node", "evt_outbox5") }))
				break
			}
			e5, err := db.Event(ctx, "evt_outbox5")
			require.NoError(t, err)
			if e5.LeaseOwner == d.Owner {
				break
			}
			require.True(t, time.Now().Before(deadline), "nobody claimed the event written unleased")
			time.Sleep(5 * time.Millisecond)
		}

		unhold()
		d.Wake()
		require.Eventually(t, func() bool { return len(received()) == 3 }, 10*time.Second, time.Millisecond,
			"the unleased event is claimed once a worker is free")
		require.Equal(t, "evt_outbox5", received()[2])
		require.Eventually(t, func() bool {
			for _, id := range []string{"evt_outbox3", "evt_outbox4", "evt_outbox5"} {
				e, err := db.Event(ctx, id)
				if err != nil || e.Status != "delivered" || e.Attempts != 1 {
					return false
				}
			}
			return true
		}, 10*time.Second, 5*time.Millisecond, "each delivered once")
	})
}
