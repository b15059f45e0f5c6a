package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/pixgate/pixgate/internal/ledger"
	"github.com/pixgate/pixgate/internal/pix"
)

const disputeColumns = `id, client_id, transaction_id, amount, blocked, reason, status, respond_by, defense_accept,
	defense_justification, defense_at, outcome, returned_amount, opened_at, closed_at, psp_id, return_id`

func scanDispute(row scanner) (pix.Dispute, error) {
	var d pix.Dispute
	var amount, blocked, returned, respondBy, opened int64
	var accept sql.NullBool
	var justification, outcome sql.NullString
	var defenseAt, closed sql.NullInt64
	err := row.Scan(&d.ID, &d.ClientID, &d.PaymentID, &amount, &blocked, &d.Reason, &d.Status, &respondBy, &accept,
		&justification, &defenseAt, &outcome, &returned, &opened, &closed, &d.PSPID, &d.ReturnID)
	if errors.Is(err, sql.ErrNoRows) {
		return pix.Dispute{}, ErrNotFound
	}
	if err != nil {
		return pix.Dispute{}, fmt.Errorf("scan dispute: %w", err)
	}
	d.Amount, d.Blocked, d.ReturnedAmount = pix.Amount(amount), pix.Amount(blocked), pix.Amount(returned)
	d.RespondBy, d.OpenedAt, d.Outcome = fromMS(respondBy), fromMS(opened), pix.Outcome(outcome.String)
	if accept.Valid {
		d.Defense = &pix.DisputeDefense{Accept: accept.Bool, Justification: justification.String, At: fromNullMS(defenseAt)}
	}
	if closed.Valid {
		at := fromMS(closed.Int64)
		d.ClosedAt = &at
	}
	return d, nil
}

// InsertDispute records a new dispute d.
func (tx *Tx) InsertDispute(ctx context.Context, d pix.Dispute) error {
	_, err := tx.exec(ctx, `INSERT INTO disputes (id, client_id, transaction_id, amount, blocked, reason, status, respond_by,
		opened_at, psp_id, return_id) VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11)`,
		d.ID, d.ClientID, d.PaymentID, int64(d.Amount), int64(d.Blocked), d.Reason, d.Status, ms(d.RespondBy), ms(d.OpenedAt),
		d.PSPID, d.ReturnID)
	if err != nil {
		return fmt.Errorf("insert dispute: %w", err)
	}
	return nil
}

// Dispute returns client clientID's dispute id, or ErrNotFound.
func (q *Q) Dispute(ctx context.Context, clientID, id string) (pix.Dispute, error) {
	return scanDispute(q.q.QueryRowContext(ctx, `SELECT `+disputeColumns+` FROM disputes WHERE id = $1 AND client_id = $2`, id, clientID))
}

// DisputeByID returns dispute id of any client, or ErrNotFound.
func (q *Q) DisputeByID(ctx context.Context, id string) (pix.Dispute, error) {
	return scanDispute(q.q.QueryRowContext(ctx, `SELECT `+disputeColumns+` FROM disputes WHERE id = $1`, id))
}

// DisputeForUpdate returns dispute id locked until tx ends, or ErrNotFound.
func (tx *Tx) DisputeForUpdate(ctx context.Context, id string) (pix.Dispute, error) {
	return scanDispute(tx.q.QueryRowContext(ctx, `SELECT `+disputeColumns+` FROM disputes WHERE id = $1`+tx.d.ForUpdate, id))
}

// DisputeByPSPID returns the dispute of charge transactionID opened by the
// PSP's infraction pspID, or ErrNotFound.
func (q *Q) DisputeByPSPID(ctx context.Context, transactionID, pspID string) (pix.Dispute, error) {
	return scanDispute(q.q.QueryRowContext(ctx, `SELECT `+disputeColumns+` FROM disputes WHERE transaction_id = $1 AND psp_id = $2 AND psp_id <> ''`,
		transactionID, pspID))
}

// DisputeByReturnID returns the dispute the PSP's devolução returnID
// returned, or ErrNotFound.
func (q *Q) DisputeByReturnID(ctx context.Context, returnID string) (pix.Dispute, error) {
	return scanDispute(q.q.QueryRowContext(ctx, `SELECT `+disputeColumns+` FROM disputes WHERE return_id = $1 AND return_id <> ''`, returnID))
}

// TransactionDisputes returns the disputes of charge transactionID, oldest
// first.
func (q *Q) TransactionDisputes(ctx context.Context, transactionID string) ([]pix.Dispute, error) {
	out, err := selectAll(ctx, q, scanDispute, `SELECT `+disputeColumns+` FROM disputes WHERE transaction_id = $1 ORDER BY opened_at, id`,
		transactionID)
	if err != nil {
		return nil, fmt.Errorf("disputes of %s: %w", transactionID, err)
	}
	return out, nil
}

// OpenUnfilledDisputes returns client clientID's OPEN disputes whose block
// is short of their amount, oldest first: the order later credits fill
// them in.
func (tx *Tx) OpenUnfilledDisputes(ctx context.Context, clientID string) ([]pix.Dispute, error) {
	out, err := selectAll(ctx, &tx.Q, scanDispute, `SELECT `+disputeColumns+` FROM disputes
		WHERE client_id = $1 AND status = 'OPEN' AND blocked < amount ORDER BY opened_at, id`+tx.d.ForUpdate, clientID)
	if err != nil {
		return nil, fmt.Errorf("unfilled disputes of %s: %w", clientID, err)
	}
	return out, nil
}

