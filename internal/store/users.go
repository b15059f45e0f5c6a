package store

import (
	"context"
	"fmt"
)

// ResetUserPassword replaces the password hash of the user with the given id
// and deletes every session of that user, so that a browser logged in with
// the old password is logged out at once; it returns how many sessions it
// ended. Returns ErrNotFound when there is no such user.
func (tx *Tx) ResetUserPassword(ctx context.Context, id, passwordHash string) (sessions int64, err error) {
	res, err := tx.exec(ctx, `UPDATE users SET password_hash = $2 WHERE id = $1`, id, passwordHash)
	if err != nil {
		return 0, fmt.Errorf("reset user password: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return 0, fmt.Errorf("reset user password: %w", err)
	} else if n == 0 {
		return 0, ErrNotFound
	}
	res, err = tx.exec(ctx, `DELETE FROM sessions WHERE user_id = $1`, id)
	if err != nil {
		return 0, fmt.Errorf("end user sessions: %w", err)
	}
	return res.RowsAffected()
}
