// Package storetest is the one behaviour suite for pixgate storage. Every
// driver runs Exercise unchanged, so a behaviour that is not tested here does
// not exist (River's riverdrivertest idea).
package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/internal/ledger"
	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/store"
)

// Opener returns a fresh, migrated, empty database for one test.
type Opener func(t *testing.T) *store.DB

var t0 = time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)

// NewClient inserts an active sandbox client with a random id.
func NewClient(t *testing.T, db *store.DB) pix.Client {
	t.Helper()
	c := pix.Client{
		ID: "cli_" + uuid.NewString()[:8], Name: "test", Environment: "sandbox", SecretHash: "00",
		WebhookSecret: "whsec_x", Status: pix.ClientActive, CreatedAt: t0,
		CashinFee: pix.FeeRule{PercentBP: 150, Fixed: 10},
	}
	c.AccountID = uuid.NewString()
	require.NoError(t, db.Write(context.Background(), func(tx *store.Tx) error { return tx.InsertClient(context.Background(), c) }))
	return c
}

// oldClient is NewClient for a database at a version before 26, whose
// clients have no account_id yet: it is written without one.
func oldClient(t *testing.T, db *store.DB) pix.Client {
	t.Helper()
	c := pix.Client{
		ID: "cli_" + uuid.NewString()[:8], Name: "test", Environment: "sandbox", SecretHash: "00",
		WebhookSecret: "whsec_x", Status: pix.ClientActive, CreatedAt: t0,
		CashinFee: pix.FeeRule{PercentBP: 150, Fixed: 10},
	}
	require.NoError(t, db.Write(context.Background(), func(tx *store.Tx) error { return tx.InsertClient(context.Background(), c) }))
	return c
}

func newTx(c pix.Client, typ pix.TxType, ext string, amount pix.Amount, at time.Time) pix.Transaction {
	return pix.Transaction{
		ID: uuid.NewString(), ClientID: c.ID, Type: typ, ExternalID: ext, RequestHash: "h", Status: "PENDING",
		Amount: amount, CreatedAt: at, ExpiresAt: at.Add(time.Hour),
	}
}

// newPayout is a PENDING payout of 100 created at t0 and due to settle at
// settleAt.
func newPayout(c pix.Client, ext string, settleAt time.Time) pix.Transaction {
	p := newTx(c, pix.TypeCashout, ext, 100, t0)
	p.ExpiresAt, p.SettleAt = time.Time{}, settleAt
	return p
}

// Exercise runs every storage behaviour against the driver, one area at a
// time (each in its own file).
func Exercise(t *testing.T, open Opener) {
	exerciseClients(t, open)
	exerciseTransactions(t, open)
	exerciseHistory(t, open)
	exerciseLedger(t, open)
	exercisePayouts(t, open)
	exerciseSettlement(t, open)
	exerciseEvents(t, open)
	exerciseRefunds(t, open)
	exerciseStatement(t, open)
	exerciseUnmatched(t, open)
	exerciseClock(t, open)
	exerciseDisputes(t, open)
	exerciseScheduled(t, open)
	exerciseBatches(t, open)
}

// ids are the ids of ts, in order.
func ids(ts []pix.Transaction) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.ID
	}
	return out
}

// requireBalances asserts the client's available and pending balances, the
// two accounts a merchant's money is in.
func requireBalances(t *testing.T, db *store.DB, clientID string, available, pending pix.Amount) {
	t.Helper()
	b, err := db.Balances(context.Background(), clientID)
	require.NoError(t, err)
	require.Equal(t, available, b[ledger.Available], "available balance of %s", clientID)
	require.Equal(t, pending, b[ledger.Pending], "pending balance of %s", clientID)
}
