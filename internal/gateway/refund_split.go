package gateway

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/pixgate/pixgate/internal/cashin"
	"github.com/pixgate/pixgate/internal/ledger"
	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/store"
)

// holdRefund holds refund ref of charge t (client c's) inside tx: for a
// charge without splits, its amount from c's available into pending; for
// a split charge, each receiver's pro rata share (cashin.ProRataShares)
// from its own available into its own pending and the rest from c's, each
// balance locked and checked first, so that a share an account cannot
// cover is refused naming it (422 Insufficient balance, nothing held). The
// accounts' CHECK stays the guarantee under any concurrency.
func (s *Service) holdRefund(ctx context.Context, tx *store.Tx, c pix.Client, t pix.Transaction, ref pix.Refund, now time.Time) error {
	shares, own, err := cashin.ProRataShares(ctx, tx, t, ref.Amount)
	if err != nil {
		return err
	}
	if len(shares) == 0 {
		return tx.Post(ctx, s.w.OrderedID(), c.ID, ref.ID, ledger.RefundReserved(ref.Amount), now)
	}
	all := append([]cashin.Share{{ClientID: c.ID, AccountID: c.AccountID, Amount: own}}, shares...)
	// Locked in client order, the order every posting takes them in.
	order := slices.Clone(all)
	slices.SortFunc(order, func(a, b cashin.Share) int { return cmp.Compare(a.ClientID, b.ClientID) })
	for _, sh := range order {
		if sh.Amount == 0 {
			continue
		}
		b, err := tx.BalancesForUpdate(ctx, sh.ClientID)
		if err != nil {
			return fmt.Errorf("balance of %s: %w", sh.AccountID, err)
		}
		if b[ledger.Available] < sh.Amount {
			return &pix.Error{Code: pix.EInsufficientBalance, Message: "Insufficient balance", Details: []pix.FieldIssue{{Field: "account_id",
				Issue: fmt.Sprintf("account %s: available R$ %s is less than its share R$ %s of the refund", sh.AccountID, b[ledger.Available], sh.Amount)}}}
		}
	}
	rows := make([]store.RefundShare, len(shares))
	ps := make([]store.PostingWrite, 0, len(all))
	for i, sh := range shares {
		rows[i] = store.RefundShare{ClientID: sh.ClientID, Amount: sh.Amount}
	}
	for _, sh := range all {
		if sh.Amount > 0 {
			ps = append(ps, store.PostingWrite{ID: s.w.OrderedID(), ClientID: sh.ClientID, TransactionID: ref.ID, Posting: ledger.RefundReserved(sh.Amount)})
		}
	}
	if err := tx.InsertRefundShares(ctx, ref.ID, rows); err != nil {
		return err
	}
	return tx.PostAll(ctx, ps, now)
}
