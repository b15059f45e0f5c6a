package store

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/pixgate/pixgate/internal/pix"
)

// This file holds the store's side of split payments (docs/marketplace.md):
// the entries of a charge's or a recurrence's splits, and the receivers'
// shares of a refund of a split charge.

// InsertSplits stores the entries ss of the splits of ownerID, a charge or
// a recurrence; their receivers must be resolved (ReceiverID).
func (tx *Tx) InsertSplits(ctx context.Context, ownerID string, ss []pix.Split) error {
	for _, s := range ss {
		var percent, amount sql.NullInt64
		if s.Amount > 0 {
			amount = sql.NullInt64{Int64: int64(s.Amount), Valid: true}
		} else {
			percent = sql.NullInt64{Int64: s.Percent, Valid: true}
		}
		if _, err := tx.exec(ctx, `INSERT INTO splits (owner_id, idx, receiver_id, percent, amount) VALUES ($1, $2, $3, $4, $5)`,
			ownerID, s.Index, s.ReceiverID, percent, amount); err != nil {
			return fmt.Errorf("insert split %d of %s: %w", s.Index, ownerID, err)
		}
	}
	return nil
}

// Splits returns the entries of ownerID's splits in order, each with its
// receiver's account_id and postbackUrl; none for a charge without splits.
func (q *Q) Splits(ctx context.Context, ownerID string) ([]pix.Split, error) {
	out, err := selectAll(ctx, q, scanSplit, `SELECT s.idx, c.account_id, s.receiver_id, c.postback_url, s.percent, s.amount, s.credited, s.split_id
		FROM splits s JOIN clients c ON c.id = s.receiver_id WHERE s.owner_id = $1 ORDER BY s.idx`, ownerID)
	if err != nil {
		return nil, fmt.Errorf("splits of %s: %w", ownerID, err)
	}
	return out, nil
}

func scanSplit(row scanner) (pix.Split, error) {
	var s pix.Split
	var percent, amount, credited sql.NullInt64
	var splitID sql.NullString
	if err := row.Scan(&s.Index, &s.AccountID, &s.ReceiverID, &s.ReceiverURL, &percent, &amount, &credited, &splitID); err != nil {
		return pix.Split{}, fmt.Errorf("scan split: %w", err)
	}
	s.Percent, s.Amount, s.SplitID = percent.Int64, pix.Amount(amount.Int64), splitID.String
	if credited.Valid {
		c := pix.Amount(credited.Int64)
		s.Credited = &c
	}
	return s, nil
}

// SetSplitCredited records what entry idx of charge chargeID's splits was
// credited, and its split transaction ("" for none).
func (tx *Tx) SetSplitCredited(ctx context.Context, chargeID string, idx int, credited pix.Amount, splitID string) error {
	return tx.updateOne(ctx, `UPDATE splits SET credited = $3, split_id = $4 WHERE owner_id = $1 AND idx = $2`,
		chargeID, idx, int64(credited), nullString(splitID))
}

// RefundShare is what one receiver of a split charge gives back of a
// refund.
type RefundShare struct {
	ClientID string
	Amount   pix.Amount
}

// InsertRefundShares stores the receivers' shares of refund refundID.
func (tx *Tx) InsertRefundShares(ctx context.Context, refundID string, shares []RefundShare) error {
	for _, s := range shares {
		if _, err := tx.exec(ctx, `INSERT INTO refund_shares (refund_id, client_id, amount) VALUES ($1, $2, $3)`,
			refundID, s.ClientID, int64(s.Amount)); err != nil {
			return fmt.Errorf("insert refund share of %s: %w", refundID, err)
		}
	}
	return nil
}

// RefundShares returns the receivers' shares of refund refundID, none for
// a refund of a charge without splits.
func (q *Q) RefundShares(ctx context.Context, refundID string) ([]RefundShare, error) {
	out, err := selectAll(ctx, q, func(row scanner) (RefundShare, error) {
		var s RefundShare
		var a int64
		err := row.Scan(&s.ClientID, &a)
		s.Amount = pix.Amount(a)
		return s, err
	}, `SELECT client_id, amount FROM refund_shares WHERE refund_id = $1 ORDER BY client_id`, refundID)
	if err != nil {
		return nil, fmt.Errorf("refund shares of %s: %w", refundID, err)
	}
	return out, nil
}
