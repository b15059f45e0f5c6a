package httpapi

import _ "embed" // for the embedded OpenAPI document

// openAPIDocument is the OpenAPI 3.1 description of the API, served at
// /openapi.yaml and used by the tests to check every response.
//
//go:embed openapi.yaml
var openAPIDocument []byte

// OpenAPIDocument returns a copy of the embedded OpenAPI 3.1 document
// (YAML), so callers cannot alter the embedded bytes.
func OpenAPIDocument() []byte {
	return append([]byte(nil), openAPIDocument...)
}
