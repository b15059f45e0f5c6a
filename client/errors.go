package client

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// Error is every error answer of the API (any status of 400 or more). Test
// it with errors.As or with the Is… helpers. Failures that never reached an
// answer (network errors, a cancelled context) are returned as they are,
// except that a creation whose outcome they leave unknown wraps the last
// failure, *Error or not, in a *RetryError.
type Error struct {
	// StatusCode is the HTTP status (the body's statusCode).
	StatusCode int
	// Message is the body's message: "Insufficient balance",
	// "Transação não encontrada.", …
	Message string
	// Err is the body's error, the HTTP status text ("Not Found"); wallet
	// endpoints leave it empty.
	Err string
	// RetryAfter is the wait the server asked for (429), from Retry-After.
	RetryAfter time.Duration
	// Details are the field-level issues of a validation error.
	Details []ErrorDetail
	// Response holds the headers of the answer: request id, rate limit, and
	// how many attempts were made.
	Response Response
}

// RetryError is the error of a creation (CreateCharge, CreatePayout,
// CreateRefund, CreateRecurrence) whose outcome is unknown: its last
// attempt failed in a way worth retrying (no answer, a 5xx, a 409 "in
// progress", a 429) and the retries ran out or the context ended. The server may or may not have
// created the transaction. Calling again with Key as the request's
// IdempotencyKey (and the same body) is safe: the server replays the
// transaction if it exists and creates it once if it does not. Calling
// again with another key may create it twice.
//
// Err is the last failure: an *Error for an answer (AsError finds it
// through RetryError), otherwise a network or context error (errors.Is
// finds context.Canceled and context.DeadlineExceeded through it).
type RetryError struct {
	// Key is the Idempotency-Key every attempt carried: the request's
	// IdempotencyKey, or the one generated when it had none.
	Key string
	// Attempts is how many HTTP attempts were made.
	Attempts int
	// Err is the last failure.
	Err error

	op string // method and path, for the message
}

func (e *RetryError) Error() string {
	return fmt.Sprintf("pixgate: %s: outcome unknown after %d attempt(s); repeat it with Idempotency-Key %s: %v",
		e.op, e.Attempts, e.Key, e.Err)
}

// Unwrap returns the last failure.
func (e *RetryError) Unwrap() error { return e.Err }

// AsRetryError returns the *RetryError in err's chain, or nil.
func AsRetryError(err error) *RetryError {
	var e *RetryError
	if errors.As(err, &e) {
		return e
	}
	return nil
}

// ErrorDetail is one entry of an error's details.
type ErrorDetail struct {
	Field string `json:"field"`
	Issue string `json:"issue"`
}

func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "pixgate: %d", e.StatusCode)
	if e.Err != "" {
		b.WriteString(" " + e.Err)
	}
	if e.Message != "" {
		b.WriteString(": " + e.Message)
	}
	for _, d := range e.Details {
		fmt.Fprintf(&b, "; %s: %s", d.Field, d.Issue)
	}
	if e.RetryAfter > 0 {
		fmt.Fprintf(&b, " (retry after %s)", e.RetryAfter)
	}
	return b.String()
}

// AsError returns the *Error in err's chain, or nil.
func AsError(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return nil
}

func hasStatus(err error, status int) bool {
	e := AsError(err)
	return e != nil && e.StatusCode == status
}

// IsNotFound reports whether err is a 404 answer.
func IsNotFound(err error) bool { return hasStatus(err, http.StatusNotFound) }

// IsUnauthorized reports whether err is a 401 answer (bad credentials).
func IsUnauthorized(err error) bool { return hasStatus(err, http.StatusUnauthorized) }

// IsRateLimited reports whether err is a 429 answer; its RetryAfter says
// how long to wait.
func IsRateLimited(err error) bool { return hasStatus(err, http.StatusTooManyRequests) }

// IsBadRequest reports whether err is a 400 answer (invalid parameters).
func IsBadRequest(err error) bool { return hasStatus(err, http.StatusBadRequest) }

// IsConflict reports whether err is a 409 answer: a request with the same
// external_id or Idempotency-Key is still in progress.
func IsConflict(err error) bool { return hasStatus(err, http.StatusConflict) }

// IsInsufficientBalance reports whether err is the 422 "Insufficient
// balance" of a payout or refund.
func IsInsufficientBalance(err error) bool {
	e := AsError(err)
	return e != nil && e.StatusCode == http.StatusUnprocessableEntity && e.Message == "Insufficient balance"
}

// IsIdempotencyMismatch reports whether err is the 422 answer to an
// external_id or Idempotency-Key already used with a different body.
func IsIdempotencyMismatch(err error) bool {
	e := AsError(err)
	return e != nil && e.StatusCode == http.StatusUnprocessableEntity &&
		strings.HasSuffix(e.Message, "already used with different parameters")
}
