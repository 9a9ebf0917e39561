package openapi_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The API document is read in one place, the model (package openapi,
// model.go): every other package asks a Model what it needs. This test
// holds the project to that by reading the source of every package but
// the tests:
//
//   - only package openapi imports libopenapi or its validator;
//   - inside it, only model.go starts a parse (libopenapi.NewDocument...,
//     yaml.Unmarshal); the overlay engine (overlay.go) is the one other
//     reader of a document, and its output is read through Load;
//   - outside it, a YAML library is imported only to write YAML
//     (NewEncoder, Marshal), never to read a document.
//
// openapi/facts is the one exception: it reads the facts of any OpenAPI
// document (the service's, a released client's) into a format of its own.

var yamlLibraries = map[string]bool{
	"github.com/pb33f/go-yaml": true, "gopkg.in/yaml.v3": true, "gopkg.in/yaml.v2": true,
	"go.yaml.in/yaml/v3": true, "go.yaml.in/yaml/v4": true, "sigs.k8s.io/yaml": true, "github.com/goccy/go-yaml": true,
}

// writeOnly are what a package other than the model may use of a YAML
// library.
var writeOnly = map[string]bool{"NewEncoder": true, "Marshal": true}

// parseExceptions are the directories, from the module's root, allowed to
// read an OpenAPI document with a YAML library, and why.
var parseExceptions = map[string]string{
	"openapi/facts": "the facts of any OpenAPI document, a format of their own",
}

type sourceFile struct {
	dir, name string // dir from the module's root, slash-separated
	file      *ast.File
}

// productionSources parses every non-test Go file of the module.
func productionSources(t *testing.T) []sourceFile {
	t.Helper()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("the module's root is not %s: %v", root, err)
	}
	var out []sourceFile
	fset := token.NewFileSet()
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != root && (name == "testdata" || name == "vendor" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, filepath.Dir(path))
		out = append(out, sourceFile{dir: filepath.ToSlash(rel), name: filepath.Base(path), file: f})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// imports maps the local name of each import of f to its path.
func imports(f *ast.File) map[string]string {
	out := map[string]string{}
	for _, imp := range f.Imports {
		path, _ := strconv.Unquote(imp.Path.Value)
		name := path[strings.LastIndex(path, "/")+1:]
		switch {
		case imp.Name != nil:
			name = imp.Name.Name
		case yamlLibraries[path]:
			name = "yaml"
		case strings.HasPrefix(path, "github.com/pb33f/libopenapi-validator"):
			name = strings.TrimPrefix(name, "libopenapi-")
		}
		out[name] = path
	}
	return out
}

// uses lists the selectors pkg.Sel of f whose pkg is imported as path
// for which match holds.
func uses(f *ast.File, match func(path string) bool) []string {
	names := imports(f)
	var out []string
	ast.Inspect(f, func(n ast.Node) bool {
		sel, ok := n.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		if id, ok := sel.X.(*ast.Ident); ok && match(names[id.Name]) {
			out = append(out, id.Name+"."+sel.Sel.Name)
		}
		return true
	})
	return out
}

func isLibopenapi(path string) bool {
	return path == "github.com/pb33f/libopenapi" || strings.HasPrefix(path, "github.com/pb33f/libopenapi/") ||
		path == "github.com/pb33f/libopenapi-validator" || strings.HasPrefix(path, "github.com/pb33f/libopenapi-validator/")
}

func TestTheDocumentIsParsedInOnePlace(t *testing.T) {
	sources := productionSources(t)
	modelImportsLibrary, modelParses := false, false
	for _, s := range sources {
		at := s.dir + "/" + s.name
		for _, imp := range s.file.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if isLibopenapi(path) {
				if s.dir != "openapi" {
					t.Errorf("%s imports %s: only the model (package openapi) reads the document with libopenapi; ask an openapi.Model", at, path)
				} else if s.name == "model.go" && path == "github.com/pb33f/libopenapi" {
					modelImportsLibrary = true
				}
			}
		}
		if s.dir == "openapi" {
			for _, u := range uses(s.file, func(p string) bool { return p == "github.com/pb33f/libopenapi" || yamlLibraries[p] }) {
				parse := strings.HasPrefix(u, "libopenapi.NewDocument") || u == "yaml.Unmarshal" || u == "yaml.NewDecoder"
				if parse && s.name != "model.go" {
					t.Errorf("%s calls %s: the model parses in model.go alone (Load, parseNode, Tree)", at, u)
				}
				modelParses = modelParses || parse && s.name == "model.go"
			}
			continue
		}
		if _, ok := parseExceptions[s.dir]; ok {
			continue
		}
		for _, u := range uses(s.file, func(p string) bool { return yamlLibraries[p] }) {
			if _, sel, _ := strings.Cut(u, "."); !writeOnly[sel] {
				t.Errorf("%s uses %s: outside the model a YAML library only writes; ask an openapi.Model for the document", at, u)
			}
		}
	}
	// The scan must see the model itself, or it proves nothing.
	if !modelImportsLibrary || !modelParses {
		t.Fatalf("the scan did not find the model's own parse in openapi/model.go (import %v, parse %v): the test reads the wrong files", modelImportsLibrary, modelParses)
	}
}
