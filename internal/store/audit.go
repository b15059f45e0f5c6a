package store

import (
	"context"
	"fmt"

	"github.com/pixgate/pixgate/internal/pix"
)

// Readers over every row, for audits and the simulation (internal/sim):
// they read whole tables at once, so they are meant for a system at rest,
// never for a request's path.

// AllTransactions returns every transaction of every client, oldest first.
func (q *Q) AllTransactions(ctx context.Context) ([]pix.Transaction, error) {
	out, err := selectAll(ctx, q, scanTransaction, `SELECT `+txColumns+` FROM transactions ORDER BY created_at, id`)
	if err != nil {
		return nil, fmt.Errorf("all transactions: %w", err)
	}
	return out, nil
}

// AllRefunds returns every refund of every client, oldest first.
func (q *Q) AllRefunds(ctx context.Context) ([]pix.Refund, error) {
	out, err := selectAll(ctx, q, scanRefund, `SELECT `+refundColumns+` FROM refunds ORDER BY created_at, id`)
	if err != nil {
		return nil, fmt.Errorf("all refunds: %w", err)
	}
	return out, nil
}

// AllUnmatched returns every unmatched receipt, oldest first.
func (q *Q) AllUnmatched(ctx context.Context) ([]pix.UnmatchedReceipt, error) {
	out, err := selectAll(ctx, q, scanUnmatched, `SELECT `+unmatchedColumns+` FROM unmatched_receipts ORDER BY recorded_at, id`)
	if err != nil {
		return nil, fmt.Errorf("all unmatched receipts: %w", err)
	}
	return out, nil
}

// AllEvents returns every outbox event with its payload and delivery
// status, oldest first.
func (q *Q) AllEvents(ctx context.Context) ([]pix.Event, error) {
	out, err := selectAll(ctx, q, scanEvent, `SELECT `+eventColumns+` FROM events ORDER BY created_at, id`)
	if err != nil {
		return nil, fmt.Errorf("all events: %w", err)
	}
	return out, nil
}

// Unsettled counts what is still moving: charges PENDING (each is paid or
// expires), payouts and refunds PENDING (not a payout scheduled for a later
// day, which waits for it) and batches of payouts not yet reported complete
// that wait for no such payout, unmatched receipts RETURNING, and
// events waiting for a delivery (pending; a failed event moves no more).
type Unsettled struct {
	Charges, Payouts, Refunds, Returns, Events int64
}

// CountUnsettled returns the Unsettled counts in one statement.
func (q *Q) CountUnsettled(ctx context.Context) (Unsettled, error) {
	var u Unsettled
	err := q.q.QueryRowContext(ctx, `SELECT
		(SELECT COUNT(*) FROM transactions WHERE type = 'cashin' AND status = 'PENDING'),
		(SELECT COUNT(*) FROM transactions WHERE type = 'cashout' AND status = 'PENDING' AND send_state <> 'scheduled')
		+ (SELECT COUNT(*) FROM payout_batches b WHERE state = 'accepted' AND NOT EXISTS (SELECT 1 FROM payout_batch_items i
			JOIN transactions t ON t.id = i.transaction_id WHERE i.batch_id = b.id AND t.status = 'PENDING' AND t.send_state = 'scheduled')),
		(SELECT COUNT(*) FROM refunds WHERE status = 'PENDING'),
		(SELECT COUNT(*) FROM unmatched_receipts WHERE status = 'RETURNING'),
		(SELECT COUNT(*) FROM events WHERE status = 'pending')`).Scan(&u.Charges, &u.Payouts, &u.Refunds, &u.Returns, &u.Events)
	if err != nil {
		return Unsettled{}, fmt.Errorf("count unsettled: %w", err)
	}
	return u, nil
}

// ReceivedEndToEndIDs returns the end-to-end id of every payment the books
// hold: those credited to a charge and those recorded as unmatched
// receipts (a payment may appear twice if both hold it).
func (q *Q) ReceivedEndToEndIDs(ctx context.Context) ([]string, error) {
	out, err := selectAll(ctx, q, func(row scanner) (s string, err error) { return s, row.Scan(&s) },
		`SELECT end_to_end_id FROM transactions WHERE type = 'cashin' AND end_to_end_id IS NOT NULL
		UNION ALL SELECT payment_end_to_end_id FROM unmatched_receipts`)
	if err != nil {
		return nil, fmt.Errorf("received end-to-end ids: %w", err)
	}
	return out, nil
}

// LedgerSize returns how many accounts and postings the ledger holds.
func (q *Q) LedgerSize(ctx context.Context) (accounts, postings int64, err error) {
	err = q.q.QueryRowContext(ctx, `SELECT (SELECT COUNT(*) FROM accounts), (SELECT COUNT(*) FROM postings)`).Scan(&accounts, &postings)
	if err != nil {
		return 0, 0, fmt.Errorf("ledger size: %w", err)
	}
	return accounts, postings, nil
}

// AllDisputes returns every dispute of every client, oldest first.
func (q *Q) AllDisputes(ctx context.Context) ([]pix.Dispute, error) {
	out, err := selectAll(ctx, q, scanDispute, `SELECT `+disputeColumns+` FROM disputes ORDER BY opened_at, id`)
	if err != nil {
		return nil, fmt.Errorf("all disputes: %w", err)
	}
	return out, nil
}
