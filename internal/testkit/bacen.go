package testkit

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"
)

// BACENOpenAPIEnv names the file of BACEN's API Pix OpenAPI (2.9.0) that the
// conformance checks read. The document is not part of the repository.
const BACENOpenAPIEnv = "PIXGATE_TEST_BACEN_OPENAPI"

// BACENSpecPath returns the path in PIXGATE_TEST_BACEN_OPENAPI. When it is
// unset the test is skipped, except in CI (CI=true), where it fails: there
// the conformance checks must run.
func BACENSpecPath(t testing.TB) string {
	t.Helper()
	p := os.Getenv(BACENOpenAPIEnv)
	if p == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal(BACENOpenAPIEnv + " is not set; CI requires the API Pix OpenAPI document")
		} else {
			t.Skip(BACENOpenAPIEnv + " is not set; skipping the API Pix conformance check")
		}
	}
	return p
}

// apiPixPrefix is where the API Pix lives on a PSP: its paths are the
// document's, under the major version.
const apiPixPrefix = "/v2"

// Conformance checks the exchanges of a PSP's API Pix against BACEN's
// OpenAPI: each request (parameters, body, a Bearer token) and the answer
// to it (a documented status, content type and body). It records every
// violation; Check reports them.
type Conformance struct {
	router routers.Router
	spec   *openapi3.T

	mu         sync.Mutex
	validated  int
	violations []Violation
}

// Violation is one exchange that does not match the document.
type Violation struct {
	Method, Path string
	Status       int
	// Request is true when the request broke the document, false when the
	// response did.
	Request bool
	Message string
}

func (v Violation) String() string {
	side := "response"
	if v.Request {
		side = "request"
	}
	return fmt.Sprintf("%s %s → %d: %s: %s", v.Method, v.Path, v.Status, side, v.Message)
}

// BACENValidator loads the document at BACENSpecPath (skipping the test
// when there is none) with the known slips of version 2.9.0 corrected in
// memory:
//
//   - the list of received Pix (GET /pix) carries its items in "pix", so
//     that property is required instead of "cobs";
//   - PUT /webhook/{chave} answers 200 with or without a body;
//   - an end-to-end id is 32 characters of [a-zA-Z0-9];
//   - DadosRecebedor (in every cobv answer) requires logradouro, cidade, uf
//     and cep of the cobv itself besides its recebedor's: only the
//     recebedor's are meant;
//   - Pix Automático's schemas: RecBase requires "idRec" and "retentativa"
//     even of a new recurrence's request (neither is the request's: the
//     PSP assigns idRec, and the policy is politicaRetentativa); DadosPagadorRec
//     requires ispbParticipante beside pagador instead of in it;
//     RecNotification requires a property named `atualizacao"` (a stray
//     quote); PixAutomatico's valor, a string, is also given the object
//     schemas of componentesValor, which no string matches; and the two
//     kinds of encerramento (rejeicao, cancelamento) of a recurrence and
//     of a cobr are a oneOf of objects that require nothing, which every
//     object matches twice: each requires its own property;
//   - a few patterns are written as JavaScript literals ("/^\d{11}$/", the
//     CPF), which no CPF matches as a regular expression: the slashes go.
func BACENValidator(t testing.TB) *Conformance {
	t.Helper()
	path := BACENSpecPath(t)
	loader := openapi3.NewLoader()
	spec, err := loader.LoadFromFile(path)
	if err != nil {
		t.Fatalf("bacen openapi: load %s: %v", path, err)
		return nil
	}
	if err := patchBACEN(spec); err != nil {
		t.Fatalf("bacen openapi: %v", err)
		return nil
	}
	// Route on the path alone (with /v2 cut off): the document's servers
	// name example hosts. The document's own defaults and examples are not
	// all valid (an integer default written "86400"); they play no part in
	// checking exchanges.
	spec.Servers = nil
	router, err := legacy.NewRouter(spec, openapi3.DisableSchemaDefaultsValidation(), openapi3.DisableExamplesValidation())
	if err != nil {
		t.Fatalf("bacen openapi: build router: %v", err)
		return nil
	}
	return &Conformance{router: router, spec: spec}
}

