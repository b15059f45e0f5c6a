package internal_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// stopNames are the testing.TB methods that end the calling goroutine
// (runtime.Goexit): from any goroutine but the test's own, they leave the
// test running on without stopping it, or hang it.
var stopNames = map[string]bool{"FailNow": true, "Fatal": true, "Fatalf": true, "SkipNow": true, "Skip": true, "Skipf": true}

const requirePath = "github.com/stretchr/testify/require"

// goFile is one parsed Go file of the module.
type goFile struct {
	path    string
	ast     *ast.File
	require string            // local name of testify's require, "" if not imported
	imports map[string]string // local name → directory of a package of this module
	locals  map[string]bool   // names of function literals bound in the file that stop the goroutine
}

// stopScan finds, in the module's Go source, every call that ends the
// calling goroutine: require's assertions, the testing.TB methods of
// stopNames, and (transitively) the functions and methods of the module
// that make such a call in their own body.
type stopScan struct {
	fset  *token.FileSet
	files []*goFile
	// stops holds, per package directory, the names of its functions
	// ("name") and methods (".name") that may end the calling goroutine.
	stops map[string]map[string]bool
}

// loadModule parses every Go file of the module rooted at root.
func loadModule(t *testing.T, root string) *stopScan {
	t.Helper()
	s := &stopScan{fset: token.NewFileSet(), stops: map[string]map[string]bool{}}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); path != root && (n == "testdata" || n == "vendor" || n == "node_modules" || strings.HasPrefix(n, ".") || strings.HasPrefix(n, "_")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		f, err := parser.ParseFile(s.fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		gf := &goFile{path: path, ast: f, imports: map[string]string{}, locals: map[string]bool{}}
		for _, imp := range f.Imports {
			p, err := strconv.Unquote(imp.Path.Value)
			if err != nil {
				return err
			}
			name := p[strings.LastIndex(p, "/")+1:]
			if imp.Name != nil {
				name = imp.Name.Name
			}
			switch {
			case p == requirePath:
				gf.require = name
			case strings.HasPrefix(p, module+"/"):
				gf.imports[name] = filepath.Join(root, filepath.FromSlash(strings.TrimPrefix(p, module+"/")))
			}
		}
		s.files = append(s.files, gf)
		return nil
	})
	require.NoError(t, err)
	require.NotEmpty(t, s.files)
	s.closeOver()
	return s
}

// closeOver computes s.stops and each file's locals to a fixed point.
func (s *stopScan) closeOver() {
	for changed := true; changed; {
		changed = false
		for _, f := range s.files {
			dir := filepath.Dir(f.path)
			if s.stops[dir] == nil {
				s.stops[dir] = map[string]bool{}
			}
			for _, decl := range f.ast.Decls {
				fd, ok := decl.(*ast.FuncDecl)
				if !ok || fd.Body == nil {
					continue
				}
				key := fd.Name.Name
				if fd.Recv != nil {
					key = "." + key
				}
				if !s.stops[dir][key] && s.stopsIn(f, fd.Body, false, "") != "" {
					s.stops[dir][key], changed = true, true
				}
			}
			// A function literal bound to a name (next := func…) stops
			// wherever it is called.
			ast.Inspect(f.ast, func(n ast.Node) bool {
				as, ok := n.(*ast.AssignStmt)
				if !ok || len(as.Lhs) != len(as.Rhs) {
					return true
				}
				for i, rhs := range as.Rhs {
					lit, ok := rhs.(*ast.FuncLit)
					id, isIdent := as.Lhs[i].(*ast.Ident)
					if ok && isIdent && !f.locals[id.Name] && s.stopsIn(f, lit.Body, false, "") != "" {
						f.locals[id.Name], changed = true, true
					}
				}
				return true
			})
		}
	}
}

