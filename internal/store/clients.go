package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/store/batch"
)

// clientInsertColumns are the columns a new client is written with; its
// clock offset starts at the column's default, 0, so that a database
// migrated to an earlier version (as the migration tests hold) takes it.
const clientInsertColumns = `id, name, environment, secret_hash, webhook_secret, prev_webhook_secret, prev_webhook_until,
	cashin_fee_bp, cashin_fee_fixed, payout_fee_bp, payout_fee_fixed, status, created_at`

// clientAccountColumns are a client's marketplace columns (version 26),
// written when the client is given an account_id: a client inserted
// without one (a database at an earlier version, as the migration tests
// hold) gets one from the database.
const clientAccountColumns = `account_id, parent_id, document, external_id, postback_url, request_hash`

const clientColumns = clientInsertColumns + `, clock_offset_ms, ` + clientAccountColumns

func scanClient(row scanner) (pix.Client, error) {
	var c pix.Client
	var prevUntil, created int64
	var cinFixed, poFixed, offset int64
	var account, parent, ext sql.NullString
	err := row.Scan(&c.ID, &c.Name, &c.Environment, &c.SecretHash, &c.WebhookSecret, &c.PrevWebhookSecret, &prevUntil,
		&c.CashinFee.PercentBP, &cinFixed, &c.PayoutFee.PercentBP, &poFixed, &c.Status, &created, &offset,
		&account, &parent, &c.Document, &ext, &c.PostbackURL, &c.RequestHash)
	if errors.Is(err, sql.ErrNoRows) {
		return pix.Client{}, ErrNotFound
	}
	if err != nil {
		return pix.Client{}, fmt.Errorf("scan client: %w", err)
	}
	c.CashinFee.Fixed = pix.Amount(cinFixed)
	c.PayoutFee.Fixed = pix.Amount(poFixed)
	if prevUntil != 0 {
		c.PrevWebhookUntil = fromMS(prevUntil)
	}
	c.CreatedAt = fromMS(created)
	c.ClockOffset = time.Duration(offset) * time.Millisecond
	c.AccountID, c.ParentID, c.ExternalID = account.String, parent.String, ext.String
	return c, nil
}

// Client returns the client with the given id, or ErrNotFound. It is the
// read behind every authenticated request, so on a dialect with GroupReads
// the reads of concurrent requests share one statement (newClientGroup);
// each still sees every change committed before it was called, so a
// rotated secret or a disabled client stops working at once.
//
// While WatchClients listens (PostgreSQL), clients come from memory: a
// change of a client is heard, and the client dropped, before the
// transaction that made it returns to its writer (ClientChanges).
func (db *DB) Client(ctx context.Context, id string) (pix.Client, error) {
	if db.cache == nil {
		return db.readClient(ctx, id)
	}
	now := time.Now()
	c, hit, gen := db.cache.get(id, now)
	if hit {
		return c, nil
	}
	c, err := db.readClient(ctx, id)
	if err == nil {
		db.cache.put(c, gen, now) // refused unless listening and nothing heard since get
	}
	return c, err
}

// readClient reads the client from the database, in a group of
// concurrent reads where the dialect groups them.
func (db *DB) readClient(ctx context.Context, id string) (pix.Client, error) {
	if db.d.GroupReads == 0 {
		return db.Q.Client(ctx, id)
	}
	r, err := db.clients.Do(ctx, id)
	if err != nil {
		return pix.Client{}, err
	}
	if !r.found {
		return pix.Client{}, ErrNotFound
	}
	return r.c, nil
}

// clientRead is one answer of a grouped client read.
type clientRead struct {
	c     pix.Client
	found bool
}

// newClientGroup groups DB.Client calls into one SELECT … WHERE id IN (…).
func newClientGroup(db *DB) *batch.Batch[string, clientRead] {
	return batch.New(db.d.GroupReads, maxGroup, db.clientsByID)
}

// clientsByID reads the clients with the given ids (duplicates allowed) in
// one statement, answering in the order asked.
func (db *DB) clientsByID(ctx context.Context, ids []string) ([]clientRead, error) {
	var q strings.Builder
	q.WriteString(`SELECT ` + clientColumns + ` FROM clients WHERE id IN `)
	tuples(&q, 1, 1, len(ids))
	found, err := selectAll(ctx, &db.Q, scanClient, q.String(), stringArgs(nil, ids)...)
	if err != nil {
		return nil, fmt.Errorf("clients: %w", err)
	}
	byID := make(map[string]pix.Client, len(found))
	for _, c := range found {
		byID[c.ID] = c
	}
	out := make([]clientRead, len(ids))
	for i, id := range ids {
		c, ok := byID[id]
		out[i] = clientRead{c: c, found: ok}
	}
	return out, nil
}

