package store

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/pixgate/pixgate/internal/ledger"
	"github.com/pixgate/pixgate/internal/pix"
)

// AccountKinds are the ledger accounts opened for every client.
var AccountKinds = ledger.Kinds

// AccountID is the id of a client's account of the given kind.
func AccountID(clientID string, kind ledger.Kind) string { return clientID + ":" + string(kind) }

// Post applies a balanced posting to the client's accounts and records it,
// all inside tx: PostAll with one posting.
func (tx *Tx) Post(ctx context.Context, id, clientID, transactionID string, p ledger.Posting, now time.Time) error {
	return tx.PostAll(ctx, []PostingWrite{{ID: id, ClientID: clientID, TransactionID: transactionID, Posting: p}}, now)
}

// PostingWrite is one posting for PostAll: its id, the client whose
// accounts it moves, and the transaction it belongs to.
type PostingWrite struct {
	ID, ClientID, TransactionID string
	Posting                     ledger.Posting
	At                          time.Time // its created_at, or zero for PostAll's now
}

// PostAll applies balanced postings to their clients' accounts and records
// them, all inside tx. Balances are updated first, each account once by the
// sum of its entries, in account-id order: every transaction takes its
// account row locks in that one global order (a single posting as well as
// a settlement batch spanning many clients), so concurrent postings never
// deadlock. Then the postings and their entries are recorded (one
// multi-row insert each). Updating first matters on PostgreSQL: inserting
// entries first would take KEY SHARE locks on the account rows (the
// foreign key) that the update then has to upgrade, turning each hot
// balance row into a MultiXact and halving single-client throughput
// (measured: 1.1 ms vs 0.47 ms per payout).
//
// The accounts' CHECK constraint refuses a balance that would take
// available or pending below zero, whatever the concurrency; the statement
// then fails with ErrInsufficientFunds and the transaction must abort. No
// statement here needs an answer, so on PostgreSQL they all wait for the
// transaction's next read or its commit (Tx.later), which is where that
// error then appears.
func (tx *Tx) PostAll(ctx context.Context, ps []PostingWrite, now time.Time) error {
	if len(ps) == 0 {
		return nil
	}
	deltas := make(map[string]int64)
	entries := 0
	for _, w := range ps {
		if err := w.Posting.Validate(); err != nil {
			return err
		}
		for _, e := range w.Posting.Entries {
			deltas[AccountID(w.ClientID, e.Account)] += int64(e.Amount)
		}
		entries += len(w.Posting.Entries)
	}
	accounts := slices.Sorted(maps.Keys(deltas))
	for _, a := range accounts {
		if deltas[a] == 0 {
			continue
		}
		if err := tx.later(ctx, `UPDATE accounts SET balance = balance + $1 WHERE id = $2`, deltas[a], a); err != nil {
			return fmt.Errorf("post to %s: %w", a, err)
		}
	}

	var q strings.Builder
	q.WriteString(`INSERT INTO postings (id, client_id, transaction_id, kind, created_at) VALUES `)
	tuples(&q, 1, len(ps), 5)
	args := make([]any, 0, 5*len(ps))
	for _, w := range ps {
		at := now
		if !w.At.IsZero() {
			at = w.At
		}
		args = append(args, w.ID, w.ClientID, w.TransactionID, w.Posting.Kind, ms(at))
	}
	if err := tx.later(ctx, q.String(), args...); err != nil {
		return fmt.Errorf("insert postings: %w", err)
	}

	q.Reset()
	q.WriteString(`INSERT INTO entries (posting_id, seq, account_id, amount) VALUES `)
	tuples(&q, 1, entries, 4)
	args = make([]any, 0, 4*entries)
	for _, w := range ps {
		for i, e := range w.Posting.Entries {
			args = append(args, w.ID, i, AccountID(w.ClientID, e.Account), int64(e.Amount))
		}
	}
	if err := tx.later(ctx, q.String(), args...); err != nil {
		return fmt.Errorf("insert entries: %w", err)
	}
	for _, w := range ps {
		tx.posted = append(tx.posted, w.Posting.Kind)
	}
	return nil
}

// Balances returns a client's account balances.
func (q *Q) Balances(ctx context.Context, clientID string) (ledger.Balances, error) {
	b, err := q.balances(ctx, `SELECT kind, balance FROM accounts WHERE client_id = $1`, clientID)
	if err != nil {
		return nil, fmt.Errorf("balances: %w", err)
	}
	if len(b) == 0 {
		return nil, ErrNotFound
	}
	return b, nil
}

