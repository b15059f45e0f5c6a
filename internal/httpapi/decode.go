package httpapi

import (
	"bytes"
	stdjson "encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"sync"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/pixgate/pixgate/internal/pix"
)

// MaxBodyBytes is the largest request body accepted (64 KiB).
const MaxBodyBytes = 64 << 10

// readJSON checks the Content-Type, reads at most MaxBodyBytes and decodes
// the body into dst, returning the raw body. Errors: 415, 413, or EInvalid
// with the offending field in Details (and, for the strict-reading rules, a
// message naming it that wallet endpoints show).
//
// The body is read strictly (docs/api.md, Input rules) so that pixgate never reads a
// different request than a proxy, WAF or signing layer in front of it:
// a member name that appears twice in one object, or that differs from a
// documented field name only by letter case, is refused; so is a string
// holding a NUL character or invalid UTF-8, which PostgreSQL cannot store.
// Unknown members are ignored. Amounts stay raw JSON text (json.RawMessage)
// and are parsed exactly by pix.ParseAmount, never through float64.
func readJSON(r *http.Request, dst any) ([]byte, error) {
	return readJSONUpTo(r, dst, MaxBodyBytes, errTooLarge)
}

// readJSONUpTo is readJSON with a body limit of its own, refused with
// tooLarge (a batch of payouts takes 1 MiB).
func readJSONUpTo(r *http.Request, dst any, limit int64, tooLarge error) ([]byte, error) {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "application/json" {
		return nil, errMediaType
	}
	if r.ContentLength > limit {
		return nil, tooLarge
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, limit+1))
	if err != nil {
		return nil, pix.Errorf(pix.EInvalid, "Invalid request parameters")
	}
	if int64(len(body)) > limit {
		return nil, tooLarge
	}
	if err := decodeStrict(body, dst); err != nil {
		return nil, err
	}
	return body, nil
}

// readOptionalJSON is readJSON for an endpoint whose body is optional: a
// request with no body, or one of white space only, leaves dst as it is and
// reports false, whatever its Content-Type; any other body is read as
// readJSON reads it.
func readOptionalJSON(r *http.Request, dst any) (bool, error) {
	body, err := readOptionalBody(r, dst)
	return body != nil, err
}

// readOptionalBody is readOptionalJSON that also returns the body read
// (nil when there was none).
func readOptionalBody(r *http.Request, dst any) ([]byte, error) {
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
	if len(bytes.TrimSpace(body)) == 0 {
		return nil, nil
	}
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		return nil, errMediaType
	}
	return body, decodeStrict(body, dst)
}

// decodeStrict checks body against the strict-reading rules for dst's type,
// then decodes it into dst, matching member names case-sensitively.
func decodeStrict(body []byte, dst any) error {
	t := reflect.TypeOf(dst)
	if err := checkBody(body, fieldsOf(t)); err != nil {
		return err
	}
	if err := json.Unmarshal(body, dst); err != nil {
		return unmarshalError(err, t)
	}
	return nil
}

// invalid is a 400 naming field (or the whole body when field is "").
func invalid(field, issue string) *pix.Error {
	e := &pix.Error{Code: pix.EInvalid, Message: "Invalid request parameters"}
	if issue != "" {
		e.Details = []pix.FieldIssue{{Field: field, Issue: issue}}
	}
	return e
}

// strictIssue is a 400 for a broken strict-reading rule: gateway endpoints
// show issue in details, wallet endpoints (whose body has no details) show
// walletMsg, which names the field too.
func strictIssue(field, issue, walletMsg string) *pix.Error {
	return &pix.Error{Code: pix.EInvalid, Message: walletMsg, Details: []pix.FieldIssue{{Field: field, Issue: issue}}}
}

// Issues of the strict-reading rules, shared by bodies, query parameters,
// path values and headers.
const (
	issueBadText   = "must be valid UTF-8 text without NUL characters"
	issueDuplicate = "appears more than once"
	issueBadName   = "has a member name that is not valid UTF-8 text without NUL characters"
)

// badTextError is the 400 for a text value or identifier holding a NUL
// character or invalid UTF-8.
func badTextError(field string) *pix.Error {
	return strictIssue(field, issueBadText, walletBadText(field))
}

// fieldSet holds the documented member names of one JSON object (a struct's
// json names) and, per name, the rules of the value below it.
type fieldSet struct {
	names  []string    // documented names
	fields []*fieldSet // the rules below each name (nil: none)
	elem   *fieldSet   // for arrays: the rules of each element
}

// member returns the documented name spelled exactly as name, with the
// rules below it. A linear scan: objects here have a handful of fields.
func (fs *fieldSet) member(name []byte) (string, *fieldSet, bool) {
	if fs == nil {
		return "", nil, false
	}
	for i, doc := range fs.names {
		if string(name) == doc {
			return doc, fs.fields[i], true
		}
	}
	return "", nil, false
}

var fieldSets sync.Map // reflect.Type → *fieldSet

