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

const userColumns = `id, email, password_hash, role, client_id, created_at`

func scanUser(row scanner) (pix.User, error) {
	var u pix.User
	var client sql.NullString
	var created int64
	err := row.Scan(&u.ID, &u.Email, &u.PasswordHash, &u.Role, &client, &created)
	if errors.Is(err, sql.ErrNoRows) {
		return pix.User{}, ErrNotFound
	}
	if err != nil {
		return pix.User{}, fmt.Errorf("scan user: %w", err)
	}
	u.ClientID, u.CreatedAt = client.String, fromMS(created)
	return u, nil
}

// InsertUser stores a new user. Returns ErrConflict if the id or the e-mail
// exists.
func (tx *Tx) InsertUser(ctx context.Context, u pix.User) error {
	_, err := tx.exec(ctx, `INSERT INTO users (`+userColumns+`) VALUES ($1,$2,$3,$4,$5,$6)`,
		u.ID, u.Email, u.PasswordHash, u.Role, nullString(u.ClientID), ms(u.CreatedAt))
	if err != nil {
		return fmt.Errorf("insert user: %w", err)
	}
	return nil
}

// User returns the user with the given id, or ErrNotFound.
func (q *Q) User(ctx context.Context, id string) (pix.User, error) {
	return scanUser(q.q.QueryRowContext(ctx, `SELECT `+userColumns+` FROM users WHERE id = $1`, id))
}

// UserByEmail returns the user with the given (lower-case) e-mail, or ErrNotFound.
func (q *Q) UserByEmail(ctx context.Context, email string) (pix.User, error) {
	return scanUser(q.q.QueryRowContext(ctx, `SELECT `+userColumns+` FROM users WHERE email = $1`, email))
}

// Users lists every user, oldest first.
func (q *Q) Users(ctx context.Context) ([]pix.User, error) {
	out, err := selectAll(ctx, q, scanUser, `SELECT `+userColumns+` FROM users ORDER BY created_at, id`)
	if err != nil {
		return nil, fmt.Errorf("list users: %w", err)
	}
	return out, nil
}

// CountUsers returns how many users exist.
func (q *Q) CountUsers(ctx context.Context) (int, error) {
	var n int
	if err := q.q.QueryRowContext(ctx, `SELECT COUNT(*) FROM users`).Scan(&n); err != nil {
		return 0, fmt.Errorf("count users: %w", err)
	}
	return n, nil
}

// InsertSession stores a new session. Returns ErrConflict if the id exists.
func (tx *Tx) InsertSession(ctx context.Context, s pix.Session) error {
	_, err := tx.exec(ctx, `INSERT INTO sessions (id, user_id, csrf_token, created_at, expires_at) VALUES ($1,$2,$3,$4,$5)`,
		s.ID, s.UserID, s.CSRFToken, ms(s.CreatedAt), ms(s.ExpiresAt))
	if err != nil {
		return fmt.Errorf("insert session: %w", err)
	}
	return nil
}

// SessionUser returns the session with the given id and its user, or
// ErrNotFound when there is none, it expired at or before now, or its user
// is a merchant user whose client is no longer active: a disabled client's
// users lose the panel at once, as its credentials lose the API, and the
// check costs no second query on every request.
func (q *Q) SessionUser(ctx context.Context, id string, now time.Time) (pix.Session, pix.User, error) {
	var s pix.Session
	var u pix.User
	var client sql.NullString
	var sCreated, sExpires, uCreated int64
	err := q.q.QueryRowContext(ctx, `SELECT s.id, s.user_id, s.csrf_token, s.created_at, s.expires_at,
		u.id, u.email, u.password_hash, u.role, u.client_id, u.created_at
		FROM sessions s JOIN users u ON u.id = s.user_id LEFT JOIN clients c ON c.id = u.client_id
		WHERE s.id = $1 AND s.expires_at > $2 AND (u.client_id IS NULL OR c.status = $3)`, id, ms(now), pix.ClientActive).
		Scan(&s.ID, &s.UserID, &s.CSRFToken, &sCreated, &sExpires, &u.ID, &u.Email, &u.PasswordHash, &u.Role, &client, &uCreated)
	if errors.Is(err, sql.ErrNoRows) {
		return pix.Session{}, pix.User{}, ErrNotFound
	}
	if err != nil {
		return pix.Session{}, pix.User{}, fmt.Errorf("session: %w", err)
	}
	s.CreatedAt, s.ExpiresAt = fromMS(sCreated), fromMS(sExpires)
	u.ClientID, u.CreatedAt = client.String, fromMS(uCreated)
	return s, u, nil
}

// DeleteSession ends a session; deleting a missing one is not an error.
func (tx *Tx) DeleteSession(ctx context.Context, id string) error {
	if _, err := tx.exec(ctx, `DELETE FROM sessions WHERE id = $1`, id); err != nil {
		return fmt.Errorf("delete session: %w", err)
	}
	return nil
}

