package cashin

import (
	"context"
	"time"

	"github.com/pixgate/pixgate/internal/pix"
)

// cobs is how a charge's cob is registered at the provider, chosen once by
// New from what the provider is: no use case asks.
type cobs interface {
	// lookFirst reports whether a replay must be found before the provider
	// is called: a cob registered at a PSP must not be created twice.
	lookFirst() bool
	// intend commits, before the provider is called, the intent of cob
	// txid, so that a crash before its charge is stored leaves it to the
	// sweep (SweepOrphanCobs).
	intend(ctx context.Context, txid, clientID string, now time.Time, due bool) error
	// stored settles the intent of cob txid once its charge is stored, or
	// withdraws the cob when no charge holds it.
	stored(ctx context.Context, txid string, due, held bool)
}

// newCobs is the cob registration of a provider whose charges are
// written locally (local: a static BR Code, nothing registered anywhere),
// or registered at a PSP.
func newCobs(s *Service, local bool) cobs {
	if local {
		return localCobs{}
	}
	return pspCobs{s}
}

// pspCobs registers cobs at a PSP, with their intents.
type pspCobs struct{ s *Service }

func (pspCobs) lookFirst() bool { return true }

func (c pspCobs) intend(ctx context.Context, txid, clientID string, now time.Time, due bool) error {
	return c.s.db.InsertCobIntent(ctx, pix.CobIntent{TxID: txid, ClientID: clientID, CreatedAt: now, Due: due})
}

func (c pspCobs) stored(ctx context.Context, txid string, due, held bool) {
	if held {
		c.s.intentDone(ctx, txid)
		return
	}
	c.s.withdrawCharge(ctx, txid, due)
}

// localCobs is a provider's whose charges leave nothing behind: a charge
// never stored costs nothing, and a replay is found by the insert.
type localCobs struct{}

func (localCobs) lookFirst() bool                                               { return false }
func (localCobs) intend(context.Context, string, string, time.Time, bool) error { return nil }
func (localCobs) stored(context.Context, string, bool, bool)                    {}

// LookFirst reports whether a create must look for its replay before it
// registers a cob: a cob registered at a PSP must not be created twice.
func (s *Service) LookFirst() bool { return s.cobs.lookFirst() }

// Intend commits, before the provider is called, the intent of cob txid
// (a cobv when due) of client clientID, so that a crash before its charge
// is stored leaves it to the sweep (SweepOrphanCobs).
func (s *Service) Intend(ctx context.Context, txid, clientID string, now time.Time, due bool) error {
	return s.cobs.intend(ctx, txid, clientID, now, due)
}

// Stored settles the intent of cob txid once its charge is stored (held),
// or withdraws the cob when no charge holds it.
func (s *Service) Stored(ctx context.Context, txid string, due, held bool) {
	s.cobs.stored(ctx, txid, due, held)
}