// stopsIn returns a description of the first call in body that may end
// the calling goroutine, or "". Function literals inside body are entered
// only when deep is set: a helper that hands one to t.Cleanup does not run
// it, a goroutine that defines and calls one does. collector, when not
// empty, names an *assert.CollectT that may stop the goroutine (the
// condition of EventuallyWithT): calls through it, or handing it on, are
// allowed.
func (s *stopScan) stopsIn(f *goFile, body ast.Node, deep bool, collector string) string {
	dir := filepath.Dir(f.path)
	found := ""
	isCollector := func(e ast.Expr) bool {
		id, ok := e.(*ast.Ident)
		return ok && collector != "" && id.Name == collector
	}
	takesCollector := func(call *ast.CallExpr) bool {
		for _, a := range call.Args {
			if isCollector(a) {
				return true
			}
		}
		return false
	}
	ast.Inspect(body, func(n ast.Node) bool {
		if found != "" {
			return false
		}
		if _, ok := n.(*ast.FuncLit); ok && !deep && n != body {
			return false
		}
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		if takesCollector(call) {
			return true
		}
		switch fun := call.Fun.(type) {
		case *ast.Ident:
			if s.stops[dir][fun.Name] || f.locals[fun.Name] {
				found = fun.Name + " (a helper that stops the goroutine)"
			}
		case *ast.SelectorExpr:
			name := fun.Sel.Name
			x, isIdent := fun.X.(*ast.Ident)
			switch {
			case isIdent && f.require != "" && x.Name == f.require:
				found = f.require + "." + name
			case isIdent && f.imports[x.Name] != "":
				if s.stops[f.imports[x.Name]][name] {
					found = x.Name + "." + name + " (a helper that stops the goroutine)"
				}
			case stopNames[name] && !isCollector(fun.X):
				found = "." + name
			case s.stops[dir]["."+name]:
				found = "." + name + " (a helper method that stops the goroutine)"
			}
		}
		return found == ""
	})
	return found
}

// goroutine is code that runs in a goroutine of its own, and the name of
// the *assert.CollectT it may fail through ("" if none).
type goroutine struct {
	body      ast.Node
	collector string
}

// goroutines returns the code each goroutine started in f runs: the
// function literal of a go statement or given to a Go method
// (sync.WaitGroup, errgroup), the call of a go statement itself, and the
// condition of testify's Eventually, Never and EventuallyWithT, which
// testify runs in a goroutine of its own.
func goroutines(f *goFile) []goroutine {
	var out []goroutine
	ast.Inspect(f.ast, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.GoStmt:
			if lit, ok := n.Call.Fun.(*ast.FuncLit); ok {
				out = append(out, goroutine{body: lit.Body})
			} else {
				out = append(out, goroutine{body: n.Call})
			}
		case *ast.CallExpr:
			sel, ok := n.Fun.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			for _, a := range n.Args {
				lit, ok := a.(*ast.FuncLit)
				if !ok {
					continue
				}
				switch sel.Sel.Name {
				case "Go", "Eventually", "Never":
					out = append(out, goroutine{body: lit.Body})
				case "EventuallyWithT":
					g := goroutine{body: lit.Body}
					if ps := lit.Type.Params.List; len(ps) == 1 && len(ps[0].Names) == 1 {
						g.collector = ps[0].Names[0].Name
					}
					out = append(out, g)
				}
			}
		}
		return true
	})
	return out
}

// violations lists, for every _test.go file of s, each goroutine that may
// end itself through require or FailNow.
func (s *stopScan) violations(root string) []string {
	var out []string
	for _, f := range s.files {
		if !strings.HasSuffix(f.path, "_test.go") {
			continue
		}
		for _, g := range goroutines(f) {
			if what := s.stopsIn(f, g.body, true, g.collector); what != "" {
				pos := s.fset.Position(g.body.Pos())
				rel, err := filepath.Rel(root, pos.Filename)
				if err != nil {
					rel = pos.Filename
				}
				out = append(out, rel+":"+strconv.Itoa(pos.Line)+": a goroutine calls "+what)
			}
		}
	}
	sort.Strings(out)
	return out
}

// moduleRoot is the directory of go.mod above the working directory.
func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	require.NoError(t, err)
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		require.NotEqual(t, dir, parent, "go.mod not found")
		dir = parent
	}
}

