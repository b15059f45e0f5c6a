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

// Roles of administration panel users.
const (
	RoleOperator = "operator" // sees and manages every client
	RoleMerchant = "merchant" // sees only its own client
)

// User is a person who logs in to the administration panel.
type User struct {
	ID           string
	Email        string // lower case, unique
	PasswordHash string // bcrypt; the password itself is never stored
	Role         string
	ClientID     string // merchant users: their client; "" for operators
	CreatedAt    time.Time
}

const userColumns = `id, email, password_hash, role, client_id, created_at`

func scanUser(row scanner) (User, error) {
	var u User
	var client sql.NullString
	var created int64
	err := row.Scan(&u.ID, &u.Email, &u.PasswordHash, &u.Role, &client, &created)
	if errors.Is(err, sql.ErrNoRows) {
		return User{}, ErrNotFound
	}
	if err != nil {
		return User{}, fmt.Errorf("scan user: %w", err)
	}
	u.ClientID, u.CreatedAt = client.String, fromMS(created)
	return u, nil
}

// InsertUser stores a new user. Returns ErrConflict if the id or the e-mail
// exists.
func (tx *Tx) InsertUser(ctx context.Context, u User) error {
	_, err := tx.exec(ctx, `INSERT INTO users (`+userColumns+`) VALUES ($1,$2,$3,$4,$5,$6)`,
		u.ID, u.Email, u.PasswordHash, u.Role, nullString(u.ClientID), ms(u.CreatedAt))
	if err != nil {
		return fmt.Errorf("insert user: %w", err)
	}
	return nil
}

// User returns the user with the given id, or ErrNotFound.
func (q *Q) User(ctx context.Context, id string) (User, error) {
	return scanUser(q.q.QueryRowContext(ctx, `SELECT `+userColumns+` FROM users WHERE id = $1`, id))
}

// UserByEmail returns the user with the given (lower-case) e-mail, or ErrNotFound.
func (q *Q) UserByEmail(ctx context.Context, email string) (User, error) {
	return scanUser(q.q.QueryRowContext(ctx, `SELECT `+userColumns+` FROM users WHERE email = $1`, email))
}

// Users lists every user, oldest first.
func (q *Q) Users(ctx context.Context) ([]User, error) {
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

// Session is a logged-in browser. ID is the hex SHA-256 of the token the
// browser holds; CSRFToken is echoed by every form of the session.
type Session struct {
	ID        string
	UserID    string
	CSRFToken string
	CreatedAt time.Time
	ExpiresAt time.Time
}

// InsertSession stores a new session. Returns ErrConflict if the id exists.
func (tx *Tx) InsertSession(ctx context.Context, s Session) error {
	_, err := tx.exec(ctx, `INSERT INTO sessions (id, user_id, csrf_token, created_at, expires_at) VALUES ($1,$2,$3,$4,$5)`,
		s.ID, s.UserID, s.CSRFToken, ms(s.CreatedAt), ms(s.ExpiresAt))
	if err != nil {
		return fmt.Errorf("insert session: %w", err)
	}
	return nil
}

// SessionUser returns the session with the given id and its user, or
// ErrNotFound when there is none or it expired at or before now.
func (q *Q) SessionUser(ctx context.Context, id string, now time.Time) (Session, User, error) {
	var s Session
	var u User
	var client sql.NullString
	var sCreated, sExpires, uCreated int64
	err := q.q.QueryRowContext(ctx, `SELECT s.id, s.user_id, s.csrf_token, s.created_at, s.expires_at,
		u.id, u.email, u.password_hash, u.role, u.client_id, u.created_at
		FROM sessions s JOIN users u ON u.id = s.user_id WHERE s.id = $1 AND s.expires_at > $2`, id, ms(now)).
		Scan(&s.ID, &s.UserID, &s.CSRFToken, &sCreated, &sExpires, &u.ID, &u.Email, &u.PasswordHash, &u.Role, &client, &uCreated)
	if errors.Is(err, sql.ErrNoRows) {
		return Session{}, User{}, ErrNotFound
	}
	if err != nil {
		return Session{}, User{}, fmt.Errorf("session: %w", err)
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

// Activity summarizes the transactions of a period.
type Activity struct {
	// Counts holds the transactions created in the period, by type and status.
	Counts map[string]map[string]int64
	// CashinVolume and CashoutVolume sum the amounts of the charges paid and
	// the payouts completed in the period; CashinPaid and CashoutPaid count them.
	CashinVolume, CashoutVolume pix.Amount
	CashinPaid, CashoutPaid     int64
}

// Activity summarizes the transactions of the period [from, to) of one
// client, or of every client when clientID is "".
func (q *Q) Activity(ctx context.Context, clientID string, from, to time.Time) (Activity, error) {
	var a Activity
	var err error
	a.Counts, err = q.countByTypeStatus(ctx, `SELECT type, status, COUNT(*) FROM transactions
		WHERE created_at >= $2 AND created_at < $3 AND ($1 = '' OR client_id = $1) GROUP BY type, status`, clientID, ms(from), ms(to))
	if err != nil {
		return a, fmt.Errorf("activity: %w", err)
	}
	rows, err := q.q.QueryContext(ctx, `SELECT type, COUNT(*), COALESCE(SUM(amount), 0) FROM transactions
		WHERE confirmed_at >= $2 AND confirmed_at < $3 AND ($1 = '' OR client_id = $1) GROUP BY type`, clientID, ms(from), ms(to))
	if err != nil {
		return a, fmt.Errorf("activity: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var typ string
		var n, sum int64
		if err := rows.Scan(&typ, &n, &sum); err != nil {
			return a, fmt.Errorf("activity: %w", err)
		}
		switch typ {
		case TypeCashin:
			a.CashinPaid, a.CashinVolume = n, pix.Amount(sum)
		case TypeCashout:
			a.CashoutPaid, a.CashoutVolume = n, pix.Amount(sum)
		}
	}
	if err := rows.Err(); err != nil {
		return a, fmt.Errorf("activity: %w", err)
	}
	return a, nil
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
func (q *Q) FailingEvents(ctx context.Context, clientID string, limit int) ([]Event, error) {
	out, err := selectAll(ctx, q, scanEvent, `SELECT `+eventColumns+` FROM events
		WHERE (status = 'failed' OR (status = 'pending' AND attempts > 0)) AND ($1 = '' OR client_id = $1)
		ORDER BY created_at DESC, id DESC LIMIT $2`, clientID, limit)
	if err != nil {
		return nil, fmt.Errorf("failing events: %w", err)
	}
	return out, nil
}
