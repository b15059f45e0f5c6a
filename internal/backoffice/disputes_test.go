package backoffice_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/internal/backoffice"
	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/store"
	"github.com/pixgate/pixgate/internal/testkit"
)

// seedDispute stores a paid charge of client clientID and an OPEN dispute
// of it opened at opened, of status st; it returns the dispute's id.
func seedDispute(t *testing.T, db *store.DB, clientID, id string, opened time.Time, st pix.DisputeStatus) string {
	t.Helper()
	ctx := context.Background()
	opened = opened.UTC().Truncate(time.Millisecond)
	tx := pix.Transaction{ID: "tx-" + id, ClientID: clientID, Type: pix.TypeCashin, RequestHash: "h", Status: pix.StatusPaid,
		Amount: 1000, PaidAmount: 1000, CreatedAt: opened.Add(-time.Hour), ConfirmedAt: opened.Add(-time.Minute),
		ExpiresAt: opened.Add(24 * time.Hour), TxID: "txid" + id}
	d := pix.Dispute{ID: id, ClientID: clientID, PaymentID: tx.ID, Amount: 1000, Reason: pix.ReasonFraud, Status: pix.DisputeOpen,
		RespondBy: opened.Add(72 * time.Hour), OpenedAt: opened}
	require.NoError(t, db.Write(ctx, func(w *store.Tx) error {
		if err := w.CreateTransaction(ctx, tx); err != nil {
			return err
		}
		if err := w.InsertDispute(ctx, d); err != nil {
			return err
		}
		if st == pix.DisputeClosed {
			closed := opened.Add(time.Hour)
			d.Outcome, d.ClosedAt = pix.OutcomeReleased, &closed
			return w.CloseDispute(ctx, d)
		}
		return nil
	}))
	return id
}

// The panel's disputes pages: every client's for an operator, newest
// first across clients, or one client's; by status; a page at a time by
// cursor; a query naming no client (nor every client) or a bad cursor is
// refused, never read as every client's.
func TestDisputePage(t *testing.T) {
	t.Parallel()
	testkit.Databases(t, func(t *testing.T, open testkit.Opener) {
		ctx := context.Background()
		bo, db := newBackoffice(t, open, pix.EnvSandbox)
		a, err := bo.CreateClient(ctx, backoffice.ClientParams{Name: "Loja A"})
		require.NoError(t, err)
		b, err := bo.CreateClient(ctx, backoffice.ClientParams{Name: "Loja B"})
		require.NoError(t, err)
		a1 := seedDispute(t, db, a.ClientID, "d-a1", at.Add(-3*time.Hour), pix.DisputeOpen)
		b1 := seedDispute(t, db, b.ClientID, "d-b1", at.Add(-2*time.Hour), pix.DisputeClosed)
		a2 := seedDispute(t, db, a.ClientID, "d-a2", at.Add(-time.Hour), pix.DisputeOpen)

		ids := func(ds []pix.Dispute) []string {
			var out []string
			for _, d := range ds {
				out = append(out, d.ID)
			}
			return out
		}
		all, next, err := bo.DisputePage(ctx, backoffice.DisputeQuery{AllClients: true, Limit: 10})
		require.NoError(t, err)
		require.Equal(t, []string{a2, b1, a1}, ids(all), "every client's, newest first")
		require.Empty(t, next)
		require.Equal(t, pix.OutcomeReleased, all[1].Outcome)

		own, _, err := bo.DisputePage(ctx, backoffice.DisputeQuery{ClientID: a.ClientID, Limit: 10})
		require.NoError(t, err)
		require.Equal(t, []string{a2, a1}, ids(own), "one client's only")

		closed, _, err := bo.DisputePage(ctx, backoffice.DisputeQuery{AllClients: true, Status: pix.DisputeClosed, Limit: 10})
		require.NoError(t, err)
		require.Equal(t, []string{b1}, ids(closed))

		var paged []string
		cursor := ""
		for range 3 {
			page, next, err := bo.DisputePage(ctx, backoffice.DisputeQuery{AllClients: true, Cursor: cursor, Limit: 2})
			require.NoError(t, err)
			paged = append(paged, ids(page)...)
			if next == "" {
				break
			}
			cursor = next
		}
		require.Equal(t, []string{a2, b1, a1}, paged, "two pages, none repeated or skipped")

		for _, q := range []backoffice.DisputeQuery{{Limit: 10}, {ClientID: a.ClientID, AllClients: true, Limit: 10},
			{AllClients: true, Cursor: "garbage", Limit: 10}} {
			rows, _, err := bo.DisputePage(ctx, q)
			require.Equal(t, pix.EInvalid, pix.ErrorCode(err), fmt.Sprintf("%+v: %v", q, err))
			require.Empty(t, rows)
		}
		// The API's list (cashin.Disputes) reaches the store with its
		// client's id: an empty one is still refused there.
		_, _, err = db.DisputeHistory(ctx, store.DisputeFilter{Limit: 10})
		require.ErrorContains(t, err, "no client")
	})
}
