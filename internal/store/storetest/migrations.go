package storetest

import (
	"context"
	"fmt"
	"io/fs"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/store"
)

// ExerciseMigrations checks what migrations do to rows written before them.
// openEmpty returns a fresh database to which no migration was applied.
func ExerciseMigrations(t *testing.T, openEmpty Opener) {
	ctx := context.Background()

	t.Run("A fresh database applies every migration file in order, once", func(t *testing.T) {
		t.Parallel()
		db := openEmpty(t)
		files, err := store.Migrations(db.Dialect())
		require.NoError(t, err)
		entries, err := fs.ReadDir(files, ".")
		require.NoError(t, err)
		var want []int64
		for i := range entries {
			// Versions are shared by both databases and have no gap.
			want = append(want, int64(i+1))
			require.True(t, strings.HasPrefix(entries[i].Name(), fmt.Sprintf("%05d_", i+1)), "%s", entries[i].Name())
		}
		applied, err := db.Migrate(ctx)
		require.NoError(t, err)
		require.Equal(t, want, applied)
		applied, err = db.Migrate(ctx)
		require.NoError(t, err)
		require.Empty(t, applied)
	})

	t.Run("Migration 10 turns the delivery errors of older versions into classes", func(t *testing.T) {
		t.Parallel()
		db := openEmpty(t)
		_, err := db.MigrateTo(ctx, 9)
		require.NoError(t, err)
		c := oldClient(t, db)
		// The texts version 9's dispatcher recorded, and what each becomes.
		cases := []struct {
			stored string
			status int
			want   string
		}{
			{"request failed: dial tcp: lookup hooks.example on 10.255.255.53:53: no such host", 0, "DNS resolution failed"},
			{"request failed: dial tcp 10.1.2.3:443: connect: connection refused", 0, "connection refused"},
			{"request failed: tls: failed to verify certificate: x509: certificate signed by unknown authority", 0, "TLS error"},
			{"request failed: read tcp 10.1.2.3:5050->10.1.2.4:443: read: connection reset by peer", 0, "connection reset"},
			{"request failed: EOF", 0, "connection reset"},
			{"request failed: net/http: TLS handshake timeout", 0, "timeout"},
			{"request failed: dial tcp 10.1.2.3:443: i/o timeout", 0, "timeout"},
			{"request failed: something else at 10.1.2.3", 0, "connection failed"},
			{"timeout: no answer within 10 s", 0, "timeout"},
			{"destination refused: it resolves to a private or local address", 0, "destination not allowed"},
			{"invalid webhook URL", 0, "destination not allowed"},
			{"signing failed", 0, "signing failed"},
			{"", 503, "HTTP 5xx"},
			{"", 404, "HTTP 4xx"},
			{"", 302, "HTTP 3xx"},
			{"", 204, ""},
		}
		require.NoError(t, db.Write(ctx, func(tx *store.Tx) error {
			if err := tx.InsertEvent(ctx, pix.Event{ID: "evt_m10", ClientID: c.ID, TransactionID: "t-m10", Type: "x",
				URL: "u", Payload: "{}", CreatedAt: t0}); err != nil {
				return err
			}
			_, err := tx.ClaimEvents(ctx, "node-a", t0, t0.Add(12*time.Second), 1)
			return err
		}))
		for i, tc := range cases {
			_, err := db.FinishAttempt(ctx, store.Finish{Owner: "node-a", Status: "pending", Attempts: i + 1, Next: t0,
				Attempt: pix.Attempt{ID: fmt.Sprintf("att-m10-%02d", i), EventID: "evt_m10", At: t0.Add(time.Duration(i) * time.Second),
					StatusCode: tc.status, Error: tc.stored}})
			require.NoError(t, err)
		}

		applied, err := db.Migrate(ctx)
		require.NoError(t, err)
		require.Contains(t, applied, int64(10))
		byEvent, err := db.Attempts(ctx, "t-m10")
		require.NoError(t, err)
		got := byEvent["evt_m10"]
		require.Len(t, got, len(cases))
		for i, tc := range cases {
			require.Equal(t, tc.want, got[i].Error, "stored %q (status %d)", tc.stored, tc.status)
		}
	})
}
