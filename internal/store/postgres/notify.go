package postgres

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pixgate/pixgate/internal/store"
)

// Client changes travel as notifications (store.ClientChanges): a writer
// sends "NONCE CLIENT_ID" on changeChannel in the transaction that changes
// the client; each listener drops the client and answers NONCE on
// ackChannel; the writer, listening on ackChannel since before its commit,
// waits for an answer from every listener connection (identified by the
// backend pid the notification comes from, and found in pg_stat_activity by
// its application_name).
const (
	changeChannel = "pixgate_clients"
	ackChannel    = "pixgate_clients_ack"
	listenerApp   = "pixgate-clients"
	// pingEvery is how often an idle listener checks its connection, so
	// that a connection lost without an error (a network partition) stops
	// the use of memory within seconds.
	pingEvery = 5 * time.Second
)

// clientChanges implements store.ClientChanges with dedicated pgx
// connections (not from the pool: a listening session must stay put).
type clientChanges struct {
	cfg *pgx.ConnConfig
}

func (w *clientChanges) connect(ctx context.Context, app string) (*pgx.Conn, error) {
	cfg := w.cfg.Copy()
	cfg.RuntimeParams["application_name"] = app
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("connect to PostgreSQL: %w", err)
	}
	return conn, nil
}

// Listen implements store.ClientChanges.
func (w *clientChanges) Listen(ctx context.Context, ready func(), changed func(string)) error {
	// Writers wait for connections named listenerApp; the name is taken
	// only once LISTEN is in effect, so a writer never waits for a
	// connection that could not have heard it.
	conn, err := w.connect(ctx, listenerApp+"-starting")
	if err != nil {
		return err
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
		defer cancel()
		_ = conn.Close(cctx)
	}()
	if _, err := conn.Exec(ctx, "LISTEN "+changeChannel); err != nil {
		return fmt.Errorf("listen for client changes: %w", err)
	}
	if _, err := conn.Exec(ctx, "SET application_name = '"+listenerApp+"'"); err != nil {
		return fmt.Errorf("listen for client changes: %w", err)
	}
	ready()
	for {
		wctx, cancel := context.WithTimeout(ctx, pingEvery)
		n, err := conn.WaitForNotification(wctx)
		cancel()
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if errors.Is(err, context.DeadlineExceeded) {
			if err := conn.Ping(ctx); err != nil {
				return fmt.Errorf("client changes connection: %w", err)
			}
			continue
		}
		if err != nil {
			return fmt.Errorf("wait for client changes: %w", err)
		}
		nonce, id, ok := strings.Cut(n.Payload, " ")
		if !ok {
			continue
		}
		changed(id)
		if _, err := conn.Exec(ctx, "SELECT pg_notify($1, $2)", ackChannel, nonce); err != nil {
			return fmt.Errorf("acknowledge client change: %w", err)
		}
	}
}

// Announce implements store.ClientChanges.
func (w *clientChanges) Announce(ctx context.Context) (store.Announcement, error) {
	conn, err := w.connect(ctx, "pixgate-clients-writer")
	if err != nil {
		return nil, err
	}
	if _, err := conn.Exec(ctx, "LISTEN "+ackChannel); err != nil {
		_ = conn.Close(ctx)
		return nil, fmt.Errorf("listen for acknowledgements: %w", err)
	}
	var b [16]byte
	_, _ = rand.Read(b[:])
	return &announcement{conn: conn, nonce: hex.EncodeToString(b[:])}, nil
}

// announcement is one writer's side: its connection listening for
// acknowledgements and the nonce its changes carry.
type announcement struct {
	conn  *pgx.Conn
	nonce string
}

func (a *announcement) Stmt(clientID string) store.Stmt {
	return store.Stmt{SQL: "SELECT pg_notify($1, $2)", Args: []any{changeChannel, a.nonce + " " + clientID}}
}

// Wait implements store.Announcement. The listeners are read after the
// commit: one that started listening later never cached the old client.
// A failure ends the wait early; the change is committed regardless.
func (a *announcement) Wait(ctx context.Context) {
	rows, err := a.conn.Query(ctx, `SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND application_name = $1`, listenerApp)
	if err != nil {
		return
	}
	pids, err := pgx.CollectRows(rows, pgx.RowTo[int32])
	if err != nil {
		return
	}
	waiting := make(map[uint32]bool, len(pids))
	for _, p := range pids {
		waiting[uint32(p)] = true //nolint:gosec // G115: backend process ids are positive.
	}
	for len(waiting) > 0 {
		n, err := a.conn.WaitForNotification(ctx)
		if err != nil {
			return
		}
		if n.Payload == a.nonce {
			delete(waiting, n.PID)
		}
	}
}

func (a *announcement) Close() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_ = a.conn.Close(ctx)
}
