package gateway

import (
	"github.com/pixgate/pixgate/internal/pix"
)

// Idempotency messages (docs/api.md, Idempotency). Each names the key that clashed, so a
// client that sent only the Idempotency-Key header is not told about an
// external_id it never sent.
const (
	MsgExternalIDMismatch       = "external_id already used with different parameters"
	MsgIdempotencyKeyMismatch   = "Idempotency-Key already used with different parameters"
	MsgExternalIDInProgress     = "A request with this external_id is in progress"
	MsgIdempotencyKeyInProgress = "A request with this Idempotency-Key is in progress"
)

// idemKey names the key by which an earlier request was found.
type idemKey int

const (
	byExternalID idemKey = iota
	byIdempotencyKey
)

// foundBy returns the key by which findPrevious found prev for a request
// that sent externalID: it looks up external_id first, so prev carries the
// request's external_id exactly when that key matched.
func foundBy(prev pix.Transaction, externalID string) idemKey {
	return foundByExternalID(prev.ExternalID, externalID)
}

// foundByExternalID is foundBy for any earlier row whose external_id is
// prevExternalID (a recurrence's as well as a transaction's).
func foundByExternalID(prevExternalID, externalID string) idemKey {
	if externalID != "" && prevExternalID == externalID {
		return byExternalID
	}
	return byIdempotencyKey
}

// mismatch is the 422 for a key reused with a different body.
func mismatch(by idemKey) *pix.Error {
	if by == byIdempotencyKey {
		return &pix.Error{Code: pix.EIdempotencyMismatch, Message: MsgIdempotencyKeyMismatch}
	}
	return &pix.Error{Code: pix.EIdempotencyMismatch, Message: MsgExternalIDMismatch}
}

// inProgress is the 409 for a duplicate whose earlier request has not
// committed yet.
func inProgress(by idemKey) *pix.Error {
	if by == byIdempotencyKey {
		return &pix.Error{Code: pix.EConflict, Message: MsgIdempotencyKeyInProgress}
	}
	return &pix.Error{Code: pix.EConflict, Message: MsgExternalIDInProgress}
}
