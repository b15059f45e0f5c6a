// Package internal_test checks the import rules of docs/architecture.md
// (it fails when a package imports what its layer may not) and the size
// limits of every Go file and function of the module.
package internal_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

const module = "github.com/pixgate/pixgate"

// pkg is what go list tells of one package: its direct imports, and every
// package it needs to build (non-test files only).
type pkg struct {
	ImportPath string
	Imports    []string
	Deps       []string
}

// listPackages runs go list over the whole module.
func listPackages(t *testing.T) map[string]pkg {
	t.Helper()
	out, err := exec.Command("go", "list", "-json", module+"/...").Output()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		t.Fatalf("go list: %v\n%s", err, ee.Stderr)
	}
	require.NoError(t, err)
	pkgs := map[string]pkg{}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for {
		var p pkg
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else {
			require.NoError(t, err)
		}
		pkgs[p.ImportPath] = p
	}
	require.Contains(t, pkgs, module+"/internal/gateway", "go list found the module's packages")
	return pkgs
}

// within reports whether path is the package base or one below it.
func within(path, base string) bool { return path == base || strings.HasPrefix(path, base+"/") }

func TestImportBoundaries(t *testing.T) {
	t.Parallel()
	pkgs := listPackages(t)

	// The HTTP API and the panel reach the database and the PSP only
	// through gateway (money, client authentication) and backoffice (the
	// panel's users, sessions, operators' tools and views): not even a
	// type of the store or of the simulator. The API has no business with the back office.
	for name, forbidden := range map[string][]string{
		"internal/httpapi": {"internal/store", "internal/provider/sandbox", "internal/backoffice"},
		"internal/admin":   {"internal/store", "internal/provider/sandbox"},
	} {
		p, ok := pkgs[module+"/"+name]
		require.True(t, ok, name)
		for _, imp := range p.Imports {
			for _, f := range forbidden {
				require.False(t, within(imp, module+"/"+f), "%s imports %s: go through gateway or backoffice", name, imp)
			}
		}
	}

	// One money path: the gateway drives every provider through the
	// provider seam alone, so it links no provider implementation.
	gw := pkgs[module+"/internal/gateway"]
	for _, dep := range gw.Deps {
		for _, impl := range []string{"internal/provider/sandbox", "internal/provider/apipix", "internal/provider/efi"} {
			require.False(t, within(dep, module+"/"+impl), "gateway depends on %s: it talks to providers only through the seam", dep)
		}
	}

	// gateway and backoffice are siblings over the store: the back office
	// moves no money, and the use cases know nothing of the panel.
	for name, forbidden := range map[string]string{
		"internal/gateway":    "internal/backoffice",
		"internal/backoffice": "internal/gateway",
	} {
		p, ok := pkgs[module+"/"+name]
		require.True(t, ok, name)
		for _, dep := range p.Deps {
			require.False(t, within(dep, module+"/"+forbidden), "%s depends on %s", name, dep)
		}
	}

	// The domain core needs nothing else of this module, even indirectly:
	// pix nothing at all, ledger and brcode at most pix (ledger counts in
	// pix.Amount).
	for name, allowed := range map[string][]string{
		"internal/pix":    nil,
		"internal/ledger": {module + "/internal/pix"},
		"internal/brcode": {module + "/internal/pix"},
	} {
		p, ok := pkgs[module+"/"+name]
		require.True(t, ok, name)
		for _, dep := range p.Deps {
			if within(dep, module) {
				require.Contains(t, allowed, dep, "%s depends on %s: the core imports no other package of this module", name, dep)
			}
		}
	}

	// The simulation is a tool beside the product: the pixgate binary
	// never links it.
	bin, ok := pkgs[module+"/cmd/pixgate"]
	require.True(t, ok, "cmd/pixgate")
	for _, dep := range bin.Deps {
		require.False(t, within(dep, module+"/internal/sim"), "pixgate links %s: the simulation is a test tool", dep)
	}

	// Test helpers are for tests: no product package links them.
	for path, p := range pkgs {
		if within(path, module+"/internal/testkit") || within(path, module+"/internal/cli") {
			continue
		}
		for _, imp := range p.Imports {
			require.False(t, within(imp, module+"/internal/testkit"), "%s imports %s outside its tests", path, imp)
		}
	}
}

