package mockserver

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The pipeline parses a request's query once and the body is decoded once
// (pipeline.go, body.go); a handler reads both from its call. Reading them
// again from the request costs every request a second parse, so this test
// reads the package's code for the ways back to the request:
//   - r.URL.Query() or url.ParseQuery anywhere but parseQuery (query.go);
//   - in a function handed a *call that is not one of the call's own
//     methods (body.go and the run create's reader): the call's body,
//     decoded value or decode, and the request's Body or raw query.
//
// The control API's bodies are the pipeline's exception: it reads no
// control body, and decodeControl (control.go) decodes each once, strictly.
func TestHandlersReadTheQueryAndBodyThePipelineParsed(t *testing.T) {
	names, err := filepath.Glob("*.go")
	require.NoError(t, err)
	fset := token.NewFileSet()
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		require.NoError(t, err)
		for _, msg := range readsAgain(f, name) {
			t.Errorf("%s: %s", fset.Position(msg.pos), msg.text)
		}
	}
}

type finding struct {
	pos  token.Pos
	text string
}

// readsAgain lists where the code of file f reads a request's query or
// body other than from what the pipeline handed on.
func readsAgain(f *ast.File, file string) []finding {
	var out []finding
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Body == nil {
			continue
		}
		callMethod := fd.Recv != nil && isCallPointer(fd.Recv.List[0].Type)
		ast.Inspect(fd.Body, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.CallExpr:
				if sel, ok := n.Fun.(*ast.SelectorExpr); ok {
					if inner, ok := sel.X.(*ast.SelectorExpr); ok && inner.Sel.Name == "URL" && sel.Sel.Name == "Query" {
						out = append(out, finding{n.Pos(), "reads the query again (URL.Query); use c.query"})
					}
					if pkg, ok := sel.X.(*ast.Ident); ok && pkg.Name == "url" && sel.Sel.Name == "ParseQuery" && !(file == "query.go" && fd.Name.Name == "parseQuery") {
						out = append(out, finding{n.Pos(), "parses a query outside parseQuery; use c.query"})
					}
				}
			case *ast.SelectorExpr:
				if callMethod {
					return true
				}
				root, path := selectorPath(n)
				if root == nil || !isCallParam(root) {
					return true
				}
				switch path {
				case "body", "decoded", "undecodable", "decode":
					out = append(out, finding{n.Pos(), "reads the body as bytes (c." + path + "); use c.fill or c.object, which read it decoded once"})
				case "r.Body", "r.GetBody", "r.Form", "r.PostForm", "r.URL.RawQuery":
					out = append(out, finding{n.Pos(), "reads the request again (c." + path + "); use c.query, c.fill or c.object"})
				}
			}
			return true
		})
	}
	return out
}

// selectorPath is the root identifier of a chain of selectors, and the
// names after it: c.r.URL is c and "r.URL".
func selectorPath(e *ast.SelectorExpr) (*ast.Ident, string) {
	names := []string{e.Sel.Name}
	x := e.X
	for {
		switch v := x.(type) {
		case *ast.SelectorExpr:
			names = append([]string{v.Sel.Name}, names...)
			x = v.X
		case *ast.Ident:
			return v, strings.Join(names, ".")
		default:
			return nil, ""
		}
	}
}

// isCallParam reports whether id is a parameter of type *call.
func isCallParam(id *ast.Ident) bool {
	if id.Obj == nil || id.Obj.Kind != ast.Var {
		return false
	}
	field, ok := id.Obj.Decl.(*ast.Field)
	return ok && isCallPointer(field.Type)
}

func isCallPointer(e ast.Expr) bool {
	star, ok := e.(*ast.StarExpr)
	if !ok {
		return false
	}
	id, ok := star.X.(*ast.Ident)
	return ok && id.Name == "call"
}

// The rule catches what it is about: a handler that reads the query or the
// body again, written as the handlers were before the pipeline handed them on.
func TestReadsAgainFindsRereads(t *testing.T) {
	src := `package mockserver
func (s *Server) listThings(c *call) response {
	q := c.r.URL.Query()
	_ = c.r.URL.RawQuery
	var req thingRequest
	if aerr := c.decode(&req); aerr != nil {
		return fail(aerr)
	}
	settings, _ := readSettings(c.body)
	_ = func(c *call) { _ = c.r.Body }
	return ok(q)
}
func (c *call) fine() { _ = c.body; _ = c.decoded }
func parse(raw string) { url.ParseQuery(raw) }
`
	f, err := parser.ParseFile(token.NewFileSet(), "things_handlers.go", src, 0)
	require.NoError(t, err)
	var texts []string
	for _, m := range readsAgain(f, "things_handlers.go") {
		texts = append(texts, m.text)
	}
	require.Len(t, texts, 6, strings.Join(texts, "\n"))
}
