package httpapi_test

import (
	"encoding/json"
	"fmt"
	"math/big"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/stretchr/testify/require"
)

// limitGen derives limit cases from request schemas.
type limitGen struct {
	t     *testing.T
	cases []limitCase
}

func (g *limitGen) add(c limitCase) {
	if c.badStatus == 0 {
		c.badStatus = http.StatusBadRequest
		// Only the form of a lookup key is answered 404; its absence is 400.
		if lookupKeys[c.op+" "+c.where+" "+strings.Join(c.path, ".")] && c.rule != "required" {
			c.badStatus = http.StatusNotFound
		}
	}
	if c.fields == nil && c.where != "query" {
		c.fields = []string{fieldName(c.path)}
	}
	g.cases = append(g.cases, c)
}

// fieldName is how the server names a field in details: payer.address.city,
// products[0].name.
func fieldName(path []string) string {
	var b strings.Builder
	for i, k := range path {
		if _, err := strconv.Atoi(k); err == nil {
			b.WriteString("[" + k + "]")
			continue
		}
		if i > 0 {
			b.WriteByte('.')
		}
		b.WriteString(k)
	}
	return b.String()
}

// walk collects the limits of schema s at path, whose value in the base
// request is base (nil when absent); pre runs before each case's own edit
// (it selects a oneOf alternative).
func (g *limitGen) walk(op, where string, path []string, sref *openapi3.SchemaRef, base any, pre func(*limitRequest)) {
	g.t.Helper()
	if sref == nil || sref.Value == nil {
		return
	}
	if sref.Value.Extensions["x-refused-alone"] == true {
		// A batch's item outside its limits rejects only itself (202), which
		// the batch tests check; the batch is not refused with a 400.
		return
	}
	s := sref.Value
	key := op + " " + where + " " + strings.Join(path, ".")
	// An allOf part constrains the same value (a request's "one of these
	// identifiers" rule): its limits are the value's.
	for _, part := range s.AllOf {
		g.walk(op, where, path, part, base, pre)
	}
	if len(s.Properties) > 0 || len(s.AnyOf) > 0 || len(s.OneOf) > 0 {
		obj, _ := base.(map[string]any)
		for _, name := range s.Required {
			p := append(slices.Clone(path), name)
			g.add(limitCase{op: op, where: where, path: p, rule: "required",
				bad: func(r *limitRequest) { pre(r); r.del(where, p) }})
		}
		if len(s.AnyOf) > 0 {
			var keys []string
			for _, alt := range s.AnyOf {
				keys = append(keys, alt.Value.Required...)
			}
			clear := func(r *limitRequest) {
				pre(r)
				for _, k := range keys {
					r.del(where, append(slices.Clone(path), k))
				}
			}
			fields := make([]string, len(keys))
			for i, k := range keys {
				fields[i] = fieldName(append(slices.Clone(path), k))
			}
			g.add(limitCase{op: op, where: where, path: path, rule: "anyOf none of " + strings.Join(keys, ", "), bad: clear, fields: fields,
				badStatus: http.StatusBadRequest})
			for _, alt := range s.AnyOf {
				for _, k := range alt.Value.Required {
					ps := alt.Value.Properties[k]
					if ps == nil || ps.Value.MinLength == 0 {
						continue
					}
					short := strings.Repeat("a", int(ps.Value.MinLength)-1)
					p := append(slices.Clone(path), k)
					g.add(limitCase{op: op, where: where, path: p, rule: fmt.Sprintf("anyOf minLength %d", ps.Value.MinLength),
						bad: func(r *limitRequest) { clear(r); r.set(where, p, short) }, fields: fields, badStatus: http.StatusBadRequest})
				}
			}
		}
		disc := ""
		for _, alt := range s.OneOf {
			for name, ps := range alt.Value.Properties {
				if ps.Value.Const != nil {
					disc = name
				}
			}
		}
		// Members of other alternatives are not carried into a branch: the
		// alternatives exclude each other (a fine is a percent or an amount).
		others := func(alt *openapi3.SchemaRef) map[string]bool {
			out := map[string]bool{}
			for _, o := range s.OneOf {
				for name := range o.Value.Properties {
					if o != alt && alt.Value.Properties[name] == nil {
						out[name] = true
					}
				}
			}
			return out
		}
		for _, alt := range s.OneOf {
			branch := map[string]any{}
			skip := others(alt)
			for k, v := range obj {
				if !skip[k] {
					branch[k] = v
				}
			}
			for name, ps := range alt.Value.Properties {
				switch {
				case ps.Value.Const != nil:
					branch[name] = ps.Value.Const
				case len(ps.Value.Examples) > 0:
					branch[name] = ps.Value.Examples[0]
				}
			}
			require.NoError(g.t, alt.Value.VisitJSON(branch), "%s: the example of %s", key, alt.Value.Title)
			branchPre := func(r *limitRequest) { pre(r); r.set(where, path, cloneMap(branch)) }
			discPath := path
			if disc != "" {
				discPath = append(slices.Clone(path), disc)
			}
			g.add(limitCase{op: op, where: where, path: discPath, rule: "oneOf " + alt.Value.Title, good: branchPre})
			for name, ps := range alt.Value.Properties {
				if name != disc {
					g.walkNamed(op, where, append(slices.Clone(path), name), ps, branch[name], branchPre, " ("+alt.Value.Title+")")
				}
			}
		}
		names := make([]string, 0, len(s.Properties))
		for name := range s.Properties {
			names = append(names, name)
		}
		slices.Sort(names)
		for _, name := range names {
			p := append(slices.Clone(path), name)
			ps := s.Properties[name]
			if name == disc {
				// Each value is accepted with its own alternative (above);
				// only the refusal of other values is checked here.
				g.enumBad(op, where, p, ps.Value, pre)
				continue
			}
			var v any
			if obj != nil {
				v = obj[name]
			}
			g.walk(op, where, p, ps, v, pre)
		}
		return
	}
	g.walkNamed(op, where, path, sref, base, pre, "")
}

