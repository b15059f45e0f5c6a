package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/pixgate/pixgate/internal/pix"
)

const txColumns = `id, client_id, type, external_id, idempotency_key, request_hash, status, amount, tax,
	refunded_amount, refund_pending, created_at, confirmed_at, expires_at, settle_at, txid, qrcode, callback_url, details,
	end_to_end_id, send_state, send_attempts, paid_amount, due, expected_amount, recurrence_id, payer_name, payer_document, med_returned,
	source_payment_id, counterparty_account_id`

func scanTransaction(row scanner) (pix.Transaction, error) {
	var t pix.Transaction
	var ext, idem, txid, e2e, rec, payerName, payerDoc, source, counterparty sql.NullString
	var amount, tax, refunded, refundPending, medReturned, created int64
	var confirmed, expires, settle, paid, expected sql.NullInt64
	var due sql.NullString
	err := row.Scan(&t.ID, &t.ClientID, &t.Type, &ext, &idem, &t.RequestHash, &t.Status, &amount, &tax,
		&refunded, &refundPending, &created, &confirmed, &expires, &settle, &txid, &t.QRCode, &t.CallbackURL, &t.Details,
		&e2e, &t.SendState, &t.SendAttempts, &paid, &due, &expected, &rec, &payerName, &payerDoc, &medReturned,
		&source, &counterparty)
	if errors.Is(err, sql.ErrNoRows) {
		return pix.Transaction{}, ErrNotFound
	}
	if err != nil {
		return pix.Transaction{}, fmt.Errorf("scan transaction: %w", err)
	}
	t.ExternalID, t.IdempotencyKey, t.TxID, t.EndToEndID = ext.String, idem.String, txid.String, e2e.String
	t.Amount, t.Tax, t.RefundedAmount, t.RefundPending = pix.Amount(amount), pix.Amount(tax), pix.Amount(refunded), pix.Amount(refundPending)
	t.CreatedAt, t.PaidAmount, t.MEDReturned = fromMS(created), pix.Amount(paid.Int64), pix.Amount(medReturned)
	t.ConfirmedAt, t.ExpiresAt, t.SettleAt = fromNullMS(confirmed), fromNullMS(expires), fromNullMS(settle)
	t.ExpectedAmount, t.RecurrenceID = pix.Amount(expected.Int64), rec.String
	t.PayerName, t.PayerDocument = payerName.String, payerDoc.String
	t.SourcePaymentID, t.CounterpartyAccountID = source.String, counterparty.String
	if due.Valid {
		t.Due = new(pix.Due)
		if err := json.Unmarshal([]byte(due.String), t.Due); err != nil {
			return pix.Transaction{}, fmt.Errorf("scan transaction %s: %w", t.ID, err)
		}
	}
	return t, nil
}

// dueColumn writes a charge's due terms as their JSON, or NULL for none;
// database/sql encodes it when the statement runs, and reports its error.
type dueColumn struct{ d *pix.Due }

// Value implements driver.Valuer.
func (c dueColumn) Value() (driver.Value, error) {
	if c.d == nil {
		return nil, nil
	}
	b, err := json.Marshal(c.d)
	if err != nil {
		return nil, fmt.Errorf("encode due terms: %w", err)
	}
	return string(b), nil
}

// InsertTransaction stores a new transaction unless one with the same
// client and external_id, idempotency key or txid exists; it reports whether
// it inserted. On PostgreSQL a concurrent insert of the same key waits for
// the other transaction, so a false return means the other row is committed
// and readable.
func (tx *Tx) InsertTransaction(ctx context.Context, t pix.Transaction) (bool, error) {
	return tx.insertTransaction(ctx, t)
}

// InsertTransaction is Tx.InsertTransaction as a transaction of its own,
// with no BEGIN and COMMIT; concurrent calls share one multi-row INSERT
// (group commit, see newInsertGroup). A charge is created this way: its row
// is the whole change.
func (db *DB) InsertTransaction(ctx context.Context, t pix.Transaction) (bool, error) {
	return db.inserts.Do(ctx, t)
}

func (q *Q) insertTransaction(ctx context.Context, t pix.Transaction) (bool, error) {
	n, err := q.affected(ctx, insertTransactionSQL+` ON CONFLICT DO NOTHING`, transactionArgs(t)...)
	if err != nil {
		return false, fmt.Errorf("insert transaction: %w", err)
	}
	return n == 1, nil
}

// CreateTransaction stores a new transaction inside tx, like
// InsertTransaction, but a duplicate (same external_id or Idempotency-Key
// for the client) fails the transaction with ErrConflict instead of being
// skipped. Needing no answer, the insert waits for the transaction's next
// read or commit on PostgreSQL (Tx.later), so the conflict surfaces from
// Write. (Payouts are created by DB.CreatePayout, which does the same for a
// group of them.)
func (tx *Tx) CreateTransaction(ctx context.Context, t pix.Transaction) error {
	if err := tx.later(ctx, insertTransactionSQL, transactionArgs(t)...); err != nil {
		return fmt.Errorf("insert transaction: %w", err)
	}
	return nil
}

