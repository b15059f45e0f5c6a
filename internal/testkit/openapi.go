package testkit

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"
)

// OpenAPI checks HTTP exchanges against an OpenAPI document: the request must
// match one of its operations and the response (status, documented headers,
// content type and body) must match what that operation documents. A status
// the operation does not document is a failure: the document is meant to list
// every response, so it holds no "default" responses.
//
// Requests are only routed, never validated: tests send invalid requests on
// purpose, and what matters is that the answer to them is documented.
// Security requirements are not checked either.
type OpenAPI struct {
	router routers.Router
}

// NewOpenAPI loads and validates the OpenAPI document doc (YAML or JSON),
// examples included, and builds the router used by Check. It fails the test
// when the document does not load or is not valid.
func NewOpenAPI(t testing.TB, doc []byte) *OpenAPI {
	t.Helper()
	loader := openapi3.NewLoader()
	spec, err := loader.LoadFromData(doc)
	if err != nil {
		t.Fatalf("openapi: load document: %v", err)
		return nil
	}
	if err := spec.Validate(loader.Context, openapi3.EnableMultiError()); err != nil {
		t.Fatalf("openapi: invalid document: %v", err)
		return nil
	}
	// The document limits a number's decimals with x-decimals, which
	// generated clients read without rounding trouble; the checker
	// enforces it as the multipleOf it stands for.
	decimalsAsMultipleOf(spec)
	// Route on the path alone: the servers of the document are relative or
	// name other hosts than the test servers on 127.0.0.1:<random port>.
	spec.Servers = nil
	router, err := legacy.NewRouter(spec)
	if err != nil {
		t.Fatalf("openapi: build router: %v", err)
		return nil
	}
	return &OpenAPI{router: router}
}

// Check reports a test error (t.Errorf, so it may be called from any
// goroutine) when req does not match an operation of the document or when
// resp, whose body is respBody, does not match that operation's documented
// response for its status. reqBody is only quoted in the error message; nil
// is fine. When req is nil, resp.Request is used.
func (o *OpenAPI) Check(t testing.TB, req *http.Request, reqBody []byte, resp *http.Response, respBody []byte) {
	t.Helper()
	if req == nil && resp != nil {
		req = resp.Request
	}
	if err := o.Validate(req, resp, respBody); err != nil {
		var status int
		if resp != nil {
			status = resp.StatusCode
		}
		var method, path string
		if req != nil {
			method, path = req.Method, req.URL.RequestURI()
		}
		msg := fmt.Sprintf("openapi: %s %s → %d does not match the document: %v\nresponse body: %s",
			method, path, status, err, clip(respBody))
		if len(reqBody) > 0 {
			msg += "\nrequest body: " + clip(reqBody)
		}
		t.Errorf("%s", msg)
	}
}

// Validate is Check returning the mismatch as an error instead of reporting it.
func (o *OpenAPI) Validate(req *http.Request, resp *http.Response, respBody []byte) error {
	if req == nil || resp == nil {
		return errors.New("no request or no response")
	}
	route, pathParams, err := o.router.FindRoute(req)
	if err != nil {
		return fmt.Errorf("no documented operation for %s %s: %w", req.Method, req.URL.Path, err)
	}
	input := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{
			Request:    req,
			PathParams: pathParams,
			Route:      route,
			Options:    checkOptions,
		},
		Status:  resp.StatusCode,
		Header:  resp.Header,
		Options: checkOptions,
	}
	input.SetBodyBytes(respBody)
	return openapi3filter.ValidateResponse(context.Background(), input)
}

// checkOptions make an undocumented status fail and leave requests and
// credentials unchecked.
var checkOptions = func() *openapi3filter.Options {
	o := &openapi3filter.Options{
		ExcludeRequestBody:        true,
		ExcludeRequestQueryParams: true,
		IncludeResponseStatus:     true,
		MultiError:                true,
		AuthenticationFunc:        openapi3filter.NoopAuthenticationFunc,
	}
	o.WithCustomSchemaErrorFunc(schemaErrorMessage)
	return o
}()

// schemaErrorMessage words a failed schema check as "at '/path': reason",
// without the schema dump kin-openapi appends by default (the body is quoted
// in the test error anyway).
func schemaErrorMessage(err *openapi3.SchemaError) string {
	if err.Origin != nil || err.Reason == "" {
		return "" // the default: a wrapper listing its causes
	}
	msg := err.Reason
	if strings.HasPrefix(msg, `error at "`) { // JSON Schema 2020-12 validator: the path twice
		_, msg, _ = strings.Cut(msg, `": `)
	}
	if strings.HasPrefix(msg, "at '") {
		return msg
	}
	return fmt.Sprintf("at '/%s': %s", strings.Join(err.JSONPointer(), "/"), msg)
}

