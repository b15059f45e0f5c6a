package storetest

import (
	"context"
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/store"
)

// accountsVersion is the migration of sub-accounts and transfers.
const accountsVersion = 26

// Schema reads one table's columns and its indexes (each as its name and
// definition) from the database, as the dialect's catalog holds them.
type Schema func(t *testing.T, table string) (columns, indexes []string)

var uuidV4 = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

// ExerciseAccountsMigration checks migration 26 on a database holding rows
// written before it: every column and index of transactions, accounts and
// clients survives (SQLite rebuilds two of those tables), the new columns
// and indexes exist, every client, old or inserted without one, gets a
// distinct UUID v4 account_id, the old rows read back whole, and the
// widened CHECKs take transfers and clearing accounts but nothing else.
// db is empty (no migration applied) and schema reads its catalog.
func ExerciseAccountsMigration(t *testing.T, db *store.DB, schema Schema) {
	ctx := context.Background()
	_, err := db.MigrateTo(ctx, accountsVersion-1)
	require.NoError(t, err)
	c := oldClient(t, db)
	old := newTx(c, pix.TypeCashin, "before-26", 1234, t0)
	require.NoError(t, db.Write(ctx, func(tx *store.Tx) error {
		return store.RawExec(ctx, tx, `INSERT INTO transactions (id, client_id, type, external_id, request_hash, status, amount, tax,
			created_at, expires_at, txid, payer_name, med_returned, paid_amount) VALUES ($1, $2, 'cashin', $3, 'h', 'PAID', 1234, 12, $4, $5, 'txid26', 'Maria', 34, 1234)`,
			old.ID, c.ID, old.ExternalID, t0.UnixMilli(), t0.UnixMilli())
	}))
	tables := []string{"transactions", "accounts", "clients"}
	type shape struct{ columns, indexes []string }
	before := map[string]shape{}
	for _, table := range tables {
		cols, idx := schema(t, table)
		require.NotEmpty(t, cols, table)
		before[table] = shape{cols, idx}
	}
	require.NotEmpty(t, before["transactions"].indexes)

	applied, err := db.Migrate(ctx)
	require.NoError(t, err)
	require.Contains(t, applied, int64(accountsVersion))

	added := map[string][]string{
		"transactions": {"source_payment_id", "counterparty_account_id"},
		"clients":      {"account_id", "parent_id", "document", "external_id", "postback_url", "request_hash"},
	}
	for _, table := range tables {
		cols, idx := schema(t, table)
		require.Subset(t, cols, before[table].columns, "%s lost a column", table)
		require.Subset(t, idx, before[table].indexes, "%s lost or changed an index", table)
		require.Subset(t, cols, added[table], table)
		require.Len(t, cols, len(before[table].columns)+len(added[table]), table)
	}
	_, idx := schema(t, "clients")
	require.Len(t, idx, len(before["clients"].indexes)+3, "clients_account, clients_parent_external, clients_children: %v", idx)

	got, err := db.Client(ctx, c.ID)
	require.NoError(t, err)
	require.Regexp(t, uuidV4, got.AccountID, "a client of before gets an account_id")
	require.Empty(t, got.ParentID)
	tr, err := db.TransactionByID(ctx, old.ID)
	require.NoError(t, err)
	require.Equal(t, pix.Amount(1234), tr.Amount)
	require.Equal(t, pix.Amount(34), tr.MEDReturned)
	require.Equal(t, "Maria", tr.PayerName)
	require.Equal(t, "txid26", tr.TxID)
	require.Equal(t, "before-26", tr.ExternalID)
	require.Empty(t, tr.SourcePaymentID)

	// A client inserted without an account_id gets its own.
	raw := oldClient(t, db)
	rc, err := db.Client(ctx, raw.ID)
	require.NoError(t, err)
	require.Regexp(t, uuidV4, rc.AccountID)
	require.NotEqual(t, got.AccountID, rc.AccountID)

	// The CHECKs take transfers and clearing accounts, and nothing else.
	transfer := newTx(c, pix.TypeTransfer, "", 10, t0)
	transfer.Status, transfer.CounterpartyAccountID, transfer.SourcePaymentID = pix.StatusPaid, rc.AccountID, old.ID
	require.NoError(t, db.Write(ctx, func(tx *store.Tx) error {
		if err := tx.CreateTransaction(ctx, transfer); err != nil {
			return err
		}
		return tx.OpenTransferAccounts(ctx, c.ID)
	}))
	back, err := db.TransactionByID(ctx, transfer.ID)
	require.NoError(t, err)
	require.Equal(t, rc.AccountID, back.CounterpartyAccountID)
	require.Equal(t, old.ID, back.SourcePaymentID)
	bogus := newTx(c, "bogus", "", 10, t0)
	require.Error(t, db.Write(ctx, func(tx *store.Tx) error { return tx.CreateTransaction(ctx, bogus) }))
	require.Error(t, db.Write(ctx, func(tx *store.Tx) error {
		return store.RawExec(ctx, tx, `INSERT INTO accounts (id, client_id, kind, balance) VALUES ($1, $2, 'bogus', 0)`, c.ID+":bogus", c.ID)
	}))
	require.NoError(t, db.CheckLedger(ctx))
}