// DeleteExpiredSessions removes the sessions expired at or before now and
// returns how many it removed.
func (tx *Tx) DeleteExpiredSessions(ctx context.Context, now time.Time) (int64, error) {
	res, err := tx.exec(ctx, `DELETE FROM sessions WHERE expires_at <= $1`, ms(now))
	if err != nil {
		return 0, fmt.Errorf("delete expired sessions: %w", err)
	}
	return res.RowsAffected()
}

// RecordLoginAttempt logs one login attempt for e-mail from ip at time at.
func (tx *Tx) RecordLoginAttempt(ctx context.Context, email, ip string, at time.Time) error {
	if _, err := tx.exec(ctx, `INSERT INTO login_attempts (email, ip, at) VALUES ($1,$2,$3)`, email, ip, ms(at)); err != nil {
		return fmt.Errorf("record login attempt: %w", err)
	}
	return nil
}

// LoginAttempts counts the attempts logged since since (inclusive): those of
// the pair (email, ip), and those from ip for any e-mail.
func (q *Q) LoginAttempts(ctx context.Context, email, ip string, since time.Time) (pair, fromIP int, err error) {
	err = q.q.QueryRowContext(ctx, `SELECT
		(SELECT COUNT(*) FROM login_attempts WHERE email = $1 AND ip = $2 AND at >= $3),
		(SELECT COUNT(*) FROM login_attempts WHERE ip = $2 AND at >= $3)`, email, ip, ms(since)).Scan(&pair, &fromIP)
	if err != nil {
		return 0, 0, fmt.Errorf("login attempts: %w", err)
	}
	return pair, fromIP, nil
}

// ClearLoginAttempts forgets the attempts of the pair (email, ip).
func (tx *Tx) ClearLoginAttempts(ctx context.Context, email, ip string) error {
	if _, err := tx.exec(ctx, `DELETE FROM login_attempts WHERE email = $1 AND ip = $2`, email, ip); err != nil {
		return fmt.Errorf("clear login attempts: %w", err)
	}
	return nil
}

// PruneLoginAttempts forgets the attempts older than before.
func (tx *Tx) PruneLoginAttempts(ctx context.Context, before time.Time) error {
	if _, err := tx.exec(ctx, `DELETE FROM login_attempts WHERE at < $1`, ms(before)); err != nil {
		return fmt.Errorf("prune login attempts: %w", err)
	}
	return nil
}

// SetClientFees replaces a client's fee rules. Returns ErrNotFound.
func (tx *Tx) SetClientFees(ctx context.Context, id string, cashin, payout pix.FeeRule) error {
	return tx.updateClient(ctx, `UPDATE clients SET cashin_fee_bp = $2, cashin_fee_fixed = $3, payout_fee_bp = $4, payout_fee_fixed = $5 WHERE id = $1`,
		id, cashin.PercentBP, int64(cashin.Fixed), payout.PercentBP, int64(payout.Fixed))
}

// Activity summarizes the transactions of the period [from, to) of one
// client, or of every client when clientID is "".
func (q *Q) Activity(ctx context.Context, clientID string, from, to time.Time) (pix.Activity, error) {
	var a pix.Activity
	var err error
	a.Counts, err = q.countByTypeStatus(ctx, `SELECT type, status, COUNT(*) FROM transactions
		WHERE created_at >= $2 AND created_at < $3 AND ($1 = '' OR client_id = $1) GROUP BY type, status`, clientID, ms(from), ms(to))
	if err != nil {
		return a, fmt.Errorf("activity: %w", err)
	}
	return a, nil
}

// Flows sums the ledger postings of the period [from, to) of one client, or
// of every client when clientID is "". Everything is read by one statement,
// so one snapshot on either database: the balances and the postings agree
// even while money moves. The closing balance is the current one minus what
// was posted since to, the opening one the closing minus what was posted in
// the period.
func (q *Q) Flows(ctx context.Context, clientID string, from, to time.Time) (pix.Flows, error) {
	// part: 0 = a posting in the period, 1 = a posting at or after to,
	// 2 = a current balance. paired: a completion and a return of the same
	// payout both in the period.
	rows, err := q.q.QueryContext(ctx, `SELECT part, posting_kind, account_kind, paired, COUNT(*), COALESCE(SUM(amount), 0) FROM (
		SELECT CASE WHEN p.created_at < $3 THEN 0 ELSE 1 END AS part, p.kind AS posting_kind, a.kind AS account_kind,
			CASE WHEN p.created_at < $3 AND p.kind IN ('cashout.completed', 'cashout.reversed') AND EXISTS (
				SELECT 1 FROM postings o WHERE o.transaction_id = p.transaction_id AND o.created_at >= $2 AND o.created_at < $3
				AND o.kind = CASE WHEN p.kind = 'cashout.completed' THEN 'cashout.reversed' ELSE 'cashout.completed' END)
			THEN 1 ELSE 0 END AS paired,
			e.amount AS amount
		FROM postings p JOIN entries e ON e.posting_id = p.id JOIN accounts a ON a.id = e.account_id
		WHERE p.created_at >= $2 AND ($1 = '' OR p.client_id = $1)
		UNION ALL
		SELECT 2, '', kind, 0, balance FROM accounts
		WHERE kind IN ('available', 'pending', 'blocked', 'debt') AND ($1 = '' OR client_id = $1)
	) x GROUP BY part, posting_kind, account_kind, paired`, clientID, ms(from), ms(to))
	if err != nil {
		return pix.Flows{}, fmt.Errorf("flows: %w", err)
	}
	defer rows.Close()
	var f pix.Flows
	var now, after, delta pix.Amount
	for rows.Next() {
		var part, paired int
		var kind, account string
		var n, sum int64
		if err := rows.Scan(&part, &kind, &account, &paired, &n, &sum); err != nil {
			return pix.Flows{}, fmt.Errorf("flows: %w", err)
		}
		amount := pix.Amount(sum)
		own := merchants(ledger.Kind(account))
		switch part {
		case 2:
			now += amount
		case 1:
			if own {
				after += amount
			}
		default:
			if own {
				delta += amount
			}
			addFlow(&f, kind, ledger.Kind(account), paired == 1, n, amount)
		}
	}
	if err := rows.Err(); err != nil {
		return pix.Flows{}, fmt.Errorf("flows: %w", err)
	}
	f.Closing = now - after
	f.Opening = f.Closing - delta
	return f, nil
}