// TestProcessTestsSkipShort: the tests that start pixgate processes live
// in test/e2e, whose TestMain skips them all under -short, or in the
// simulation's, the bench's and the examples' own tests, which skip
// themselves; so `go test -short ./...` starts no pixgate process.
func TestProcessTestsSkipShort(t *testing.T) {
	t.Parallel()
	root := ".."
	starts := map[string]bool{"Binary": true, "ServeProcess": true, "Command": true}
	var e2eMain bool
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != root && (strings.HasPrefix(name, ".") || name == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
		if err != nil {
			return err
		}
		rel := filepath.ToSlash(strings.TrimPrefix(path, root+string(filepath.Separator)))
		var startsProcess, short bool
		ast.Inspect(f, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if x, ok := sel.X.(*ast.Ident); ok {
				startsProcess = startsProcess || (x.Name == "testkit" && starts[sel.Sel.Name])
				short = short || (x.Name == "testing" && sel.Sel.Name == "Short")
			}
			return true
		})
		if strings.HasPrefix(rel, "test/e2e/") {
			for _, decl := range f.Decls {
				if fn, ok := decl.(*ast.FuncDecl); ok && fn.Name.Name == "TestMain" && short {
					e2eMain = true
				}
			}
			return nil
		}
		if startsProcess {
			require.True(t, strings.HasPrefix(rel, "internal/sim/") || strings.HasPrefix(rel, "cmd/pixgate-bench/") || strings.HasPrefix(rel, "examples/"),
				"%s starts pixgate processes: process-level tests belong in test/e2e", rel)
			require.True(t, short, "%s starts pixgate processes but never calls testing.Short(): go test -short must skip it", rel)
		}
		return nil
	})
	require.NoError(t, err)
	require.True(t, e2eMain, "test/e2e has no TestMain that calls testing.Short(): go test -short would run its processes")
}

// TestNamesDefinedOnce: each environment, provider and webhook event name
// is written once, as a constant (pix, provider), and every other
// product file refers to that constant. Tests and test helpers may spell
// the wire format out.
func TestNamesDefinedOnce(t *testing.T) {
	t.Parallel()
	events := []string{"pix.cashin.paid", "pix.cashin.cancelled", "pix.cashout.paid", "pix.cashout.failed",
		"pix.cashout.reversed", "pix.refund.completed", "pix.refund.failed"}
	names := map[string]bool{"sandbox": true, "production": true, "apipix": true, "efi": true}
	definitions := map[string]bool{"sandbox": true, "production": true}
	for _, e := range events {
		names[e], definitions[e] = true, true
	}
	// Where a literal is the definition, or not the name at all.
	allowed := map[string]map[string]bool{
		"internal/pix/names.go":          definitions,
		"internal/provider/provider.go":  {"sandbox": true, "apipix": true, "efi": true},
		"internal/admin/i18n.go":         {"sandbox": true, "production": true}, // the panel's English words
		"internal/backoffice/clients.go": {"sandbox": true},                     // the sandbox client's name
	}
	root := ".."
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel := filepath.ToSlash(strings.TrimPrefix(path, root+string(filepath.Separator)))
		if d.IsDir() {
			if path != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" ||
				rel == "internal/testkit" || rel == "internal/store/storetest" || rel == "internal/ratelimit/ratelimittest") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			s, err := strconv.Unquote(lit.Value)
			if err == nil && names[s] && !allowed[rel][s] {
				t.Errorf("%s: %q is written out: refer to its constant (pix.Env…, pix.Event…, provider.Name…)", fset.Position(lit.Pos()), s)
			}
			return true
		})
		return nil
	})
	require.NoError(t, err)
}

// The size limits (issue 42): a file is read whole and a function is one
// behaviour, so neither grows past what a reader holds at once.
const (
	maxFileLines = 800 // any .go file, tests included
	maxFuncLines = 100 // production functions, from func to its closing brace
	// maxSuiteLines bounds the functions of storetest, the behaviour suite
	// both drivers pass, whose exercises read as one scenario each.
	maxSuiteLines = 200
	suiteDir      = "internal/store/storetest/"
)

// longByNature are the functions exempt from maxFuncLines, keyed as
// sizeViolations keys them: tables written as code, not behaviour.
var longByNature = map[string]bool{
	"internal/qr/tables.go newTemplate": true, // the QR symbol's fixed patterns, version by version
}

// pendingLimits are the files and functions over the limits on main when
// the limits test came, in packages being split at the same time; each
// goes as its split lands. Any other violation fails at once.
var pendingLimits = map[string]bool{}

// funcName is how sizeViolations names fn: its name, after its receiver's
// type for a method (Service.CreateCharge).
func funcName(fn *ast.FuncDecl) string {
	if fn.Recv == nil || len(fn.Recv.List) == 0 {
		return fn.Name.Name
	}
	typ := fn.Recv.List[0].Type
	for {
		switch x := typ.(type) {
		case *ast.StarExpr:
			typ = x.X
			continue
		case *ast.IndexExpr:
			typ = x.X
			continue
		case *ast.IndexListExpr:
			typ = x.X
			continue
		case *ast.Ident:
			return x.Name + "." + fn.Name.Name
		}
		return fn.Name.Name
	}
}

