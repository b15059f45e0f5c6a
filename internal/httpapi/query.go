package httpapi

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/pixgate/pixgate/internal/pix"
)

// issueQueryDuplicate is the issue of a query parameter given twice.
const issueQueryDuplicate = "query parameter given more than once"

// requestError checks what every matched route shares before its handler
// runs: text that is valid (requestTextError), then a query without a
// repeated parameter.
func requestError(r *http.Request, pattern string) error {
	if err := requestTextError(r, pattern); err != nil {
		return err
	}
	if name, ok := duplicateQueryParam(r.URL.RawQuery); ok {
		return duplicateQueryError(name)
	}
	return nil
}

// duplicateQueryParam returns the first parameter of the raw query that is
// given more than once (?from=a&from=b). A handler reads one value of each
// parameter, so a second one would be silently ignored: the caller meant
// something the answer would not reflect. Pairs that url.ParseQuery drops
// (a ';', a bad escape) and parameters without a name are skipped, as no
// handler can read them.
func duplicateQueryParam(raw string) (string, bool) {
	if strings.IndexByte(raw, '&') < 0 {
		return "", false
	}
	seen := make(map[string]struct{}, 8)
	for raw != "" {
		var part string
		part, raw, _ = strings.Cut(raw, "&")
		if part == "" || strings.IndexByte(part, ';') >= 0 {
			continue
		}
		key, _, _ := strings.Cut(part, "=")
		name, err := url.QueryUnescape(key)
		if err != nil || name == "" {
			continue
		}
		if _, ok := seen[name]; ok {
			return name, true
		}
		seen[name] = struct{}{}
	}
	return "", false
}

// duplicateQueryError is the 400 naming a repeated query parameter: in
// details on gateway endpoints, in the message on wallet endpoints.
func duplicateQueryError(name string) *pix.Error {
	return strictIssue(name, issueQueryDuplicate, "Invalid request parameters: query parameter '"+name+"' is given more than once.")
}