// merchants reports whether an account of kind k is part of the
// merchant's whole balance that Flows opens and closes with: blocked money
// is still the merchant's, and a debt (≤ 0) is what it owes out of it.
func merchants(k ledger.Kind) bool {
	return k == ledger.Available || k == ledger.Pending || k == ledger.Blocked || k == ledger.Debt
}

// addFlow counts into f one group of entries of the period: the postings
// of one kind (paired or not) on one account kind. Money crossing the PIX
// network is the settlement side of each posting; fees are the fees
// account's; MED's moves inside the balance are their blocked or debt
// side; a transfer or a split between the accounts of a family, which no
// settlement sees, is its clearing side.
func addFlow(f *pix.Flows, kind string, account ledger.Kind, paired bool, n int64, amount pix.Amount) {
	switch {
	case account == ledger.Fees:
		f.Fees += amount
		return
	case account == ledger.Blocked && kind == "dispute.block":
		f.Blocked += amount
		return
	case account == ledger.Blocked && kind == "dispute.release":
		f.Released -= amount
		return
	case account == ledger.Debt && kind == "debt.payment":
		f.DebtPaid += amount
		return
	case account == ledger.Clearing && kind == "transfer.out":
		f.TransfersOut, f.TransferOutCount = f.TransfersOut+amount, f.TransferOutCount+n
		return
	case account == ledger.Clearing && kind == "transfer.in":
		f.TransfersIn, f.TransferInCount = f.TransfersIn-amount, f.TransferInCount+n
		return
	case account == ledger.Clearing && kind == "split.out":
		f.SplitsOut, f.SplitOutCount = f.SplitsOut+amount, f.SplitOutCount+n
		return
	case account == ledger.Clearing && kind == "split.in":
		f.SplitsIn, f.SplitInCount = f.SplitsIn-amount, f.SplitInCount+n
		return
	case account != ledger.Settlement:
		return
	}
	switch kind {
	case "cashin.paid":
		f.In, f.InCount = f.In-amount, f.InCount+n
	case "cashout.completed":
		if !paired {
			f.Out, f.OutCount = f.Out+amount, f.OutCount+n
		}
	case "cashout.reversed":
		if !paired {
			f.Returns, f.ReturnCount = f.Returns-amount, f.ReturnCount+n
		}
	case "refund.completed":
		f.Refunds, f.RefundCount = f.Refunds+amount, f.RefundCount+n
	case "med.return":
		f.MEDReturns, f.MEDReturnCount = f.MEDReturns+amount, f.MEDReturnCount+n
	}
}

// TotalBalances returns the balances of every client's accounts summed by kind.
func (q *Q) TotalBalances(ctx context.Context) (ledger.Balances, error) {
	b, err := q.balances(ctx, `SELECT kind, COALESCE(SUM(balance), 0) FROM accounts GROUP BY kind`)
	if err != nil {
		return nil, fmt.Errorf("total balances: %w", err)
	}
	return b, nil
}

// FailingEvents returns up to limit events whose delivery failed for good or
// is being retried after a failed attempt, newest first, of one client or of
// every client when clientID is "".
func (q *Q) FailingEvents(ctx context.Context, clientID string, limit int) ([]pix.Event, error) {
	out, err := selectAll(ctx, q, scanEvent, `SELECT `+eventColumns+` FROM events
		WHERE (status = 'failed' OR (status = 'pending' AND attempts > 0)) AND ($1 = '' OR client_id = $1)
		ORDER BY created_at DESC, id DESC LIMIT $2`, clientID, limit)
	if err != nil {
		return nil, fmt.Errorf("failing events: %w", err)
	}
	return out, nil
}