// balances runs a query of (kind, balance) rows into Balances.
func (q *Q) balances(ctx context.Context, query string, args ...any) (ledger.Balances, error) {
	type row struct {
		kind    string
		balance int64
	}
	rows, err := selectAll(ctx, q, func(s scanner) (r row, err error) { return r, s.Scan(&r.kind, &r.balance) }, query, args...)
	if err != nil {
		return nil, err
	}
	b := make(ledger.Balances, len(rows))
	for _, r := range rows {
		b[ledger.Kind(r.kind)] = pix.Amount(r.balance)
	}
	return b, nil
}

// PostingRecord is a stored posting with its entries.
type PostingRecord struct {
	ID            string
	TransactionID string
	Kind          string
	CreatedAt     time.Time
	Entries       []ledger.Entry
}

// Postings returns the postings of one transaction (charge, payout or
// refund), oldest first (posting ids are time-ordered UUIDv7), with their
// entries in written order.
func (q *Q) Postings(ctx context.Context, transactionID string) ([]PostingRecord, error) {
	rows, err := q.q.QueryContext(ctx, `SELECT p.id, p.kind, p.created_at, a.kind, e.amount
		FROM postings p JOIN entries e ON e.posting_id = p.id JOIN accounts a ON a.id = e.account_id
		WHERE p.transaction_id = $1 ORDER BY p.created_at, p.id, e.seq`, transactionID)
	if err != nil {
		return nil, fmt.Errorf("postings: %w", err)
	}
	defer rows.Close()
	var out []PostingRecord
	for rows.Next() {
		var id, kind, acct string
		var created, amount int64
		if err := rows.Scan(&id, &kind, &created, &acct, &amount); err != nil {
			return nil, fmt.Errorf("postings: %w", err)
		}
		if len(out) == 0 || out[len(out)-1].ID != id {
			out = append(out, PostingRecord{ID: id, TransactionID: transactionID, Kind: kind, CreatedAt: fromMS(created)})
		}
		last := &out[len(out)-1]
		last.Entries = append(last.Entries, ledger.Entry{Account: ledger.Kind(acct), Amount: pix.Amount(amount)})
	}
	return out, rows.Err()
}

// ErrLedgerInconsistent is returned by CheckLedger when an invariant fails.
var ErrLedgerInconsistent = errors.New("store: ledger inconsistent")

// CheckLedger verifies the ledger's invariants over the whole database: all
// accounts sum to zero, every posting sums to zero, every account's balance
// equals the sum of its entries, and no available or pending account is
// negative.
func (q *Q) CheckLedger(ctx context.Context) error {
	var total int64
	if err := q.q.QueryRowContext(ctx, `SELECT COALESCE(SUM(balance), 0) FROM accounts`).Scan(&total); err != nil {
		return fmt.Errorf("check ledger: %w", err)
	}
	if total != 0 {
		return fmt.Errorf("%w: accounts sum to %d", ErrLedgerInconsistent, total)
	}
	var bad string
	err := q.q.QueryRowContext(ctx, `SELECT COALESCE(MIN(posting_id), '') FROM
		(SELECT posting_id FROM entries GROUP BY posting_id HAVING SUM(amount) <> 0) unbalanced`).Scan(&bad)
	if err != nil {
		return fmt.Errorf("check ledger: %w", err)
	}
	if bad != "" {
		return fmt.Errorf("%w: posting %s does not balance", ErrLedgerInconsistent, bad)
	}
	err = q.q.QueryRowContext(ctx, `SELECT COALESCE(MIN(a.id), '') FROM accounts a
		LEFT JOIN (SELECT account_id, SUM(amount) AS s FROM entries GROUP BY account_id) e ON e.account_id = a.id
		WHERE a.balance <> COALESCE(e.s, 0) OR (a.kind IN ('available', 'pending') AND a.balance < 0)`).Scan(&bad)
	if err != nil {
		return fmt.Errorf("check ledger: %w", err)
	}
	if bad != "" {
		return fmt.Errorf("%w: account %s disagrees with its entries or is negative", ErrLedgerInconsistent, bad)
	}
	return nil
}