// patchBACEN corrects the slips BACENValidator lists, and drops the paths
// that live on another server (the payer's JWS payloads at the location
// host, such as /{pixUrlAccessToken}): they are not under /v2 and their
// templates collide with the API's (/cobv/{txid}).
func patchBACEN(spec *openapi3.T) error {
	for path, item := range spec.Paths.Map() {
		elsewhere := len(item.Servers) > 0
		for _, op := range item.Operations() {
			elsewhere = elsewhere || op.Servers != nil && len(*op.Servers) > 0
		}
		if elsewhere {
			spec.Paths.Delete(path)
		}
	}
	list := spec.Components.Schemas["PixConsultados"]
	if list == nil || list.Value == nil {
		return errors.New("no schema PixConsultados")
	}
	if _, ok := list.Value.Properties["pix"]; !ok {
		return errors.New("PixConsultados has no property pix")
	}
	list.Value.Required = slices.DeleteFunc(list.Value.Required, func(s string) bool { return s == "cobs" || s == "pix" })
	list.Value.Required = append(list.Value.Required, "pix")

	hook := spec.Paths.Find("/webhook/{chave}")
	if hook == nil || hook.Put == nil {
		return errors.New("no operation PUT /webhook/{chave}")
	}
	if ok := hook.Put.Responses.Status(http.StatusOK); ok == nil || ok.Value == nil {
		return errors.New("PUT /webhook/{chave} documents no 200")
	} else {
		ok.Value.Content = nil // any body, or none
	}

	e2e := spec.Components.Schemas["EndToEndId"]
	if e2e == nil || e2e.Value == nil {
		return errors.New("no schema EndToEndId")
	}
	n := uint64(32)
	e2e.Value.MinLength, e2e.Value.MaxLength, e2e.Value.Pattern = n, &n, "^[a-zA-Z0-9]{32}$"

	recebedor := spec.Components.Schemas["DadosRecebedor"]
	if recebedor == nil || recebedor.Value == nil || recebedor.Value.Properties["recebedor"] == nil {
		return errors.New("no schema DadosRecebedor with a recebedor")
	}
	recebedor.Value.Required = nil

	if err := patchRec(spec); err != nil {
		return err
	}

	seen := map[*openapi3.Schema]bool{}
	for _, s := range spec.Components.Schemas {
		unslashPatterns(s, seen)
	}
	for _, p := range spec.Components.Parameters {
		if p.Value != nil {
			unslashPatterns(p.Value.Schema, seen)
		}
	}
	for _, item := range spec.Paths.Map() {
		for _, p := range item.Parameters {
			if p.Value != nil {
				unslashPatterns(p.Value.Schema, seen)
			}
		}
		for _, op := range item.Operations() {
			for _, p := range op.Parameters {
				if p.Value != nil {
					unslashPatterns(p.Value.Schema, seen)
				}
			}
			if op.RequestBody != nil && op.RequestBody.Value != nil {
				for _, mt := range op.RequestBody.Value.Content {
					unslashPatterns(mt.Schema, seen)
				}
			}
			for _, r := range op.Responses.Map() {
				if r.Value != nil {
					for _, mt := range r.Value.Content {
						unslashPatterns(mt.Schema, seen)
					}
				}
			}
		}
	}
	return nil
}