// walkNamed collects the limits of a leaf or array schema; suffix tells
// apart the same path in different oneOf alternatives.
func (g *limitGen) walkNamed(op, where string, path []string, sref *openapi3.SchemaRef, base any, pre func(*limitRequest), suffix string) {
	g.t.Helper()
	s := sref.Value
	key := op + " " + where + " " + strings.Join(path, ".")
	at := func(v any) func(*limitRequest) {
		return func(r *limitRequest) { pre(r); r.set(where, path, v) }
	}
	check := func(rule string, good, bad any) {
		g.t.Helper()
		if good != nil {
			require.NoError(g.t, visit(s, where, good), "%s %s: generated value %v is outside the document", key, rule, good)
		}
		if bad != nil {
			err := visit(s, where, bad)
			if err == nil {
				err = tooManyDecimals(g.t, s, bad)
			}
			require.Error(g.t, err, "%s %s: generated value %v is within the document", key, rule, bad)
		}
	}
	addPair := func(rule string, good, bad any) {
		check(rule, good, bad)
		c := limitCase{op: op, where: where, path: path, rule: rule + suffix}
		if bad != nil {
			c.bad = at(bad)
		}
		if good != nil {
			c.good = at(good)
		}
		g.add(c)
	}
	if s.Type.Is("array") {
		items, _ := base.([]any)
		require.NotEmpty(g.t, items, "%s: the base request needs an item", key)
		copies := func(n uint64) []any {
			out := make([]any, n)
			for i := range out {
				out[i] = cloneAny(items[0])
			}
			return out
		}
		if s.MinItems > 0 {
			addPair(fmt.Sprintf("minItems %d", s.MinItems), copies(s.MinItems), copies(s.MinItems-1))
		}
		if s.MaxItems != nil {
			rule := fmt.Sprintf("maxItems %d", *s.MaxItems)
			good, bad := copies(*s.MaxItems), copies(*s.MaxItems+1)
			if o, found := generatedArrays[key+" "+rule]; found {
				good, bad = o, generatedArrays[key+" "+rule+" (bad)"]
			}
			addPair(rule, good, bad)
		}
		g.walk(op, where, append(slices.Clone(path), "0"), s.Items, items[0], pre)
		return
	}
	if s.Type.Includes("number") || s.Type.Includes("integer") {
		g.numberLimits(s, where, addPair)
		return
	}
	if !s.Type.Includes("string") {
		return
	}
	str, _ := base.(string)
	if str == "" && len(s.Examples) > 0 {
		str, _ = s.Examples[0].(string)
	}
	// Lengths count characters, so values are padded with a two-byte one
	// where the pattern allows; a limit in bytes (x-length-unit) is padded
	// with ASCII only, from the base value without its non-ASCII.
	bytesUnit := s.Extensions["x-length-unit"] == "bytes"
	// sized returns a value of n characters that matches the pattern, and
	// the pad it used (a longer value by one repeats it).
	sized := func(n int) (string, string, bool) {
		from := str
		pads := []string{"ã", "a", "1"}
		if bytesUnit {
			pads = pads[1:]
			from = strings.Map(func(r rune) rune {
				if r >= utf8.RuneSelf {
					return -1
				}
				return r
			}, str)
		}
		for _, pad := range pads {
			v := from
			if n <= utf8.RuneCountInString(from) {
				v = string([]rune(from)[:n])
			} else {
				v += strings.Repeat(pad, n-utf8.RuneCountInString(from))
			}
			if s.Pattern == "" || regexp.MustCompile(s.Pattern).MatchString(v) {
				return v, pad, true
			}
		}
		return "", "", false
	}
	lengthPair := func(rule string, good string, ok bool, bad func(string) string) {
		if o, found := generatedOverrides[key+" "+rule+suffix]; found {
			addPair(rule, o.good, o.bad)
			return
		}
		require.True(g.t, ok, "%s %s%s: no value of that length matches the pattern; add an override", key, rule, suffix)
		addPair(rule, good, bad(good))
	}
	if s.MinLength > 0 {
		good, _, ok := sized(int(s.MinLength))
		lengthPair(fmt.Sprintf("minLength %d", s.MinLength), good, ok, func(v string) string {
			r := []rune(v)
			return string(r[:len(r)-1])
		})
	}
	if s.MaxLength != nil {
		good, pad, ok := sized(int(*s.MaxLength))
		lengthPair(fmt.Sprintf("maxLength %d", *s.MaxLength), good, ok, func(v string) string { return v + pad })
	}
	if s.Pattern != "" {
		re := regexp.MustCompile(s.Pattern)
		require.True(g.t, re.MatchString(str), "%s: the base value %q does not match %s", key, str, s.Pattern)
		var bad string
		found := false
		for _, c := range []string{"0" + strings.TrimPrefix(str, str[:1]), str + "!", str[:1] + " " + str[1:], " "} {
			n := uint64(utf8.RuneCountInString(c))
			if !re.MatchString(c) && n >= s.MinLength && (s.MaxLength == nil || n <= *s.MaxLength) {
				bad, found = c, true
				break
			}
		}
		require.True(g.t, found, "%s: no near value violates %s", key, s.Pattern)
		addPair("pattern "+s.Pattern, str, bad)
	}
	if len(s.Enum) > 0 {
		g.enumBad(op, where, path, s, pre)
		for _, v := range s.Enum {
			check("enum", v, nil)
			g.add(limitCase{op: op, where: where, path: path, rule: fmt.Sprintf("enum value %v", v), good: at(v)})
		}
	}
	if s.Format == "date-time" {
		addPair("format date-time", "2025-01-31T13:45:00.000Z", "2025-01-31")
	}
}

