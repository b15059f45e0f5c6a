// Package internal_test checks the import rules of docs/architecture.md:
// it fails when a package imports what its layer may not.
package internal_test

import (
	"encoding/json"
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"io/fs"
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