// patchRec corrects the slips of Pix Automático's schemas that
// BACENValidator lists.
func patchRec(spec *openapi3.T) error {
	schema := func(name string) (*openapi3.Schema, error) {
		s := spec.Components.Schemas[name]
		if s == nil || s.Value == nil {
			return nil, fmt.Errorf("no schema %s", name)
		}
		return s.Value, nil
	}
	base, err := schema("RecBase")
	if err != nil {
		return err
	}
	base.Required = slices.DeleteFunc(base.Required, func(s string) bool { return s == "idRec" || s == "retentativa" })
	payer, err := schema("DadosPagadorRec")
	if err != nil {
		return err
	}
	payer.Required = nil
	note, err := schema("RecNotification")
	if err != nil {
		return err
	}
	for i, r := range note.Required {
		note.Required[i] = strings.Trim(r, `"`)
	}
	pa, err := schema("PixAutomatico")
	if err != nil {
		return err
	}
	valor := pa.Properties["valor"]
	if valor == nil || valor.Value == nil {
		return errors.New("PixAutomatico has no property valor")
	}
	valor.Value.AnyOf = nil
	for _, name := range []string{"RecEncerramento", "CobRAtualizacao"} {
		sc, err := schema(name)
		if err != nil {
			return err
		}
		end := sc.Properties["encerramento"]
		if end == nil || end.Value == nil || len(end.Value.OneOf) != 2 {
			return fmt.Errorf("%s has no encerramento of two kinds", name)
		}
		for _, alt := range end.Value.OneOf {
			if alt.Value == nil || len(alt.Value.Properties) != 1 {
				return fmt.Errorf("%s: an encerramento kind is not one property", name)
			}
			for k := range alt.Value.Properties {
				alt.Value.Required = []string{k}
			}
		}
	}
	return nil
}

// CheckCallback validates body, a notification the PSP posted to the
// webhook registered with PUT path (such as "/webhookrec"), against the
// request body of that operation's callback name ("rec"), and records a
// violation when it does not match.
func (c *Conformance) CheckCallback(t testing.TB, path, name string, body any) {
	t.Helper()
	v := Violation{Method: http.MethodPost, Path: path + " callback " + name, Request: true}
	item := c.spec.Paths.Find(path)
	if item == nil || item.Put == nil || item.Put.Callbacks[name] == nil || item.Put.Callbacks[name].Value == nil {
		v.Message = "no documented callback"
		c.record(v)
		return
	}
	for _, cb := range item.Put.Callbacks[name].Value.Map() {
		if cb.Post == nil || cb.Post.RequestBody == nil || cb.Post.RequestBody.Value == nil {
			continue
		}
		mt := cb.Post.RequestBody.Value.Content.Get("application/json")
		if mt == nil || mt.Schema == nil || mt.Schema.Value == nil {
			continue
		}
		if err := mt.Schema.Value.VisitJSON(body, openapi3.MultiErrors()); err != nil {
			v.Message = err.Error()
			c.record(v)
			return
		}
		c.mu.Lock()
		c.validated++
		c.mu.Unlock()
		return
	}
	v.Message = "the callback documents no JSON body"
	c.record(v)
}

// unslashPatterns turns "/re/" patterns into "re" throughout a schema.
func unslashPatterns(ref *openapi3.SchemaRef, seen map[*openapi3.Schema]bool) {
	if ref == nil || ref.Value == nil || seen[ref.Value] {
		return
	}
	s := ref.Value
	seen[s] = true
	if p := s.Pattern; len(p) > 2 && strings.HasPrefix(p, "/") && strings.HasSuffix(p, "/") {
		s.Pattern = p[1 : len(p)-1]
	}
	for _, sub := range s.Properties {
		unslashPatterns(sub, seen)
	}
	for _, list := range [][]*openapi3.SchemaRef{s.AllOf, s.OneOf, s.AnyOf} {
		for _, sub := range list {
			unslashPatterns(sub, seen)
		}
	}
	unslashPatterns(s.Items, seen)
	unslashPatterns(s.Not, seen)
	unslashPatterns(s.AdditionalProperties.Schema, seen)
}

