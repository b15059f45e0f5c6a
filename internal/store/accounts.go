package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/pixgate/pixgate/internal/ledger"
	"github.com/pixgate/pixgate/internal/pix"
)

// This file holds the store's side of sub-accounts and the transfers
// between a parent and its sub-accounts (docs/marketplace.md): a client is
// also known by its account_id, a parent lists its sub-accounts, and a
// client that transfers has a clearing account.

// ClientByAccountID returns the client whose account_id is accountID, or
// ErrNotFound.
func (q *Q) ClientByAccountID(ctx context.Context, accountID string) (pix.Client, error) {
	return scanClient(q.q.QueryRowContext(ctx, `SELECT `+clientColumns+` FROM clients WHERE account_id = $1`, accountID))
}

// SubAccountByExternalID returns parent parentID's sub-account created
// with externalID, or ErrNotFound.
func (q *Q) SubAccountByExternalID(ctx context.Context, parentID, externalID string) (pix.Client, error) {
	return scanClient(q.q.QueryRowContext(ctx, `SELECT `+clientColumns+` FROM clients WHERE parent_id = $1 AND external_id = $2`,
		parentID, externalID))
}

// SubAccounts returns a page of parent parentID's sub-accounts, newest
// first, and the next page's cursor ("" at the end), or ErrBadCursor for a
// cursor it did not issue. Paging is by key (created_at, id) on the index
// clients_children (version 26), as History's.
func (q *Q) SubAccounts(ctx context.Context, parentID, cursor string, limit int) ([]pix.Client, string, error) {
	if parentID == "" {
		return nil, "", errors.New("no parent: a list never shows every client")
	}
	rows, next, err := keyPage(ctx, q, keyset[pix.Client]{table: "clients", columns: clientColumns, scan: scanClient,
		key: func(c pix.Client) (time.Time, string) { return c.CreatedAt, c.ID }},
		[]filter{{"parent_id", parentID}}, cursor, limit)
	if err != nil {
		return nil, "", fmt.Errorf("sub-accounts: %w", err)
	}
	return rows, next, nil
}

// OpenTransferAccounts opens client clientID's clearing account
// (ledger.TransferKinds) unless it exists: at its first transfer.
func (tx *Tx) OpenTransferAccounts(ctx context.Context, clientID string) error {
	for _, kind := range ledger.TransferKinds {
		if _, err := tx.exec(ctx, `INSERT INTO accounts (id, client_id, kind, balance) VALUES ($1, $2, $3, 0) ON CONFLICT DO NOTHING`,
			AccountID(clientID, kind), clientID, kind); err != nil {
			return fmt.Errorf("open account %s: %w", kind, err)
		}
	}
	return nil
}
