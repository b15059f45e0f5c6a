package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"

	"github.com/pixgate/pixgate/internal/pix"
)

// MaxBodyBytes is the largest request body accepted (64 KiB).
const MaxBodyBytes = 64 << 10

// readJSON checks the Content-Type, reads at most MaxBodyBytes and decodes
// the body into dst, returning the raw body. Errors: 415, 413, or EInvalid
// (malformed JSON, wrong types) with the offending field in Details.
func readJSON(r *http.Request, dst any) ([]byte, error) {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "application/json" {
		return nil, errMediaType
	}
	if r.ContentLength > MaxBodyBytes {
		return nil, errTooLarge
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, MaxBodyBytes+1))
	if err != nil {
		return nil, pix.Errorf(pix.EInvalid, "Invalid request parameters")
	}
	if len(body) > MaxBodyBytes {
		return nil, errTooLarge
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(dst); err != nil {
		return nil, decodeError(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, invalid("", "must be a single JSON value")
	}
	return body, nil
}

func invalid(field, issue string) *pix.Error {
	e := &pix.Error{Code: pix.EInvalid, Message: "Invalid request parameters"}
	if issue != "" {
		e.Details = []pix.FieldIssue{{Field: field, Issue: issue}}
	}
	return e
}

func decodeError(err error) error {
	var typeErr *json.UnmarshalTypeError
	var syntaxErr *json.SyntaxError
	switch {
	case errors.As(err, &typeErr):
		field := typeErr.Field
		if field == "" {
			return invalid("", "body must be a JSON object")
		}
		return invalid(field, fmt.Sprintf("must be a %s", jsonKind(typeErr.Type.Kind().String())))
	case errors.As(err, &syntaxErr):
		return invalid("", "malformed JSON at offset "+strconv.FormatInt(syntaxErr.Offset, 10))
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return invalid("", "malformed JSON: body is empty or truncated")
	}
	return invalid("", "malformed JSON")
}

func jsonKind(goKind string) string {
	switch goKind {
	case "string":
		return "string"
	case "slice", "array":
		return "array"
	case "struct", "map", "ptr":
		return "object"
	}
	return goKind
}

// writeJSON writes v as the response body with the given status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status = http.StatusInternalServerError
		b = []byte(`{"statusCode":500,"message":"Internal server error","error":"Internal Server Error"}`)
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(status)
	_, _ = w.Write(b)
}