// enumBad adds the refusal of a value outside enum s.
func (g *limitGen) enumBad(op, where string, path []string, s *openapi3.Schema, pre func(*limitRequest)) {
	first := fmt.Sprint(s.Enum[0])
	for _, c := range []string{strings.ToLower(first), first + "X"} {
		if !slices.Contains(s.Enum, any(c)) {
			g.add(limitCase{op: op, where: where, path: path, rule: "enum",
				bad: func(r *limitRequest) { pre(r); r.set(where, path, c) }})
			return
		}
	}
	g.t.Fatalf("%s %v: no value outside the enum", op, path)
}

// numberLimits adds the bounds of a number (exact decimal arithmetic: the
// step is multipleOf, or 10^-n for x-decimals n, or 1 for integers).
func (g *limitGen) numberLimits(s *openapi3.Schema, where string, addPair func(rule string, good, bad any)) {
	step := big.NewRat(1, 1)
	if s.MultipleOf != nil {
		step = ratOf(*s.MultipleOf)
	}
	decimals, hasDecimals := xDecimals(g.t, s)
	if hasDecimals {
		step = new(big.Rat).SetFrac(big.NewInt(1), new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(decimals)), nil))
	}
	val := func(r *big.Rat) any {
		txt := ratText(r)
		if where == "body" {
			return json.Number(txt)
		}
		return txt
	}
	plus := func(a, b *big.Rat) *big.Rat { return new(big.Rat).Add(a, b) }
	minus := func(a, b *big.Rat) *big.Rat { return new(big.Rat).Sub(a, b) }
	if s.ExclusiveMin.Value != nil {
		m := ratOf(*s.ExclusiveMin.Value)
		addPair("exclusiveMinimum "+ratText(m), val(plus(m, step)), val(m))
	}
	if s.Min != nil {
		m := ratOf(*s.Min)
		addPair("minimum "+ratText(m), val(m), val(minus(m, step)))
	}
	if s.Max != nil {
		m := ratOf(*s.Max)
		addPair("maximum "+ratText(m), val(m), val(plus(m, step)))
	}
	if s.ExclusiveMax.Value != nil {
		m := ratOf(*s.ExclusiveMax.Value)
		addPair("exclusiveMaximum "+ratText(m), val(minus(m, step)), val(m))
	}
	if s.MultipleOf != nil || hasDecimals {
		one := big.NewRat(1, 1)
		addPair("step "+ratText(step), val(plus(one, step)), val(plus(one, new(big.Rat).Quo(step, big.NewRat(10, 1)))))
	}
	if hasDecimals {
		// The number JSON Schema validators read badly as a multiple of
		// 0.01 (19.9 / 0.01 is not an integer in binary floating point)
		// is a valid amount: the server reads the text exactly.
		addPair("x-decimals 19.9", val(big.NewRat(199, 10)), val(big.NewRat(19999, 1000)))
	}
}

