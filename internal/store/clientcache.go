package store

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/pixgate/pixgate/internal/job"
	"github.com/pixgate/pixgate/internal/pix"
)

// ClientChanges carries changes of clients between the processes that share
// a database (PostgreSQL: LISTEN/NOTIFY), so that each can keep the clients
// it authenticates in memory and still see a rotated secret or a disabled
// client at once.
//
// The protocol: every transaction that changes a client announces it in the
// same transaction (a notification delivered at its commit); every process
// keeping clients in memory listens, drops the client and acknowledges; the
// writer returns only once every listener connected to the database has
// acknowledged (or after AckTimeout). A listener that loses its connection
// stops using its memory until it listens again.
type ClientChanges interface {
	// Listen keeps one connection listening until ctx ends or the
	// connection fails: it calls ready once listening, changed for every
	// client change committed from then on (and acknowledges the change
	// once changed returns), and returns the error that ended it.
	Listen(ctx context.Context, ready func(), changed func(clientID string)) error
	// Announce prepares a writer: it must be called before the transaction
	// that changes clients commits, so that it hears the acknowledgements.
	Announce(ctx context.Context) (Announcement, error)
}

// Announcement is one writer's side of ClientChanges.
type Announcement interface {
	// Stmt is the statement that announces a change of the client, to run
	// in the transaction that changes it.
	Stmt(clientID string) Stmt
	// Wait returns once every listener has acknowledged the announced
	// changes, or when ctx ends (the changes are committed either way).
	Wait(ctx context.Context)
	// Close releases the writer's connection.
	Close()
}

// AckTimeout bounds how long a change of a client waits, after its commit,
// for every listening process to drop the client from its memory. A
// process that has not acknowledged by then still re-reads the client
// within clientTTL.
const AckTimeout = 5 * time.Second

// clientTTL bounds how long a client is kept in memory even without a
// change announced: a safety net, not the mechanism.
const clientTTL = 30 * time.Second

// clientCache holds clients read for authentication while a listener
// (DB.WatchClients) is connected. gen changes with every change heard and
// every time the listener connects or drops, so a read that started before
// one of those is never stored.
type clientCache struct {
	mu   sync.Mutex
	live bool
	gen  uint64
	m    map[string]cachedClient
}

type cachedClient struct {
	c  pix.Client
	at time.Time
}

// get returns the cached client, or the generation under which the caller
// may store what it reads next (put).
func (cc *clientCache) get(id string, now time.Time) (c pix.Client, hit bool, gen uint64) {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	if e, ok := cc.m[id]; ok && cc.live && now.Sub(e.at) < clientTTL {
		return e.c, true, cc.gen
	}
	return pix.Client{}, false, cc.gen
}

// put stores c if nothing was heard since generation gen.
func (cc *clientCache) put(c pix.Client, gen uint64, at time.Time) {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	if cc.live && cc.gen == gen {
		cc.m[c.ID] = cachedClient{c: c, at: at}
	}
}

// drop forgets one client (a change was heard).
func (cc *clientCache) drop(id string) {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	cc.gen++
	delete(cc.m, id)
}

// reset empties the cache and sets whether it may be used.
func (cc *clientCache) reset(live bool) {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	cc.gen++
	cc.live = live
	clear(cc.m)
}

// WatchClients keeps the clients this process authenticates in memory, on
// a dialect with ClientChanges (PostgreSQL), until ctx ends: DB.Client then
// answers from memory, and a change committed by any process (a rotated
// secret, a disabled client) drops the client here before that process's
// commit returns. While the listening connection is down, DB.Client reads
// the database every time; the connection is retried after a second, then
// after twice as long each time it fails again, up to job.MaxBackoff, and
// logged at most once per job.LogEvery. On other dialects it returns at
// once.
func (db *DB) WatchClients(ctx context.Context, log *slog.Logger) {
	if db.d.Clients == nil {
		return
	}
	outage := &job.Backoff{Name: "client-changes", Log: log}
	for ctx.Err() == nil {
		err := db.d.Clients.Listen(ctx, func() { db.cache.reset(true); outage.Succeed(ctx) }, db.cache.drop)
		db.cache.reset(false)
		if ctx.Err() != nil {
			return
		}
		outage.Fail(ctx, fmt.Errorf("listen for client changes (authenticating from the database until it is back): %w", err))
		outage.Wait(ctx)
	}
}

// updateClient runs an UPDATE of one client (ErrNotFound if none) and
// announces the change (clientChanged).
func (tx *Tx) updateClient(ctx context.Context, query, id string, args ...any) error {
	if err := tx.updateOne(ctx, query, append([]any{id}, args...)...); err != nil {
		return err
	}
	return tx.clientChanged(ctx, id)
}

// clientChanged announces, in tx, that the client changed (see
// ClientChanges); Write waits for the acknowledgements after the commit.
func (tx *Tx) clientChanged(ctx context.Context, id string) error {
	if tx.d.Clients == nil {
		return nil
	}
	if tx.announce == nil {
		a, err := tx.d.Clients.Announce(ctx)
		if err != nil {
			return fmt.Errorf("announce client change: %w", err)
		}
		tx.announce = a
	}
	s := tx.announce.Stmt(id)
	if err := tx.later(ctx, s.SQL, s.Args...); err != nil {
		return fmt.Errorf("announce client change: %w", err)
	}
	return nil
}

// awaitAnnounced waits, after tx committed, until every listening process
// has dropped the clients tx changed (at most AckTimeout). A change is
// committed whatever happens here, so nothing is returned: a process that
// did not acknowledge re-reads its clients within clientTTL.
func (db *DB) awaitAnnounced(ctx context.Context, tx *Tx) {
	if tx.announce == nil {
		return
	}
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), AckTimeout)
	defer cancel()
	tx.announce.Wait(wctx)
}

// closeAnnounced releases the writer's side of tx's announcement, if any.
func (tx *Tx) closeAnnounced() {
	if tx.announce != nil {
		tx.announce.Close()
		tx.announce = nil
	}
}
