package backoffice

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/pixgate/pixgate/internal/ledger"
	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/store"
)

// This file holds what the administration panel reads: each operation
// takes a client id the panel has already checked the viewer may see.

// Overview is what the panel's overview page shows of one client, or of
// every client.
type Overview struct {
	Balances ledger.Balances
	Activity pix.Activity // the period's transactions by type and status
	Flows    pix.Flows    // the period's money, which adds up to the change in balance
	Failing  []pix.Event  // webhooks failing, newest first
	Clients  []pix.Client // every client (names for Failing, and the count)
}

// Overview reads the overview of client clientID, or of every client when
// it is "", for the period [from, to), with at most failing failing events.
func (s *Service) Overview(ctx context.Context, clientID string, from, to time.Time, failing int) (Overview, error) {
	var o Overview
	var err error
	if clientID == "" {
		o.Balances, err = s.db.TotalBalances(ctx)
	} else {
		o.Balances, err = s.db.Balances(ctx, clientID)
	}
	if err != nil {
		return o, fmt.Errorf("overview: %w", err)
	}
	if o.Activity, err = s.db.Activity(ctx, clientID, from, to); err != nil {
		return o, fmt.Errorf("overview: %w", err)
	}
	if o.Flows, err = s.db.Flows(ctx, clientID, from, to); err != nil {
		return o, fmt.Errorf("overview: %w", err)
	}
	if o.Failing, err = s.db.FailingEvents(ctx, clientID, failing); err != nil {
		return o, fmt.Errorf("overview: %w", err)
	}
	if o.Clients, err = s.db.Clients(ctx); err != nil {
		return o, fmt.Errorf("overview: %w", err)
	}
	return o, nil
}

// FindTransactions returns client clientID's transaction whose payment_id
// is q and the one whose external_id is q, without repeating one that is
// both: none, one or two.
func (s *Service) FindTransactions(ctx context.Context, clientID, q string) ([]pix.Transaction, error) {
	var out []pix.Transaction
	for _, find := range []func() (pix.Transaction, error){
		func() (pix.Transaction, error) { return s.db.Transaction(ctx, clientID, q) },
		func() (pix.Transaction, error) { return s.db.TransactionByExternalID(ctx, clientID, q) },
	} {
		t, err := find()
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("find transactions: %w", err)
		}
		if len(out) == 0 || out[0].ID != t.ID {
			out = append(out, t)
		}
	}
	return out, nil
}

// TransactionPage returns up to limit of client clientID's transactions,
// newest first, of the given status and type ("" for any), from cursor on,
// and the next page's cursor ("" on the last page). Errors: EInvalid (a
// cursor this operation did not return).
func (s *Service) TransactionPage(ctx context.Context, clientID string, status pix.TxStatus, typ pix.TxType, cursor string, limit int) ([]pix.Transaction, string, error) {
	rows, next, err := s.db.History(ctx, clientID, store.HistoryFilter{Status: status, Type: typ, Cursor: cursor, Limit: limit})
	if errors.Is(err, store.ErrBadCursor) {
		return nil, "", pix.Errorf(pix.EInvalid, "bad cursor")
	}
	if err != nil {
		return nil, "", fmt.Errorf("transaction page: %w", err)
	}
	return rows, next, nil
}

// RefundDetail is a refund with its ledger postings.
type RefundDetail struct {
	Refund   pix.Refund
	Postings []ledger.PostingRecord
}

// EventDetail is a webhook event with every delivery attempt.
type EventDetail struct {
	Event    pix.Event
	Attempts []pix.Attempt
}

// TransactionDetail is one transaction with its ledger postings, its
// refunds and its events.
type TransactionDetail struct {
	Tx       pix.Transaction
	Postings []ledger.PostingRecord
	Refunds  []RefundDetail
	Events   []EventDetail
}

// TransactionDetail reads client clientID's transaction id with everything
// the panel shows of it. Errors: ENotFound.
func (s *Service) TransactionDetail(ctx context.Context, clientID, id string) (TransactionDetail, error) {
	var d TransactionDetail
	t, err := s.db.Transaction(ctx, clientID, id)
	if errors.Is(err, store.ErrNotFound) {
		return d, pix.Errorf(pix.ENotFound, "transaction not found")
	}
	if err != nil {
		return d, fmt.Errorf("transaction detail: %w", err)
	}
	d.Tx = t
	if d.Postings, err = s.db.Postings(ctx, t.ID); err != nil {
		return d, fmt.Errorf("transaction detail: %w", err)
	}
	refunds, err := s.db.Refunds(ctx, t.ID)
	if err != nil {
		return d, fmt.Errorf("transaction detail: %w", err)
	}
	for _, rf := range refunds {
		ps, err := s.db.Postings(ctx, rf.ID)
		if err != nil {
			return d, fmt.Errorf("transaction detail: %w", err)
		}
		d.Refunds = append(d.Refunds, RefundDetail{Refund: rf, Postings: ps})
	}
	events, err := s.db.Events(ctx, t.ID)
	if err != nil {
		return d, fmt.Errorf("transaction detail: %w", err)
	}
	attempts, err := s.db.Attempts(ctx, t.ID)
	if err != nil {
		return d, fmt.Errorf("transaction detail: %w", err)
	}
	for _, e := range events {
		d.Events = append(d.Events, EventDetail{Event: e, Attempts: attempts[e.ID]})
	}
	return d, nil
}

// ClientEvent returns client clientID's webhook event eventID. Errors:
// ENotFound (also for another client's event).
func (s *Service) ClientEvent(ctx context.Context, clientID, eventID string) (pix.Event, error) {
	e, err := s.db.Event(ctx, eventID)
	if errors.Is(err, store.ErrNotFound) || (err == nil && e.ClientID != clientID) {
		return pix.Event{}, pix.Errorf(pix.ENotFound, "event not found")
	}
	if err != nil {
		return pix.Event{}, fmt.Errorf("client event: %w", err)
	}
	return e, nil
}
