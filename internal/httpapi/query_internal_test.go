package httpapi

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestDuplicateQueryParam: the first name given twice, compared unescaped,
// in the query's order; pairs url.ParseQuery drops are not counted.
func TestDuplicateQueryParam(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		raw, name string
	}{
		{"", ""},
		{"from=a", ""},
		{"from=a&to=b", ""},
		{"from=a&from=b", "from"},
		{"from&from", "from"},
		{"to=1&from=a&to=2&from=b", "to"},
		{"from=a&%66rom=b", "from"},
		{"a+b=1&a%20b=2", "a b"},
		{"from=a;x&from=b", ""},
		{"%zz=1&%zz=2", ""},
		{"=1&=2", ""},
		{"a=1&&a", "a"},
	} {
		name, ok := duplicateQueryParam(tc.raw)
		require.Equal(t, tc.name, name, tc.raw)
		require.Equal(t, tc.name != "", ok, tc.raw)
	}
}