// ClientHolds returns what client clientID owes (its debt, ≥ 0) and what
// its OPEN disputes still have to block, in one read: the partial index
// disputes_open keeps the second part to the client's open disputes, none
// for almost every client.
func (tx *Tx) ClientHolds(ctx context.Context, clientID string) (owed, unfilled pix.Amount, err error) {
	var debt, short int64
	err = tx.q.QueryRowContext(ctx, `SELECT
		COALESCE((SELECT balance FROM accounts WHERE id = $2), 0),
		(SELECT COALESCE(SUM(amount - blocked), 0) FROM disputes WHERE client_id = $1 AND status = 'OPEN')`,
		clientID, AccountID(clientID, ledger.Debt)).Scan(&debt, &short)
	if err != nil {
		return 0, 0, fmt.Errorf("holds of %s: %w", clientID, err)
	}
	return pix.Amount(-debt), pix.Amount(short), nil
}

// OpenMEDAccounts opens client clientID's blocked and debt accounts
// (ledger.MEDKinds) unless they exist: at its first dispute.
func (tx *Tx) OpenMEDAccounts(ctx context.Context, clientID string) error {
	for _, kind := range ledger.MEDKinds {
		if _, err := tx.exec(ctx, `INSERT INTO accounts (id, client_id, kind, balance) VALUES ($1, $2, $3, 0) ON CONFLICT DO NOTHING`,
			AccountID(clientID, kind), clientID, kind); err != nil {
			return fmt.Errorf("open account %s: %w", kind, err)
		}
	}
	return nil
}

// SetDisputeBlocked records what dispute id now blocks.
func (tx *Tx) SetDisputeBlocked(ctx context.Context, id string, blocked pix.Amount) error {
	return tx.updateOne(ctx, `UPDATE disputes SET blocked = $2 WHERE id = $1`, id, int64(blocked))
}

// SetDisputeDefense records the defense of the OPEN dispute id; it
// reports false when the dispute is not OPEN or has a defense already.
func (tx *Tx) SetDisputeDefense(ctx context.Context, id string, d pix.DisputeDefense) (bool, error) {
	n, err := tx.affected(ctx, `UPDATE disputes SET defense_accept = $2, defense_justification = $3, defense_at = $4
		WHERE id = $1 AND status = 'OPEN' AND defense_accept IS NULL`, id, d.Accept, d.Justification, ms(d.At))
	if err != nil {
		return false, fmt.Errorf("dispute defense: %w", err)
	}
	return n == 1, nil
}

// CloseDispute records d, an OPEN dispute, as CLOSED with its outcome, what
// it returned and blocks, and the PSP's return id.
func (tx *Tx) CloseDispute(ctx context.Context, d pix.Dispute) error {
	var closed int64
	if d.ClosedAt != nil {
		closed = ms(*d.ClosedAt)
	}
	return tx.updateOne(ctx, `UPDATE disputes SET status = 'CLOSED', outcome = $2, returned_amount = $3, blocked = $4, return_id = $5,
		closed_at = $6 WHERE id = $1 AND status = 'OPEN'`, d.ID, string(d.Outcome), int64(d.ReturnedAmount), int64(d.Blocked), d.ReturnID, closed)
}

// OpenDisputes counts the OPEN disputes of every client (a gauge).
func (q *Q) OpenDisputes(ctx context.Context) (int, error) {
	var n int
	if err := q.q.QueryRowContext(ctx, `SELECT COUNT(*) FROM disputes WHERE status = 'OPEN'`).Scan(&n); err != nil {
		return 0, fmt.Errorf("open disputes: %w", err)
	}
	return n, nil
}

// DisputeFilter selects a page of one client's disputes, or of every
// client's for the back office's operators.
type DisputeFilter struct {
	ClientID string
	// AllClients asks for every client's disputes (ClientID must be ""):
	// an explicit field, so that an API list with an empty client id is
	// still refused rather than read as "every client".
	AllClients bool
	PaymentID  string            // the disputes of one charge, or "" for all
	Status     pix.DisputeStatus // or "" for any
	Cursor     string            // from a previous page's next cursor, or ""
	Limit      int
}

// DisputeHistory returns a page of a client's disputes (every client's
// with f.AllClients), newest first, and the cursor of the next page (""
// at the end), or ErrBadCursor, paged by key (opened_at, id) as
// RefundHistory is, on disputes_client_opened (disputes_opened for every
// client's).
func (q *Q) DisputeHistory(ctx context.Context, f DisputeFilter) ([]pix.Dispute, string, error) {
	switch {
	case f.AllClients && f.ClientID != "":
		return nil, "", errors.New("dispute history: both one client and every client asked for")
	case !f.AllClients && f.ClientID == "":
		return nil, "", errors.New("dispute history: no client: a list shows every client's rows only when asked to explicitly")
	}
	rows, next, err := keyPage(ctx, q, keyset[pix.Dispute]{table: "disputes", columns: disputeColumns, scan: scanDispute, at: "opened_at",
		key: func(d pix.Dispute) (time.Time, string) { return d.OpenedAt, d.ID }},
		[]filter{{"client_id", f.ClientID}, {"transaction_id", f.PaymentID}, {"status", string(f.Status)}}, f.Cursor, f.Limit)
	if err != nil {
		return nil, "", fmt.Errorf("dispute history: %w", err)
	}
	return rows, next, nil
}

// BalancesForUpdate returns client clientID's account balances, their rows
// locked until tx ends in account-id order (the order every posting takes
// them in, so no two transactions deadlock).
func (tx *Tx) BalancesForUpdate(ctx context.Context, clientID string) (ledger.Balances, error) {
	b, err := tx.balances(ctx, `SELECT kind, balance FROM accounts WHERE client_id = $1 ORDER BY id`+tx.d.ForUpdate, clientID)
	if err != nil {
		return nil, fmt.Errorf("balances: %w", err)
	}
	if len(b) == 0 {
		return nil, ErrNotFound
	}
	return b, nil
}
