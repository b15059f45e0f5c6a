package gateway

import (
	"fmt"

	"github.com/pixgate/pixgate/internal/account"
	"github.com/pixgate/pixgate/internal/pix"
)

// Idempotent is how every Create* use case takes its input (pix.Idempotent).
type Idempotent[T any] = pix.Idempotent[T]

// Keyed is the Idempotent of request r, sent with key and whose JSON body
// was body, its digest scoped by the endpoint r is sent to (pix.Keyed).
func Keyed[T any](r *T, key string, body []byte) Idempotent[T] {
	return pix.Keyed(requestKind(r), r, key, body)
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
	case *account.CreateRequest:
		return "account"
	case *account.TransferRequest:
		return "transfer"
	case *BatchRequest:
		return "batch"
	}
	panic(fmt.Sprintf("gateway: %T is no Create* request", r))
}

// foundBy reports whether findPrevious found prev by the external_id a
// request sent (else by its Idempotency-Key).
func foundBy(prev pix.Transaction, externalID string) bool {
	return pix.ByExternalID(prev.ExternalID, externalID)
}