// tooManyDecimals is the document's x-decimals limit on v (a number's
// text), which JSON Schema validators do not know: an error when v has more
// decimals than s allows.
func tooManyDecimals(t *testing.T, s *openapi3.Schema, v any) error {
	n, ok := xDecimals(t, s)
	if !ok {
		return nil
	}
	txt := fmt.Sprint(v)
	if _, frac, found := strings.Cut(txt, "."); found && len(frac) > n {
		return fmt.Errorf("%s has more than %d decimals", txt, n)
	}
	return nil
}

// xDecimals reads the x-decimals extension of s: the most decimals its
// numbers may have.
func xDecimals(t *testing.T, s *openapi3.Schema) (int, bool) {
	v, ok := s.Extensions["x-decimals"]
	if !ok {
		return 0, false
	}
	switch n := v.(type) {
	case float64:
		return int(n), true
	case json.Number:
		i, err := n.Int64()
		require.NoError(t, err)
		return int(i), true
	case int:
		return n, true
	}
	t.Fatalf("x-decimals is %T %v, not a number", v, v)
	return 0, false
}

func ratOf(f float64) *big.Rat {
	r, ok := new(big.Rat).SetString(strconv.FormatFloat(f, 'f', -1, 64))
	if !ok {
		panic(f)
	}
	return r
}

// ratText writes r with as few decimals as it needs.
func ratText(r *big.Rat) string {
	for prec := 0; ; prec++ {
		txt := r.FloatString(prec)
		if back, _ := new(big.Rat).SetString(txt); back.Cmp(r) == 0 {
			return txt
		}
	}
}

// visit validates v (a body value, or a parameter's text) against s.
func visit(s *openapi3.Schema, where string, v any) error {
	if where != "body" {
		if txt, ok := v.(string); ok && (s.Type.Includes("integer") || s.Type.Includes("number")) {
			f, err := strconv.ParseFloat(txt, 64)
			if err != nil {
				return err
			}
			v = f
		}
		if s.Format == "date-time" {
			if _, err := time.Parse(time.RFC3339, v.(string)); err != nil {
				return err
			}
		}
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return err
	}
	var generic any
	if err := json.Unmarshal(raw, &generic); err != nil {
		return err
	}
	return s.VisitJSON(generic, openapi3.EnableJSONSchema2020())
}

func cloneAny(v any) any {
	switch c := v.(type) {
	case map[string]any:
		return cloneMap(c)
	case []any:
		out := make([]any, len(c))
		for i, e := range c {
			out[i] = cloneAny(e)
		}
		return out
	}
	return v
}

func cloneMap(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = cloneAny(v)
	}
	return out
}