// fieldsOf returns the documented names of t (a struct, a pointer to one,
// or a slice of them), computed once per type.
func fieldsOf(t reflect.Type) *fieldSet {
	if fs, ok := fieldSets.Load(t); ok {
		return fs.(*fieldSet)
	}
	fs := buildFields(t, map[reflect.Type]*fieldSet{})
	fieldSets.Store(t, fs)
	return fs
}

var rawMessageType = reflect.TypeFor[stdjson.RawMessage]()

func buildFields(t reflect.Type, seen map[reflect.Type]*fieldSet) *fieldSet {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == rawMessageType {
		return nil
	}
	if fs, ok := seen[t]; ok {
		return fs
	}
	switch t.Kind() {
	case reflect.Slice, reflect.Array:
		elem := buildFields(t.Elem(), seen)
		if elem == nil {
			return nil
		}
		return &fieldSet{elem: elem}
	case reflect.Struct:
		fs := &fieldSet{}
		seen[t] = fs
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "-" {
				continue
			}
			if name == "" {
				name = f.Name
			}
			fs.names = append(fs.names, name)
			fs.fields = append(fs.fields, buildFields(f.Type, seen))
		}
		return fs
	}
	return nil
}

// fieldError is a strict-reading violation found while walking the body;
// path is completed with the enclosing member names while unwinding.
type fieldError struct {
	path   string
	issue  string
	wallet func(field string) string // the message wallet endpoints show
}

func (e *fieldError) Error() string { return e.path + ": " + e.issue }

// within prefixes e's path with an object member name or an array index.
func (e *fieldError) within(seg string, index bool) *fieldError {
	switch {
	case index:
		e.path = "[" + seg + "]" + dotted(e.path)
	case e.path == "":
		e.path = seg
	default:
		e.path = seg + dotted(e.path)
	}
	return e
}

func dotted(p string) string {
	if p == "" || p[0] == '[' {
		return p
	}
	return "." + p
}

func (e *fieldError) pixError() *pix.Error {
	return strictIssue(e.path, e.issue, e.wallet(e.path))
}

// errInvalidUTF8 is the error jsontext reports for invalid UTF-8 (its own
// sentinel lives in an internal package, so it is captured once here).
var errInvalidUTF8 = func() error {
	_, err := jsontext.NewDecoder(strings.NewReader("\"\xff\"")).ReadValue()
	var se *jsontext.SyntacticError
	if errors.As(err, &se) {
		return se.Err
	}
	return err
}()

// bodyWalker walks a JSON text once with jsontext, which rejects duplicate
// names and invalid UTF-8 itself, checking names against the documented
// ones and every string for NUL.
type bodyWalker struct {
	dec *jsontext.Decoder
	rd  bytes.Reader
	buf []byte // scratch for unquoting escaped strings
}

// walkers reuse decoders (and their buffers) across requests: decoding is
// on the path of every payout.
var walkers = sync.Pool{New: func() any {
	w := &bodyWalker{}
	w.dec = jsontext.NewDecoder(&w.rd)
	return w
}}

// checkBody applies the strict-reading rules to body; fs holds the
// documented names of the top-level object.
func checkBody(body []byte, fs *fieldSet) error {
	w := walkers.Get().(*bodyWalker)
	defer walkers.Put(w)
	w.rd.Reset(body)
	w.dec.Reset(&w.rd)
	defer w.rd.Reset(nil) // drop the reference to body
	switch w.dec.PeekKind() {
	case '{', 'n':
	case 0:
		_, err := w.dec.ReadValue()
		return syntaxError(err)
	default:
		return invalid("", "body must be a JSON object")
	}
	if err := w.value(fs); err != nil {
		var fe *fieldError
		if errors.As(err, &fe) {
			return fe.pixError()
		}
		return syntaxError(err)
	}
	if _, err := w.dec.ReadToken(); !errors.Is(err, io.EOF) {
		if err == nil {
			return invalid("", "must be a single JSON value")
		}
		return syntaxError(err)
	}
	return nil
}

// value walks the next JSON value, whose object members (if any) follow fs.
func (w *bodyWalker) value(fs *fieldSet) error {
	switch w.dec.PeekKind() {
	case '{':
		if _, err := w.dec.ReadToken(); err != nil {
			return err
		}
		for w.dec.PeekKind() != '}' {
			raw, err := w.dec.ReadValue()
			if err != nil {
				return w.nameError(err)
			}
			name, bad := w.text(raw)
			if bad {
				return &fieldError{issue: issueBadName, wallet: walletBadName}
			}
			// key outlives the decoder's buffer, which name points into.
			key, child, known := fs.member(name)
			if !known {
				key = string(name)
				if fs != nil {
					for _, doc := range fs.names {
						if strings.EqualFold(key, doc) {
							return &fieldError{path: doc,
								issue:  fmt.Sprintf("is spelled %q: member names are case-sensitive", key),
								wallet: func(field string) string { return walletCase(field, key) }}
						}
					}
				}
			}
			if err := w.value(child); err != nil {
				var fe *fieldError
				if errors.As(err, &fe) {
					return fe.within(key, false)
				}
				return err
			}
		}
		_, err := w.dec.ReadToken()
		return err
	case '[':
		if _, err := w.dec.ReadToken(); err != nil {
			return err
		}
		var elem *fieldSet
		if fs != nil {
			elem = fs.elem
		}
		for i := 0; w.dec.PeekKind() != ']'; i++ {
			if err := w.value(elem); err != nil {
				var fe *fieldError
				if errors.As(err, &fe) {
					return fe.within(strconv.Itoa(i), true)
				}
				return err
			}
		}
		_, err := w.dec.ReadToken()
		return err
	case '"':
		raw, err := w.dec.ReadValue()
		if err != nil {
			if errors.Is(err, errInvalidUTF8) {
				return &fieldError{issue: issueBadText, wallet: walletBadText}
			}
			return err
		}
		if _, bad := w.text(raw); bad {
			return &fieldError{issue: issueBadText, wallet: walletBadText}
		}
		return nil
	default:
		_, err := w.dec.ReadValue()
		return err
	}
}