// sizeViolations walks every Go file under root and returns what breaks
// the limits, keyed "file" or "file function" (the file relative to root,
// the function as funcName names it), and how many files it read: files
// over maxFileLines, production functions over maxFuncLines (outside
// storetest and longByNature), and storetest's functions over
// maxSuiteLines.
func sizeViolations(t *testing.T, root string) (map[string]string, int) {
	t.Helper()
	out := map[string]string{}
	files := 0
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
		files++
		rel := filepath.ToSlash(strings.TrimPrefix(path, root+string(filepath.Separator)))
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		if n := fset.File(f.Pos()).LineCount(); n > maxFileLines {
			out[rel] = fmt.Sprintf("%s has %d lines (at most %d): split it by behaviour", rel, n, maxFileLines)
		}
		limit := maxFuncLines
		switch {
		case strings.HasPrefix(rel, suiteDir):
			limit = maxSuiteLines
		case strings.HasSuffix(rel, "_test.go"):
			return nil
		}
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			name := funcName(fn)
			key := rel + " " + name
			n := fset.Position(fn.End()).Line - fset.Position(fn.Pos()).Line + 1
			if n > limit && !longByNature[key] {
				out[key] = fmt.Sprintf("%s: %s has %d lines (at most %d): one function per behaviour", rel, name, n, limit)
			}
		}
		return nil
	})
	require.NoError(t, err)
	return out, files
}

// TestSizeLimits fails on every file and function of the module over the
// limits that is not pending.
func TestSizeLimits(t *testing.T) {
	t.Parallel()
	found, files := sizeViolations(t, "..")
	require.Greater(t, files, 100, "the walk read the module")
	for key, msg := range found {
		if !pendingLimits[key] {
			t.Error(msg)
		}
	}
	for key := range pendingLimits {
		if _, ok := found[key]; !ok {
			t.Logf("%s is within the limits now: remove it from pendingLimits", key)
		}
	}
}

// TestSizeViolations: sizeViolations finds each kind of violation, one line
// past its limit, and nothing at the limit; tests' functions have no limit
// but storetest's, and longByNature's are exempt.
func TestSizeViolations(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	write := func(rel string, src string) {
		path := filepath.Join(root, filepath.FromSlash(rel))
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o750))
		require.NoError(t, os.WriteFile(path, []byte(src), 0o600))
	}
	// fn is a function of n lines, func to closing brace.
	fn := func(name string, n int) string {
		return "func " + name + "() {\n" + strings.Repeat("\t_ = 0\n", n-2) + "}\n"
	}
	write("a/long.go", "package a\n\n"+fn("atLimit", maxFuncLines)+fn("pastLimit", maxFuncLines+1)+
		"type T struct{}\n\nfunc (*T) "+strings.TrimPrefix(fn("method", maxFuncLines+1), "func "))
	write("a/long_test.go", "package a\n\n"+fn("testHelper", maxSuiteLines+1))
	write("a/big_test.go", "package a\n"+strings.Repeat("\n", maxFileLines-1))
	write("a/bigger.go", "package a\n"+strings.Repeat("\n", maxFileLines))
	write("internal/store/storetest/suite.go", "package storetest\n\n"+fn("atSuiteLimit", maxSuiteLines)+fn("pastSuiteLimit", maxSuiteLines+1))
	write("internal/store/storetest/suite_test.go", "package storetest\n\n"+fn("pastInTest", maxSuiteLines+1))
	write("internal/qr/tables.go", "package qr\n\n"+fn("newTemplate", 3*maxFuncLines)+fn("other", maxFuncLines+1))
	write("a/testdata/skipped.go", "package skipped\n\n"+fn("ignored", 3*maxFuncLines))

	found, files := sizeViolations(t, root)
	require.Equal(t, 7, files)
	keys := make([]string, 0, len(found))
	for k := range found {
		keys = append(keys, k)
	}
	require.ElementsMatch(t, []string{
		"a/long.go pastLimit",
		"a/long.go T.method",
		"a/bigger.go",
		"internal/store/storetest/suite.go pastSuiteLimit",
		"internal/store/storetest/suite_test.go pastInTest",
		"internal/qr/tables.go other",
	}, keys)
	require.Contains(t, found["a/long.go pastLimit"], "101 lines")
}