const (
	insertTransactionHead = `INSERT INTO transactions (` + txColumns + `) VALUES `
	insertTransactionSQL  = insertTransactionHead + `($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,$14,$15,$16,$17,$18,$19,$20,$21,$22,$23,$24,$25,$26,$27,$28,$29,$30,$31)`
	txColumnCount         = 31
)

func transactionArgs(t pix.Transaction) []any {
	return []any{t.ID, t.ClientID, t.Type, nullString(t.ExternalID), nullString(t.IdempotencyKey), t.RequestHash, t.Status,
		int64(t.Amount), int64(t.Tax), int64(t.RefundedAmount), int64(t.RefundPending), ms(t.CreatedAt),
		nullMS(t.ConfirmedAt), nullMS(t.ExpiresAt), nullMS(t.SettleAt), nullString(t.TxID), t.QRCode, t.CallbackURL, t.Details,
		nullString(t.EndToEndID), t.SendState, t.SendAttempts, nullAmount(t.PaidAmount), dueColumn{t.Due}, nullAmount(t.ExpectedAmount), nullString(t.RecurrenceID),
		nullString(t.PayerName), nullString(t.PayerDocument), int64(t.MEDReturned),
		nullString(t.SourcePaymentID), nullString(t.CounterpartyAccountID)}
}

// Transaction returns the client's transaction with the given id, or ErrNotFound.
func (q *Q) Transaction(ctx context.Context, clientID, id string) (pix.Transaction, error) {
	return scanTransaction(q.q.QueryRowContext(ctx, `SELECT `+txColumns+` FROM transactions WHERE id = $1 AND client_id = $2`, id, clientID))
}

// TransactionForUpdate is Transaction that also locks the row until tx ends.
func (tx *Tx) TransactionForUpdate(ctx context.Context, clientID, id string) (pix.Transaction, error) {
	return scanTransaction(tx.q.QueryRowContext(ctx, `SELECT `+txColumns+` FROM transactions WHERE id = $1 AND client_id = $2`+tx.d.ForUpdate, id, clientID))
}

// TransactionByExternalID returns the client's transaction with that external_id, or ErrNotFound.
func (q *Q) TransactionByExternalID(ctx context.Context, clientID, externalID string) (pix.Transaction, error) {
	return scanTransaction(q.q.QueryRowContext(ctx, `SELECT `+txColumns+` FROM transactions WHERE client_id = $1 AND external_id = $2`, clientID, externalID))
}

// TransactionByIdempotencyKey returns the client's transaction created with that key, or ErrNotFound.
func (q *Q) TransactionByIdempotencyKey(ctx context.Context, clientID, key string) (pix.Transaction, error) {
	return scanTransaction(q.q.QueryRowContext(ctx, `SELECT `+txColumns+` FROM transactions WHERE client_id = $1 AND idempotency_key = $2`, clientID, key))
}

// TransactionByTxID returns the charge with that BR Code txid, of any client, or ErrNotFound.
func (q *Q) TransactionByTxID(ctx context.Context, txid string) (pix.Transaction, error) {
	return scanTransaction(q.q.QueryRowContext(ctx, `SELECT `+txColumns+` FROM transactions WHERE txid = $1`, txid))
}

// ChargeByTxIDForUpdate returns the charge with that BR Code txid, of any
// client, locked until tx ends, or ErrNotFound.
func (tx *Tx) ChargeByTxIDForUpdate(ctx context.Context, txid string) (pix.Transaction, error) {
	return scanTransaction(tx.q.QueryRowContext(ctx, `SELECT `+txColumns+` FROM transactions WHERE txid = $1`+tx.d.ForUpdate, txid))
}

// TransactionByID returns a transaction of any client (the public pay page and jobs use it).
func (q *Q) TransactionByID(ctx context.Context, id string) (pix.Transaction, error) {
	return scanTransaction(q.q.QueryRowContext(ctx, `SELECT `+txColumns+` FROM transactions WHERE id = $1`, id))
}

// TransitionTransaction moves a transaction from status from to status to
// (setting confirmed_at when confirmed is non-zero) and reports whether it
// did: false means it was no longer in status from, so the caller must not
// apply the change's effects a second time.
func (tx *Tx) TransitionTransaction(ctx context.Context, id string, from, to pix.TxStatus, confirmed time.Time) (bool, error) {
	n, err := tx.affected(ctx, `UPDATE transactions SET status = $3, confirmed_at = COALESCE($4, confirmed_at)
		WHERE id = $1 AND status = $2`, id, from, to, nullMS(confirmed))
	if err != nil {
		return false, fmt.Errorf("transition transaction: %w", err)
	}
	return n == 1, nil
}