// Client returns an HTTP client whose every response is checked with Check
// (test errors, not a failed call). base carries the requests; nil means
// http.DefaultTransport. Request and response bodies reach the caller intact.
func (o *OpenAPI) Client(t testing.TB, base http.RoundTripper) *http.Client {
	return &http.Client{Transport: o.Transport(t, base)}
}

// Transport wraps base (nil: http.DefaultTransport) so that every response
// is checked with Check, for clients built by the caller.
func (o *OpenAPI) Transport(t testing.TB, base http.RoundTripper) http.RoundTripper {
	if base == nil {
		base = http.DefaultTransport
	}
	return &checkingTransport{openAPI: o, t: t, base: base}
}

type checkingTransport struct {
	openAPI *OpenAPI
	t       testing.TB
	base    http.RoundTripper
}

func (c *checkingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	var reqBody []byte
	if req.Body != nil && req.Body != http.NoBody {
		// A RoundTripper must not modify the request: send a clone whose body
		// is the buffered copy, and close the original as RoundTrip must.
		var err error
		reqBody, err = io.ReadAll(req.Body)
		_ = req.Body.Close()
		if err != nil {
			return nil, fmt.Errorf("openapi check: read request body: %w", err)
		}
		clone := req.Clone(req.Context())
		clone.Body = io.NopCloser(bytes.NewReader(reqBody))
		clone.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(reqBody)), nil }
		clone.ContentLength = int64(len(reqBody))
		req = clone
	}
	resp, err := c.base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	respBody, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if err != nil {
		return nil, fmt.Errorf("openapi check: read response body: %w", err)
	}
	resp.Body = io.NopCloser(bytes.NewReader(respBody))
	c.openAPI.Check(c.t, req, reqBody, resp, respBody)
	return resp, nil
}

// clip shortens a body for an error message.
func clip(b []byte) string {
	const limit = 2048
	if len(b) > limit {
		return string(b[:limit]) + "…"
	}
	return string(b)
}

// decimalsAsMultipleOf sets multipleOf 10^-n on every schema of spec that
// carries x-decimals n, in components and inline alike.
func decimalsAsMultipleOf(spec *openapi3.T) {
	seen := map[*openapi3.Schema]bool{}
	var walk func(*openapi3.SchemaRef)
	walk = func(ref *openapi3.SchemaRef) {
		if ref == nil || ref.Value == nil || seen[ref.Value] {
			return
		}
		sc := ref.Value
		seen[sc] = true
		if n, ok := decimalsOf(sc.Extensions["x-decimals"]); ok && sc.MultipleOf == nil {
			step := math.Pow10(-n)
			sc.MultipleOf = &step
		}
		for _, p := range sc.Properties {
			walk(p)
		}
		walk(sc.Items)
		walk(sc.Not)
		if sc.AdditionalProperties.Schema != nil {
			walk(sc.AdditionalProperties.Schema)
		}
		for _, group := range []openapi3.SchemaRefs{sc.AllOf, sc.AnyOf, sc.OneOf} {
			for _, r := range group {
				walk(r)
			}
		}
	}
	if spec.Components != nil {
		for _, r := range spec.Components.Schemas {
			walk(r)
		}
		for _, r := range spec.Components.Responses {
			if r.Value != nil {
				for _, mt := range r.Value.Content {
					walk(mt.Schema)
				}
			}
		}
		for _, r := range spec.Components.RequestBodies {
			if r.Value != nil {
				for _, mt := range r.Value.Content {
					walk(mt.Schema)
				}
			}
		}
	}
	for _, item := range spec.Paths.Map() {
		for _, op := range item.Operations() {
			if op.RequestBody != nil && op.RequestBody.Value != nil {
				for _, mt := range op.RequestBody.Value.Content {
					walk(mt.Schema)
				}
			}
			for _, r := range op.Responses.Map() {
				if r.Value != nil {
					for _, mt := range r.Value.Content {
						walk(mt.Schema)
					}
				}
			}
		}
	}
}

// decimalsOf reads an x-decimals value as the loader decoded it.
func decimalsOf(v any) (int, bool) {
	switch n := v.(type) {
	case float64:
		return int(n), n == float64(int(n)) && n >= 0
	case int:
		return n, n >= 0
	case int64:
		return int(n), n >= 0
	}
	return 0, false
}