// nameError turns a failure to read a member name into a field error when
// it breaks a strict-reading rule.
func (w *bodyWalker) nameError(err error) error {
	var se *jsontext.SyntacticError
	switch {
	case errors.Is(err, jsontext.ErrDuplicateName) && errors.As(err, &se):
		return &fieldError{path: se.JSONPointer.LastToken(), issue: issueDuplicate, wallet: walletDuplicate}
	case errors.Is(err, errInvalidUTF8):
		return &fieldError{issue: issueBadName, wallet: walletBadName}
	}
	return err
}

// text returns the unquoted content of the JSON string raw (valid until the
// next call) and whether it holds a NUL character. jsontext has already
// refused invalid UTF-8 and raw control characters, so a NUL can only come
// from a \u0000 escape.
func (w *bodyWalker) text(raw jsontext.Value) ([]byte, bool) {
	if bytes.IndexByte(raw, '\\') < 0 {
		return raw[1 : len(raw)-1], false
	}
	var err error
	w.buf, err = jsontext.AppendUnquote(w.buf[:0], raw)
	if err != nil {
		return nil, true
	}
	return w.buf, bytes.IndexByte(w.buf, 0) >= 0
}

func walletDuplicate(field string) string {
	return fmt.Sprintf("Invalid request parameters: field '%s' appears more than once in the request body.", field)
}

func walletCase(field, sent string) string {
	return fmt.Sprintf("Invalid request parameters: field '%s' was sent as '%s'; field names are case-sensitive.", field, sent)
}

func walletBadText(field string) string {
	return fmt.Sprintf("Invalid request parameters: '%s' must be valid UTF-8 text without NUL characters.", field)
}

func walletBadName(field string) string {
	if field == "" {
		return "Invalid request parameters: the request body has a field name that is not valid UTF-8 text."
	}
	return fmt.Sprintf("Invalid request parameters: object '%s' has a field name that is not valid UTF-8 text.", field)
}

// syntaxError maps a jsontext read error to the malformed-JSON 400.
func syntaxError(err error) error {
	var se *jsontext.SyntacticError
	switch {
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return invalid("", "malformed JSON: body is empty or truncated")
	case errors.As(err, &se):
		return invalid("", "malformed JSON at offset "+strconv.FormatInt(se.ByteOffset, 10))
	}
	return invalid("", "malformed JSON")
}

// unmarshalError maps a decoding error (a JSON value of the wrong type for
// its field) to a 400 naming the field as the validation errors do
// (payer.name, products[0].price).
func unmarshalError(err error, t reflect.Type) error {
	var se *json.SemanticError
	if !errors.As(err, &se) {
		return invalid("", "malformed JSON")
	}
	field := fieldPath(t, se.JSONPointer)
	if field == "" {
		return invalid("", "body must be a JSON object")
	}
	kind := "value of another type"
	if se.GoType != nil {
		kind = jsonKind(se.GoType.Kind())
	}
	return invalid(field, "must be "+kind)
}

// fieldPath spells a JSON pointer into dst's type as a field path, with
// array indexes in brackets.
func fieldPath(t reflect.Type, p jsontext.Pointer) string {
	var b strings.Builder
	for tok := range p.Tokens() {
		for t != nil && t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		if t != nil && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) {
			b.WriteString("[" + tok + "]")
			t = t.Elem()
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(tok)
		var next reflect.Type
		if t != nil && t.Kind() == reflect.Struct {
			for i := range t.NumField() {
				f := t.Field(i)
				name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
				if name == "" {
					name = f.Name
				}
				if name == tok {
					next = f.Type
					break
				}
			}
		}
		t = next
	}
	return b.String()
}

func jsonKind(k reflect.Kind) string {
	switch k {
	case reflect.String:
		return "a string"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Struct, reflect.Map, reflect.Pointer:
		return "an object"
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64:
		return "a number"
	}
	return "a value of another type"
}

// writeJSON writes v as the response body with the given status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := stdjson.Marshal(v)
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
