package pix

import (
	"strconv"
	"strings"
)

// Paging of the lists (history, refunds, recurrences, statement).
const (
	// DefaultPageLimit is a list's page size when limit is not given.
	DefaultPageLimit = 50
	// IssuePageLimit and IssuePageCursor say what limit and cursor must be.
	IssuePageLimit  = "must be an integer from 1 to 100 (default 50)"
	IssuePageCursor = "must be a next_cursor returned by this endpoint"
)

// PageParams checks a list's raw limit and cursor: it returns the page
// size (DefaultPageLimit when limit is "") and the issues found.
func PageParams(limit, cursor string) (int, []FieldIssue) {
	n := DefaultPageLimit
	var is []FieldIssue
	if limit != "" {
		v, err := strconv.Atoi(limit)
		if err != nil || v < 1 || v > 100 {
			is = append(is, FieldIssue{Field: "limit", Issue: IssuePageLimit})
		}
		n = v
	}
	if len(cursor) > 200 || !ValidText(cursor) {
		is = append(is, FieldIssue{Field: "cursor", Issue: IssuePageCursor})
	}
	return n, is
}

// ListError is the 400 of a list's bad query: its message names every
// parameter and what it must be, and details lists them.
func ListError(is []FieldIssue) error {
	parts := make([]string, len(is))
	for i, fi := range is {
		parts[i] = "'" + fi.Field + "' " + fi.Issue
	}
	return &Error{Code: EInvalid, Message: "Invalid request parameters: " + strings.Join(parts, "; ") + ".", Details: is}
}
