// Package internal_test checks the import rules of docs/architecture.md:
// it fails when a package imports what its layer may not.
package internal_test

import (
	"encoding/json"
	"errors"
	"io"
	"os/exec"
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
	// through gateway (money, clients) and backoffice (the panel's users,
	// sessions and views): not even a type of the store or of the
	// simulator. The API has no business with the back office.
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