// Wrap returns next checked: every request under /v2 except Efí's /v2/gn/…
// is validated with the response next gave it. Other requests pass
// unchecked.
func (c *Conformance) Wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rest, ok := strings.CutPrefix(r.URL.Path, apiPixPrefix)
		if !ok || !strings.HasPrefix(rest, "/") || strings.HasPrefix(rest, "/gn/") {
			next.ServeHTTP(w, r)
			return
		}
		var reqBody []byte
		if r.Body != nil {
			var err error
			reqBody, err = io.ReadAll(r.Body)
			if err != nil {
				c.record(Violation{Method: r.Method, Path: r.URL.Path, Request: true, Message: "read body: " + err.Error()})
			}
			r.Body = io.NopCloser(bytes.NewReader(reqBody))
		}
		rec := &teeWriter{ResponseWriter: w}
		next.ServeHTTP(rec, r)
		if rec.status == 0 {
			rec.status = http.StatusOK
		}
		c.validate(r, rest, reqBody, rec.status, rec.Header(), rec.body.Bytes())
	})
}

// validate checks one exchange; path is the request's path without /v2.
func (c *Conformance) validate(r *http.Request, path string, reqBody []byte, status int, header http.Header, respBody []byte) {
	v := Violation{Method: r.Method, Path: r.URL.Path, Status: status}
	req := r.Clone(context.Background())
	req.URL.Path, req.URL.RawPath = path, ""
	req.Body = io.NopCloser(bytes.NewReader(reqBody))
	route, params, err := c.router.FindRoute(req)
	if err != nil {
		v.Request, v.Message = true, "no documented operation: "+err.Error()
		c.record(v)
		return
	}
	opts := &openapi3filter.Options{
		IncludeResponseStatus: true,
		MultiError:            true,
		AuthenticationFunc:    bearerPresent,
	}
	opts.WithCustomSchemaErrorFunc(schemaErrorMessage)
	in := &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route, Options: opts}
	if err := openapi3filter.ValidateRequest(context.Background(), in); err != nil {
		c.record(Violation{Method: v.Method, Path: v.Path, Status: status, Request: true, Message: err.Error() + "\nrequest body: " + clip(reqBody)})
	}
	out := &openapi3filter.ResponseValidationInput{RequestValidationInput: in, Status: status, Header: header, Options: opts}
	out.SetBodyBytes(respBody)
	if err := openapi3filter.ValidateResponse(context.Background(), out); err != nil {
		v.Message = err.Error() + "\nresponse body: " + clip(respBody)
		c.record(v)
		return
	}
	c.mu.Lock()
	c.validated++
	c.mu.Unlock()
}

// bearerPresent accepts any request that carries a Bearer token: the PSP
// itself decides whether the token is valid.
func bearerPresent(_ context.Context, in *openapi3filter.AuthenticationInput) error {
	if in.SecurityScheme == nil || in.SecurityScheme.Type != "oauth2" {
		return fmt.Errorf("unexpected security scheme %q", in.SecuritySchemeName)
	}
	tok, ok := strings.CutPrefix(in.RequestValidationInput.Request.Header.Get("Authorization"), "Bearer ")
	if !ok || strings.TrimSpace(tok) == "" {
		return errors.New("no Bearer access token")
	}
	return nil
}

func (c *Conformance) record(v Violation) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.violations = append(c.violations, v)
}

// Validated is how many exchanges matched the document so far.
func (c *Conformance) Validated() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.validated
}

// Violations returns the violations recorded so far.
func (c *Conformance) Violations() []Violation {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.violations)
}

// Check fails the test with every violation recorded, or when no exchange
// was validated at all (a check that saw nothing proves nothing), and logs
// how many were.
func (c *Conformance) Check(t testing.TB) {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	t.Logf("API Pix conformance: %d exchanges match the OpenAPI, %d violations", c.validated, len(c.violations))
	if len(c.violations) > 0 {
		lines := make([]string, len(c.violations))
		for i, v := range c.violations {
			lines[i] = v.String()
		}
		t.Errorf("API Pix conformance: %d violations of the OpenAPI:\n%s", len(lines), strings.Join(lines, "\n"))
	}
	if c.validated == 0 && len(c.violations) == 0 {
		t.Errorf("API Pix conformance: no exchange was validated")
	}
}

// teeWriter passes a response through while keeping its status and body.
type teeWriter struct {
	http.ResponseWriter
	status int
	body   bytes.Buffer
}

func (w *teeWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *teeWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	w.body.Write(b)
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (w *teeWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
