package internal_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// goFiles parses every Go file under dir (tests too when tests is set)
// and calls fn with each file's path, relative to internal/.
func goFiles(t *testing.T, dir string, tests bool, fn func(path string, f *ast.File, fset *token.FileSet)) {
	t.Helper()
	fset := token.NewFileSet()
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || (!tests && strings.HasSuffix(path, "_test.go")) {
			return err
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		fn(filepath.ToSlash(path), f, fset)
		return nil
	})
	require.NoError(t, err)
}

// TestOnlyTransferStepsSends: the send engine (internal/transfer) is the
// one writer of the store's send steps, so no other package can move a
// transfer between send states, and with it risk a second send.
func TestOnlyTransferStepsSends(t *testing.T) {
	t.Parallel()
	vocabulary := map[string]bool{"SendStep": true, "PayoutStep": true, "StepSend": true, "StepSendGrouped": true, "StepPayouts": true}
	goFiles(t, ".", true, func(path string, f *ast.File, fset *token.FileSet) {
		if strings.HasPrefix(path, "store/") || strings.HasPrefix(path, "transfer/") {
			return
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if sel, ok := n.(*ast.SelectorExpr); ok && vocabulary[sel.Sel.Name] {
				t.Errorf("%s: %s uses the store's send vocabulary (%s): only internal/transfer steps a send", fset.Position(sel.Pos()), path, sel.Sel.Name)
			}
			return true
		})
	})
}

// TestUseCasesBuildNoProviderState: the use cases apply only what a
// provider reported; a state of a transfer, a recurrence or a cycle made
// up in gateway, cashin or recurrence would be money moved on nobody's word.
func TestUseCasesBuildNoProviderState(t *testing.T) {
	t.Parallel()
	for _, dir := range []string{"gateway", "recurrence", "cashin"} {
		goFiles(t, dir, false, func(path string, f *ast.File, fset *token.FileSet) {
			for _, d := range f.Decls {
				fd, ok := d.(*ast.FuncDecl)
				if !ok {
					continue
				}
				ast.Inspect(fd, func(n ast.Node) bool {
					lit, ok := n.(*ast.CompositeLit)
					if !ok {
						return true
					}
					sel, ok := lit.Type.(*ast.SelectorExpr)
					if !ok {
						return true
					}
					pkg, _ := sel.X.(*ast.Ident)
					if pkg != nil && pkg.Name == "provider" && (strings.HasSuffix(sel.Sel.Name, "State") || sel.Sel.Name == "Attempt") {
						t.Errorf("%s: %s builds a provider.%s: apply what the provider reported", fset.Position(lit.Pos()), fd.Name.Name, sel.Sel.Name)
					}
					return true
				})
			}
		})
	}
}
