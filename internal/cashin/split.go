package cashin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/pixgate/pixgate/internal/ledger"
	"github.com/pixgate/pixgate/internal/outbox"
	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/store"
)

// SplitEventBody is the JSON body of pix.split.received, sent to a
// receiver's postbackUrl when a split charge paid it its share.
type SplitEventBody struct {
	ID                string       `json:"id"`
	Event             string       `json:"event"`
	StatusTransaction pix.TxStatus `json:"statusTransaction"`
	Type              pix.TxType   `json:"type"`
	PaymentID         string       `json:"payment_id"`
	SourcePaymentID   string       `json:"source_payment_id"`
	Value             pix.Amount   `json:"value"`
	OccurredAt        string       `json:"occurred_at"`
}

// ResolveSplits names the receivers of splits (checked by pix.ParseSplits,
// field the list's name) for parent: each must be one of parent's own
// sub-accounts, else a 400 naming its account_id. A sub-account has no
// sub-accounts, so it can never split.
func (s *Service) ResolveSplits(ctx context.Context, parent pix.Client, field string, splits []pix.Split) ([]pix.Split, error) {
	var is []pix.FieldIssue
	out := make([]pix.Split, len(splits))
	for i, sp := range splits {
		out[i] = sp
		c, err := s.db.ClientByAccountID(ctx, sp.AccountID)
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return nil, fmt.Errorf("split receiver: %w", err)
		}
		if err != nil || c.ParentID != parent.ID || c.ParentID == "" {
			is = append(is, pix.FieldIssue{Field: fmt.Sprintf("%s[%d].account_id", field, i), Issue: pix.IssueSplitAccount})
			continue
		}
		out[i].ReceiverID, out[i].ReceiverURL = c.ID, c.PostbackURL
	}
	if len(is) > 0 {
		return nil, &pix.Error{Code: pix.EInvalid, Message: "Invalid request parameters", Details: is}
	}
	return out, nil
}

// planSplits reads charge t's splits inside tx and shares net among them
// (pix.PlanSplits); it returns the entries, their shares and, for the
// charge's lookup and event, what each was credited. No splits: all nil.
func planSplits(ctx context.Context, tx *store.Tx, t pix.Transaction, net pix.Amount) ([]pix.Split, []pix.Amount, *[]pix.SplitCredit, error) {
	splits, err := tx.Splits(ctx, t.ID)
	if err != nil || len(splits) == 0 {
		return nil, nil, nil, err
	}
	shares := pix.PlanSplits(net, splits)
	credits := make([]pix.SplitCredit, len(splits))
	for i, sp := range splits {
		a := shares[i]
		credits[i] = pix.SplitCredit{AccountID: sp.AccountID, Amount: &a}
	}
	return splits, shares, &credits, nil
}

// paySplits moves, inside tx that credited charge t (of parent, its
// client), each receiver's share out of the parent's available: a split
// transaction for the receiver, the postings split.out (parent) and
// split.in (receiver), pix.split.received to the receiver's postbackUrl,
// and the receiver's own MED debt and blocks paid first (holdsFirst). A
// share of 0 is recorded and moves nothing.
func (s *Service) paySplits(ctx context.Context, tx *store.Tx, o *outbox.Events, t pix.Transaction, parent pix.Client,
	splits []pix.Split, shares []pix.Amount, at time.Time) error {
	ps := make([]store.PostingWrite, 0, 2*len(splits))
	var paid []pix.Transaction
	for i, sp := range splits {
		if shares[i] == 0 {
			if err := tx.SetSplitCredited(ctx, t.ID, sp.Index, 0, ""); err != nil {
				return err
			}
			continue
		}
		st := pix.Transaction{ID: s.w.NewID(), ClientID: sp.ReceiverID, Type: pix.TypeSplit, RequestHash: "split", Status: pix.StatusPaid,
			Amount: shares[i], CreatedAt: at, ConfirmedAt: at, CallbackURL: sp.ReceiverURL, SourcePaymentID: t.ID,
			CounterpartyAccountID: parent.AccountID}
		if err := tx.CreateTransaction(ctx, st); err != nil {
			return err
		}
		if err := tx.SetSplitCredited(ctx, t.ID, sp.Index, shares[i], st.ID); err != nil {
			return err
		}
		if err := tx.OpenTransferAccounts(ctx, sp.ReceiverID); err != nil {
			return err
		}
		ps = append(ps, store.PostingWrite{ID: s.w.OrderedID(), ClientID: t.ClientID, TransactionID: t.ID, Posting: ledger.SplitOut(shares[i])},
			store.PostingWrite{ID: s.w.OrderedID(), ClientID: sp.ReceiverID, TransactionID: st.ID, Posting: ledger.SplitIn(shares[i])})
		paid = append(paid, st)
	}
	if len(ps) == 0 {
		return nil
	}
	if err := tx.OpenTransferAccounts(ctx, t.ClientID); err != nil {
		return err
	}
	// One PostAll: every account is locked in the one global order.
	if err := tx.PostAll(ctx, ps, at); err != nil {
		return err
	}
	for _, st := range paid {
		if err := s.emitSplit(ctx, tx, o, st, at); err != nil {
			return err
		}
		if err := s.holdsFirst(ctx, tx, st.ClientID, st.ID, st.Amount, at); err != nil {
			return err
		}
	}
	return nil
}

// emitSplit writes pix.split.received for split transaction st to its
// receiver's postbackUrl; a receiver without one gets no event.
func (s *Service) emitSplit(ctx context.Context, tx *store.Tx, o *outbox.Events, st pix.Transaction, at time.Time) error {
	if st.CallbackURL == "" {
		return nil
	}
	b := SplitEventBody{ID: s.w.EventID(), Event: pix.EventSplitReceived, StatusTransaction: pix.StatusPaid, Type: pix.TypeSplit,
		PaymentID: st.ID, SourcePaymentID: st.SourcePaymentID, Value: st.Amount, OccurredAt: pix.FormatTime(at)}
	payload, err := json.Marshal(b)
	if err != nil {
		return fmt.Errorf("split event payload: %w", err)
	}
	return o.Insert(ctx, tx, pix.Event{ID: b.ID, ClientID: st.ClientID, TransactionID: st.ID, Type: pix.EventSplitReceived,
		URL: st.CallbackURL, Payload: string(payload), CreatedAt: at})
}

// Share is what one receiver of a split charge gives back of a refund or
// a MED return: its client, account_id and split transaction.
type Share struct {
	ClientID, AccountID, SplitID string
	Amount                       pix.Amount
}

// ProRataShares reads, inside tx, the splits of charge t and returns the
// receivers' shares of total (a refund or a MED return), in proportion to
// what each was credited out of net (pix.ProRata), and what is left for
// t's client. Only shares above 0 are listed; a charge without splits
// gives none, and all of total is its client's.
func ProRataShares(ctx context.Context, tx *store.Tx, t pix.Transaction, total pix.Amount) ([]Share, pix.Amount, error) {
	splits, err := tx.Splits(ctx, t.ID)
	if err != nil || len(splits) == 0 {
		return nil, total, err
	}
	credited := make([]pix.Amount, len(splits))
	for i, sp := range splits {
		if sp.Credited != nil {
			credited[i] = *sp.Credited
		}
	}
	parts := pix.ProRata(total, t.PaidAmount-t.Tax, credited)
	var out []Share
	left := total
	for i, sp := range splits {
		if parts[i] > 0 {
			out = append(out, Share{ClientID: sp.ReceiverID, AccountID: sp.AccountID, SplitID: sp.SplitID, Amount: parts[i]})
			left -= parts[i]
		}
	}
	return out, left, nil
}