// Client returns the client with the given id, or ErrNotFound.
func (q *Q) Client(ctx context.Context, id string) (pix.Client, error) {
	return scanClient(q.q.QueryRowContext(ctx, `SELECT `+clientColumns+` FROM clients WHERE id = $1`, id))
}

// Clients lists every client, oldest first.
func (q *Q) Clients(ctx context.Context) ([]pix.Client, error) {
	out, err := selectAll(ctx, q, scanClient, `SELECT `+clientColumns+` FROM clients ORDER BY created_at, id`)
	if err != nil {
		return nil, fmt.Errorf("list clients: %w", err)
	}
	return out, nil
}

// CountClients returns how many clients exist.
func (q *Q) CountClients(ctx context.Context) (int, error) {
	var n int
	if err := q.q.QueryRowContext(ctx, `SELECT COUNT(*) FROM clients`).Scan(&n); err != nil {
		return 0, fmt.Errorf("count clients: %w", err)
	}
	return n, nil
}

// InsertClient stores a new client, its clock at the real time, and opens
// its four ledger accounts. Returns ErrConflict if the id exists.
func (tx *Tx) InsertClient(ctx context.Context, c pix.Client) error {
	var prevUntil int64
	if !c.PrevWebhookUntil.IsZero() {
		prevUntil = ms(c.PrevWebhookUntil)
	}
	columns, values := clientInsertColumns, `$1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13`
	args := []any{c.ID, c.Name, c.Environment, c.SecretHash, c.WebhookSecret, c.PrevWebhookSecret, prevUntil,
		c.CashinFee.PercentBP, int64(c.CashinFee.Fixed), c.PayoutFee.PercentBP, int64(c.PayoutFee.Fixed), c.Status, ms(c.CreatedAt)}
	if c.AccountID != "" {
		columns, values = columns+`, `+clientAccountColumns, values+`,$14,$15,$16,$17,$18,$19`
		args = append(args, c.AccountID, nullString(c.ParentID), c.Document, nullString(c.ExternalID), c.PostbackURL, c.RequestHash)
	}
	_, err := tx.exec(ctx, `INSERT INTO clients (`+columns+`) VALUES (`+values+`)`, args...)
	if err != nil {
		return fmt.Errorf("insert client: %w", err)
	}
	for _, kind := range AccountKinds {
		if _, err := tx.exec(ctx, `INSERT INTO accounts (id, client_id, kind, balance) VALUES ($1, $2, $3, 0)`,
			AccountID(c.ID, kind), c.ID, kind); err != nil {
			return fmt.Errorf("open account %s: %w", kind, err)
		}
	}
	return nil
}

// SetClientSecret replaces the stored secret hash. Returns ErrNotFound.
func (tx *Tx) SetClientSecret(ctx context.Context, id, secretHash string) error {
	return tx.updateClient(ctx, `UPDATE clients SET secret_hash = $2 WHERE id = $1`, id, secretHash)
}

// SetClientStatus changes a client's status. Returns ErrNotFound.
func (tx *Tx) SetClientStatus(ctx context.Context, id string, status pix.ClientStatus) error {
	return tx.updateClient(ctx, `UPDATE clients SET status = $2 WHERE id = $1`, id, status)
}

// SetWebhookSecret installs a new webhook secret, keeping the previous one
// valid until prevUntil. Returns ErrNotFound.
func (tx *Tx) SetWebhookSecret(ctx context.Context, id, secret string, prevUntil time.Time) error {
	return tx.updateClient(ctx, `UPDATE clients SET prev_webhook_secret = webhook_secret, prev_webhook_until = $3, webhook_secret = $2 WHERE id = $1`,
		id, secret, ms(prevUntil))
}

// ClaimBootstrap records that the one-time task name has run. It returns
// true only for the first caller, even across processes.
func (tx *Tx) ClaimBootstrap(ctx context.Context, name string, now time.Time) (bool, error) {
	n, err := tx.affected(ctx, `INSERT INTO bootstrap (name, created_at) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING`, name, ms(now))
	if err != nil {
		return false, fmt.Errorf("claim bootstrap %s: %w", name, err)
	}
	return n == 1, nil
}

func (tx *Tx) updateOne(ctx context.Context, query string, args ...any) error {
	n, err := tx.affected(ctx, query, args...)
	if err != nil {
		return fmt.Errorf("update: %w", err)
	}
	if n == 0 {
		return ErrNotFound
	}
	return nil
}
