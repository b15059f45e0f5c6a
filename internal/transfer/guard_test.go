package transfer

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/internal/clock"
	"github.com/pixgate/pixgate/internal/outbox"
	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/provider/sandbox"
	"github.com/pixgate/pixgate/internal/store"
	"github.com/pixgate/pixgate/internal/testkit"
)

// A step the send states do not allow is refused before the database is
// asked: a payout the PSP accepted is never made due for a send again,
// and a final one never taken up, whatever a caller asks.
func TestStepsOutsideTheSendStatesAreRefused(t *testing.T) {
	t.Parallel()
	testkit.Databases(t, func(t *testing.T, open testkit.Opener) {
		db := open(t)
		log := slog.New(slog.NewJSONHandler(io.Discard, nil))
		w := &outbox.Writer{DB: db, Now: time.Now}
		e, err := New(Config{DB: db, Provider: sandbox.New(sandbox.Config{PixKey: "pix@pixgate.dev", MerchantName: "Loja", MerchantCity: "Recife"}),
			Writer: w, Clocks: &clock.Clients{DB: db, Log: log, Real: time.Now}, Log: log})
		require.NoError(t, err)
		ctx := context.Background()
		for _, bad := range [][2]string{{pix.SendSent, pix.SendToSend}, {pix.SendSent, pix.SendUnknown}, {pix.SendDone, pix.SendSent}} {
			ok, err := e.stepSend(ctx, store.SendStep{ID: "00000000-0000-4000-8000-000000000000", WasState: bad[0], State: bad[1]})
			require.ErrorContains(t, err, "is not a step a transfer may take", "%s → %s", bad[0], bad[1])
			require.False(t, ok)
		}
		// An allowed step of a row that does not exist reaches the
		// database, which applies nothing.
		ok, err := e.stepSend(ctx, store.SendStep{ID: "00000000-0000-4000-8000-000000000000", WasState: pix.SendSent, State: pix.SendDone})
		require.NoError(t, err)
		require.False(t, ok)
	})
}