// SetSettleAt schedules (or, with a zero time, unschedules) provider
// settlement work. It is meant for a row the transaction has locked (it
// does not report a missing row) and waits for the next read or the commit
// on PostgreSQL (Tx.later).
func (tx *Tx) SetSettleAt(ctx context.Context, id string, at time.Time) error {
	if err := tx.later(ctx, `UPDATE transactions SET settle_at = $2 WHERE id = $1`, id, nullMS(at)); err != nil {
		return fmt.Errorf("set settle_at: %w", err)
	}
	return nil
}

// DueSettlements returns up to limit transactions whose settle_at ≤ now,
// earliest first, without locking them: each step of a payout is then
// claimed by a guarded update (Tx.StepSend).
func (q *Q) DueSettlements(ctx context.Context, now time.Time, limit int) ([]pix.Transaction, error) {
	out, err := q.list(ctx, `SELECT `+txColumns+` FROM transactions WHERE settle_at IS NOT NULL AND settle_at <= $1
		AND (send_lease IS NULL OR send_lease <= $1) ORDER BY settle_at LIMIT $2`, ms(now), limit)
	if err != nil {
		return nil, fmt.Errorf("due settlements: %w", err)
	}
	return out, nil
}

func (q *Q) ids(ctx context.Context, query string, args ...any) ([]string, error) {
	out, err := selectAll(ctx, q, func(row scanner) (id string, err error) { return id, row.Scan(&id) }, query, args...)
	if err != nil {
		return nil, fmt.Errorf("read ids: %w", err)
	}
	return out, nil
}

func (q *Q) list(ctx context.Context, query string, args ...any) ([]pix.Transaction, error) {
	out, err := selectAll(ctx, q, scanTransaction, query, args...)
	if err != nil {
		return nil, fmt.Errorf("list transactions: %w", err)
	}
	return out, nil
}

// HistoryFilter selects a page of a client's history.
type HistoryFilter struct {
	Status pix.TxStatus // lookup status, or ""
	Type   pix.TxType   // cashin, cashout, or ""
	From   time.Time    // inclusive, or zero
	To     time.Time    // exclusive, or zero
	Cursor string       // from a previous page's NextCursor, or ""
	Limit  int
}

// ErrBadCursor is returned by History for a cursor it did not issue.
var ErrBadCursor = errors.New("store: bad cursor")

// History returns a page of the client's transactions, newest first, and the
// cursor of the next page ("" at the end). Paging is by key (created_at, id),
// so a page costs the same at any depth and rows inserted meanwhile never make
// a page repeat or skip a row.
func (q *Q) History(ctx context.Context, clientID string, f HistoryFilter) ([]pix.Transaction, string, error) {
	var where strings.Builder
	args := []any{clientID}
	where.WriteString("client_id = $1")
	add := func(cond string, v any) {
		args = append(args, v)
		fmt.Fprintf(&where, " AND "+cond, len(args))
	}
	if f.Status != "" {
		add("status = $%d", f.Status)
	}
	if f.Type != "" {
		add("type = $%d", f.Type)
	}
	if !f.From.IsZero() {
		add("created_at >= $%d", ms(f.From))
	}
	if !f.To.IsZero() {
		add("created_at < $%d", ms(f.To))
	}
	if f.Cursor != "" {
		at, id, err := decodeCursor(f.Cursor)
		if err != nil {
			return nil, "", err
		}
		args = append(args, at, id)
		// A row-value comparison, not "created_at < a OR (created_at = a
		// AND id < b)": PostgreSQL turns the row value into a range of the
		// history index, where the OR made it filter every newer row (a
		// page 10^6 rows deep took 30 ms instead of 0.3 ms).
		fmt.Fprintf(&where, " AND (created_at, id) < ($%d, $%d)", len(args)-1, len(args))
	}
	args = append(args, f.Limit+1)
	rows, err := q.list(ctx, `SELECT `+txColumns+` FROM transactions WHERE `+where.String()+
		fmt.Sprintf(` ORDER BY created_at DESC, id DESC LIMIT $%d`, len(args)), args...)
	if err != nil {
		return nil, "", err
	}
	next := ""
	if len(rows) > f.Limit {
		rows = rows[:f.Limit]
		next = CursorAfter(rows[len(rows)-1])
	}
	return rows, next, nil
}

// CursorAfter is the History cursor of the page that follows transaction t
// (the rows older than t, in history order).
func CursorAfter(t pix.Transaction) string {
	return base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(ms(t.CreatedAt), 10) + "|" + t.ID))
}

func decodeCursor(c string) (int64, string, error) {
	raw, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil {
		return 0, "", ErrBadCursor
	}
	atText, id, ok := strings.Cut(string(raw), "|")
	if !ok || id == "" || len(id) > 64 {
		return 0, "", ErrBadCursor
	}
	at, err := strconv.ParseInt(atText, 10, 64)
	if err != nil || at < 0 {
		return 0, "", ErrBadCursor
	}
	return at, id, nil
}
