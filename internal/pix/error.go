// Package pix is the domain core of pixgate: money, identifiers, document and
// PIX key validation, statuses and the domain error type. It performs no I/O
// and imports no other package of this module.
package pix

import (
	"errors"
	"fmt"
)

// Code classifies a domain error; the HTTP layer maps each code to a status
// and to the error body of the endpoint family (docs/api.md), in one table.
type Code string

// Error codes. Every error a use case returns to a client carries one.
const (
	EInvalid             Code = "invalid"              // 400 Invalid request parameters
	EInvalidKey          Code = "invalid_key"          // 400 Invalid key format
	EUnauthorized        Code = "unauthorized"         // 401
	ENotFound            Code = "not_found"            // 404
	EConflict            Code = "conflict"             // 409 concurrent duplicate in progress
	EUnprocessable       Code = "unprocessable"        // 422 business rule refused
	EInsufficientBalance Code = "insufficient_balance" // 422 Insufficient balance
	EIdempotencyMismatch Code = "idempotency_mismatch" // 422 external_id reused with another body
	ERateLimited         Code = "rate_limited"         // 429
	EProviderUnavailable Code = "provider_unavailable" // 502 the PSP failed
	EInternal            Code = "internal"             // 500
)

// FieldIssue names one invalid request field and what is wrong with it.
type FieldIssue struct {
	Field string `json:"field"`
	Issue string `json:"issue"`
}

// Error is the one error type that crosses from the domain to the API.
type Error struct {
	Code    Code
	Message string
	Details []FieldIssue
}

// Error implements the error interface.
func (e *Error) Error() string {
	if len(e.Details) > 0 {
		return fmt.Sprintf("pix %s: %s (%s: %s)", e.Code, e.Message, e.Details[0].Field, e.Details[0].Issue)
	}
	return fmt.Sprintf("pix %s: %s", e.Code, e.Message)
}

// Errorf returns an *Error with the given code and formatted message.
func Errorf(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// ErrorCode returns the code of the first *Error in err's chain, or EInternal.
func ErrorCode(err error) Code {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return EInternal
}

// AsError returns the first *Error in err's chain, or nil.
func AsError(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return nil
}