// TestNoRequireInGoroutines: testify's require ends a failing test with
// t.FailNow, which must be called from the test's own goroutine; from
// another one it stops only that goroutine. So no goroutine a test starts
// may call require, a FailNow-like method, or a helper of the module that
// does: it reports what it found and the test asserts after the join.
func TestNoRequireInGoroutines(t *testing.T) {
	t.Parallel()
	root := moduleRoot(t)
	bad := loadModule(t, root).violations(root)
	require.Empty(t, bad, "send the error or result to the test goroutine and assert there:\n%s", strings.Join(bad, "\n"))
}

// TestStopScanFindsViolations proves the scan on planted code: each
// goroutine below that may stop itself is found, the safe ones are not.
func TestStopScanFindsViolations(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	files := map[string]string{
		"go.mod": "module " + module + "\n",
		"helper/helper.go": `package helper

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func Must(t *testing.T, err error) { require.NoError(t, err) }

func Indirect(t *testing.T, err error) { Must(t, err) }

func Report(t *testing.T, err error) { t.Errorf("%v", err) }

func Later(t *testing.T) { t.Cleanup(func() { require.True(t, true) }) }
`,
		"p/p_test.go": `package p

import (
	"sync"
	"testing"

	req "github.com/stretchr/testify/require"
	"github.com/stretchr/testify/assert"

	"` + module + `/helper"
)

type fixture struct{ t *testing.T }

func (f *fixture) check() { req.True(f.t, true) }

func (f *fixture) get() error { return nil }

func TestPlanted(t *testing.T) {
	f := &fixture{t}
	var wg sync.WaitGroup
	must := func() { t.Fatal("x") }
	go func() { req.NoError(t, nil) }()                 // bad: require under another name
	go func() { t.FailNow() }()                           // bad
	go func() { f.check() }()                             // bad: a method that requires
	go func() { helper.Indirect(t, nil) }()               // bad: a helper two calls deep
	go func() { must() }()                                // bad: a closure that stops
	go func() { func() { req.True(t, true) }() }()        // bad: a closure inside the goroutine
	wg.Go(func() { req.True(t, true) })                   // bad: WaitGroup.Go
	go helper.Must(t, nil)                                // bad: go statement on a helper
	go func() { assert.NoError(t, f.get()) }()            // good: assert reports with Errorf
	go func() { helper.Report(t, nil); helper.Later(t) }() // good
	wg.Wait()
	req.Eventually(t, func() bool { req.NoError(t, nil); return true }, 0, 0)          // bad: a condition runs in a goroutine
	req.Never(t, func() bool { f.check(); return false }, 0, 0)                       // bad
	req.EventuallyWithT(t, func(c *assert.CollectT) { req.NoError(t, nil) }, 0, 0)    // bad: through t, not the collector
	req.EventuallyWithT(t, func(c *assert.CollectT) { helper.Must(t, nil) }, 0, 0)    // bad
	req.EventuallyWithT(t, func(c *assert.CollectT) { req.NoError(c, f.get()) }, 0, 0) // good
	req.EventuallyWithT(t, func(c *assert.CollectT) { helper.Must(c, nil); c.FailNow() }, 0, 0) // good
	req.Eventually(t, func() bool { return true }, 0, 0)                               // good
}
`,
	}
	for name, text := range files {
		path := filepath.Join(root, filepath.FromSlash(name))
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, []byte(text), 0o600))
	}
	bad := loadModule(t, root).violations(root)
	lines := make([]string, 0, len(bad))
	for _, b := range bad {
		lines = append(lines, strings.SplitN(b, ": ", 2)[0])
	}
	require.Equal(t, []string{
		"p/p_test.go:23", "p/p_test.go:24", "p/p_test.go:25", "p/p_test.go:26",
		"p/p_test.go:27", "p/p_test.go:28", "p/p_test.go:29", "p/p_test.go:30",
		"p/p_test.go:34", "p/p_test.go:35", "p/p_test.go:36", "p/p_test.go:37",
	}, lines, strings.Join(bad, "\n"))
}
