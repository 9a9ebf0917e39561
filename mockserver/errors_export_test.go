package mockserver_test

import (
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentruns/agentruns/mockserver"
)

// A caller of the Go API outside this module matches the mock's errors
// through package mockserver alone: it cannot import mockserver/store.
func TestGoCallersMatchTheMocksErrors(t *testing.T) {
	srv, err := mockserver.New(mockserver.Options{})
	require.NoError(t, err)
	s := srv.DefaultSession()
	_, err = s.Run("no-such-run")
	assert.ErrorIs(t, err, mockserver.ErrRunNotFound)
	s.Freeze()
	_, err = s.SetNow(s.Now().Add(-time.Hour))
	assert.ErrorIs(t, err, mockserver.ErrClockBackwards)
	_, err = s.FireSchedule("no-such-schedule")
	assert.ErrorIs(t, err, mockserver.ErrScheduleNotFound)
	err = nil
	for i := 0; err == nil; i++ {
		_, err = s.AddFate(mockserver.FateRule{PromptPattern: fmt.Sprintf("rule %d", i), State: mockserver.Failed})
	}
	assert.ErrorIs(t, err, mockserver.ErrTooManyRules)
	_, err = s.Conversation("no-such-run")
	assert.True(t, errors.Is(err, mockserver.ErrRunNotFound) || errors.Is(err, mockserver.ErrNoConversation), "%v", err)
}

// Every sentinel the store exports is exported by the mock, under the
// same name (the state file's under the name the Go API has always used),
// so a new one cannot be left where only this module can reach it.
func TestEveryStoreErrorIsExported(t *testing.T) {
	exported := func(dir string) map[string]string {
		entries, err := os.ReadDir(dir)
		require.NoError(t, err)
		fset := token.NewFileSet()
		var files []*ast.File
		for _, e := range entries {
			if name := e.Name(); strings.HasSuffix(name, ".go") && !strings.HasSuffix(name, "_test.go") {
				f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, 0)
				require.NoError(t, err)
				files = append(files, f)
			}
		}
		out := map[string]string{}
		for _, f := range files {
			for _, d := range f.Decls {
				g, ok := d.(*ast.GenDecl)
				if !ok || g.Tok != token.VAR {
					continue
				}
				for _, spec := range g.Specs {
					vs := spec.(*ast.ValueSpec)
					for i, n := range vs.Names {
						if !strings.HasPrefix(n.Name, "Err") {
							continue
						}
						out[n.Name] = ""
						if i < len(vs.Values) {
							if sel, ok := vs.Values[i].(*ast.SelectorExpr); ok {
								out[n.Name] = sel.Sel.Name
							}
						}
					}
				}
			}
		}
		return out
	}
	reexported := map[string]bool{}
	for _, of := range exported(".") {
		reexported[of] = true
	}
	for name := range exported("../mockserver/store") {
		assert.True(t, reexported[name], "store.%s is not exported by package mockserver", name)
	}
}
