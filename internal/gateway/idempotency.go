package gateway

import (
	"fmt"

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

// Idempotent is how every Create* use case takes its input: the typed
// request, the Idempotency-Key it came with ("" when none) and the digest
// of its JSON value (pix.RequestHash), which idempotency compares. No use
// case reads the request's raw body.
type Idempotent[T any] struct {
	Req  *T
	Key  string
	Hash string
}

// Keyed is the Idempotent of request r, sent with key and whose JSON body
// was body; a body that is not JSON leaves Hash empty, which the use case
// refuses (400) once it has checked the request.
func Keyed[T any](r *T, key string, body []byte) Idempotent[T] {
	hash, err := pix.RequestHash(requestKind(r), body)
	if err != nil {
		hash = ""
	}
	return Idempotent[T]{Req: r, Key: key, Hash: hash}
}

// requestKind scopes a request's digest by the endpoint it was sent to,
// so equal bodies sent to different endpoints never match.
func requestKind(r any) string {
	switch r.(type) {
	case *ChargeRequest:
		return "charge"
	case *PayoutRequest:
		return "payout"
	case *RefundRequest:
		return "refund"
	case *pix.RecurrenceRequest:
		return "recurrence"
	}
	panic(fmt.Sprintf("gateway: %T is no Create* request", r))
}

// invalidBody is the 400 of a request whose body had no digest.
func invalidBody() error { return pix.Errorf(pix.EInvalid, "Invalid request parameters") }
