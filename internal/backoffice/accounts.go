package backoffice

import (
	"context"
	"errors"
	"fmt"

	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/store"
)

// This file holds the panel's read-only views of the marketplaces
// (docs/marketplace.md): the top-level clients with their sub-accounts,
// and one parent's sub-accounts a page at a time, each with its available
// balance.

// AccountRow is a client with its available balance, as the panel lists
// clients and sub-accounts.
type AccountRow struct {
	Client    pix.Client
	Available pix.Amount
}

// Family is a top-level client and its sub-accounts, oldest first: at most
// the limit Families was given, More counting the rest.
type Family struct {
	Parent AccountRow
	Subs   []AccountRow
	More   int
}

// Families returns every top-level client, oldest first, each with up to
// subLimit of its sub-accounts beneath it (the operators' list of
// clients). A sub-account whose parent is not among the clients read
// (none should be) is listed as a family of its own, so that no client
// ever goes missing from the list.
func (s *Service) Families(ctx context.Context, subLimit int) ([]Family, error) {
	cs, err := s.db.Clients(ctx)
	if err != nil {
		return nil, fmt.Errorf("families: %w", err)
	}
	ids := make([]string, len(cs))
	top := make(map[string]bool, len(cs))
	for i, c := range cs {
		ids[i] = c.ID
		if c.ParentID == "" {
			top[c.ID] = true
		}
	}
	bal, err := s.db.AvailableBalances(ctx, ids)
	if err != nil {
		return nil, fmt.Errorf("families: %w", err)
	}
	var out []Family
	at := make(map[string]int, len(top))
	for _, c := range cs {
		if c.ParentID == "" || !top[c.ParentID] {
			at[c.ID] = len(out)
			out = append(out, Family{Parent: AccountRow{Client: c, Available: bal[c.ID]}})
		}
	}
	for _, c := range cs {
		if c.ParentID == "" || !top[c.ParentID] {
			continue
		}
		f := &out[at[c.ParentID]]
		if len(f.Subs) < subLimit {
			f.Subs = append(f.Subs, AccountRow{Client: c, Available: bal[c.ID]})
		} else {
			f.More++
		}
	}
	return out, nil
}

// SubAccountPage returns up to limit of parent parentID's sub-accounts,
// newest first, from cursor on, each with its available balance, and the
// next page's cursor ("" on the last page). Errors: EInvalid (a cursor
// this operation did not return).
func (s *Service) SubAccountPage(ctx context.Context, parentID, cursor string, limit int) ([]AccountRow, string, error) {
	cs, next, err := s.db.SubAccounts(ctx, parentID, cursor, limit)
	if errors.Is(err, store.ErrBadCursor) {
		return nil, "", pix.Errorf(pix.EInvalid, "bad cursor")
	}
	if err != nil {
		return nil, "", fmt.Errorf("sub-account page: %w", err)
	}
	ids := make([]string, len(cs))
	for i, c := range cs {
		ids[i] = c.ID
	}
	bal, err := s.db.AvailableBalances(ctx, ids)
	if err != nil {
		return nil, "", fmt.Errorf("sub-account page: %w", err)
	}
	out := make([]AccountRow, len(cs))
	for i, c := range cs {
		out[i] = AccountRow{Client: c, Available: bal[c.ID]}
	}
	return out, next, nil
}
