package mockserver

import (
	"go/ast"
	"go/parser"
	"go/token"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Timing cannot be measured reliably enough in a test to show that keys are
// compared in constant time, so this test reads the code instead: the
// functions that check API keys and the control token must compare with
// crypto/subtle, must not compare the token with == or !=, and must not look
// it up in a map (a hash lookup ends early on a mismatch). It fails when
// someone "simplifies" either check. sameDigest (auth.go) is the one
// comparison; the API key and control token checks must call it, or
// sameSecret, which does.
func TestSecretsAreComparedInConstantTime(t *testing.T) {
	for _, tc := range []struct {
		file, fn, secret string
	}{
		{"auth.go", "sameDigest", "got"},
		{"auth.go", "sameSecret", "presented"},
		{"auth.go", "lookupKey", "token"},
		{"auth.go", "authenticateControl", "token"},
	} {
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, tc.file, nil, 0)
		require.NoError(t, err)
		var body *ast.BlockStmt
		for _, d := range f.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Name.Name == tc.fn {
				body = fd.Body
			}
		}
		require.NotNil(t, body, "%s: no func %s; update this test if the check moved", tc.file, tc.fn)
		subtle := false
		ast.Inspect(body, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.SelectorExpr:
				if x, ok := n.X.(*ast.Ident); ok && x.Name == "subtle" && n.Sel.Name == "ConstantTimeCompare" {
					subtle = true
				}
			case *ast.CallExpr:
				// sameDigest is the one constant-time comparison (checked
				// itself, first in the table); the others must go through
				// it, directly or through sameSecret.
				if id, ok := n.Fun.(*ast.Ident); ok && (id.Name == "sameDigest" || id.Name == "sameSecret") && id.Name != tc.fn {
					subtle = true
				}
			case *ast.BinaryExpr:
				if n.Op == token.EQL || n.Op == token.NEQ {
					for _, side := range []ast.Expr{n.X, n.Y} {
						if id, ok := side.(*ast.Ident); ok && id.Name == tc.secret {
							t.Errorf("%s: %s compares %s with %s", fset.Position(n.Pos()), tc.fn, tc.secret, n.Op)
						}
					}
				}
			case *ast.IndexExpr:
				if id, ok := n.Index.(*ast.Ident); ok && id.Name == tc.secret {
					t.Errorf("%s: %s looks %s up by index", fset.Position(n.Pos()), tc.fn, tc.secret)
				}
			}
			return true
		})
		assert.True(t, subtle, "%s: %s compares with subtle.ConstantTimeCompare (through sameDigest)", tc.file, tc.fn)
	}
}
