package pix

// Idempotency messages (docs/api.md, Idempotency). Each names the key that
// clashed, so a client that sent only the Idempotency-Key header is not
// told about an external_id it never sent.
const (
	MsgExternalIDMismatch       = "external_id already used with different parameters"
	MsgIdempotencyKeyMismatch   = "Idempotency-Key already used with different parameters"
	MsgExternalIDInProgress     = "A request with this external_id is in progress"
	MsgIdempotencyKeyInProgress = "A request with this Idempotency-Key is in progress"
)

// Idempotent is how every Create* use case takes its input: the typed
// request, the Idempotency-Key it came with ("" when none) and the digest
// of its JSON value (RequestHash), which idempotency compares. No use case
// reads the request's raw body.
type Idempotent[T any] struct {
	Req  *T
	Key  string
	Hash string
}

// Keyed is the Idempotent of request r of the given kind (the endpoint's
// name, which scopes the digest), sent with key and whose JSON body was
// body; a body that is not JSON leaves Hash empty, which the use case
// refuses (400) once it has checked the request.
func Keyed[T any](kind string, r *T, key string, body []byte) Idempotent[T] {
	hash, err := RequestHash(kind, body)
	if err != nil {
		hash = ""
	}
	return Idempotent[T]{Req: r, Key: key, Hash: hash}
}

// ValidIdempotencyKey reports whether an Idempotency-Key header value is
// acceptable: 1–255 visible ASCII characters.
func ValidIdempotencyKey(k string) bool {
	if k == "" || len(k) > 255 {
		return false
	}
	for i := 0; i < len(k); i++ {
		if k[i] < 0x21 || k[i] > 0x7e {
			return false
		}
	}
	return true
}

// ByExternalID reports whether an earlier row whose external_id is
// prevExternalID was found by the external_id a request sent (externalID)
// rather than by its Idempotency-Key: lookups try external_id first, so
// the row carries the request's external_id exactly when that key matched.
func ByExternalID(prevExternalID, externalID string) bool {
	return externalID != "" && prevExternalID == externalID
}

// Mismatch is the 422 for a key reused with a different body; byExternalID
// says which key matched (ByExternalID).
func Mismatch(byExternalID bool) *Error {
	if byExternalID {
		return &Error{Code: EIdempotencyMismatch, Message: MsgExternalIDMismatch}
	}
	return &Error{Code: EIdempotencyMismatch, Message: MsgIdempotencyKeyMismatch}
}

// InProgress is the 409 for a duplicate whose earlier request has not
// committed yet; byExternalID says which key matched.
func InProgress(byExternalID bool) *Error {
	if byExternalID {
		return &Error{Code: EConflict, Message: MsgExternalIDInProgress}
	}
	return &Error{Code: EConflict, Message: MsgIdempotencyKeyInProgress}
}

// InvalidBody is the 400 of a request whose body had no digest.
func InvalidBody() error { return Errorf(EInvalid, "Invalid request parameters") }

// CanonicalID reports whether id is a lower-case UUID (8-4-4-4-12 hex
// digits), the form of every id pixgate gives: anything else names
// nothing, and is answered without reaching the database (which refuses
// some bytes).
func CanonicalID(id string) bool {
	if len(id) != 36 {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		switch {
		case i == 8 || i == 13 || i == 18 || i == 23:
			if c != '-' {
				return false
			}
		case '0' <= c && c <= '9', 'a' <= c && c <= 'f':
		default:
			return false
		}
	}
	return true
}
