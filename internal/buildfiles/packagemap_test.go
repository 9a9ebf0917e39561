package buildfiles

import (
	"bytes"
	"encoding/json"
	"io"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const module = "github.com/agentruns/agentruns"

// mapRow is one row of README's package map: the packages it names (a
// trailing /* names every package below) and what they may import.
type mapRow struct {
	packages []string
	// mayImport lists the packages of ours the row allows; ours says
	// whether any may be imported at all, std whether only the standard
	// library may be, and above whether every package of earlier rows may.
	mayImport []string
	ours      bool
	stdOnly   bool
	above     bool
	line      string
}

var backticked = regexp.MustCompile("`([^`]+)`")

// packageMap reads the table under "## Package map" in README.md.
func packageMap(t *testing.T) []mapRow {
	t.Helper()
	readme := read(t, "README.md")
	_, section, ok := strings.Cut(readme, "\n## Package map\n")
	require.True(t, ok, "README.md has no Package map section")
	var rows []mapRow
	for _, line := range strings.Split(section, "\n") {
		if strings.HasPrefix(line, "## ") {
			break
		}
		cells := strings.Split(strings.Trim(line, "| "), "|")
		if len(cells) != 3 || strings.HasPrefix(strings.TrimSpace(cells[0]), "---") || strings.TrimSpace(cells[0]) == "package" {
			continue
		}
		row := mapRow{line: line}
		for _, m := range backticked.FindAllStringSubmatch(cells[0], -1) {
			row.packages = append(row.packages, m[1])
		}
		may := strings.TrimSpace(cells[2])
		switch {
		case may == "(standard library)":
			row.stdOnly = true
		case may == "(libraries only)" || may == "nothing of ours":
		case may == "the packages above":
			row.ours, row.above = true, true
		default:
			row.ours = true
			for _, m := range backticked.FindAllStringSubmatch(may, -1) {
				row.mayImport = append(row.mayImport, m[1])
			}
			require.NotEmpty(t, row.mayImport, "README's package map: cannot read %q", may)
		}
		require.NotEmpty(t, row.packages, "README's package map: a row names no package: %s", line)
		rows = append(rows, row)
	}
	require.NotEmpty(t, rows, "README's package map is empty")
	return rows
}

func (r mapRow) names(pkg string) bool {
	for _, p := range r.packages {
		if p == pkg || strings.HasSuffix(p, "/*") && strings.HasPrefix(pkg, strings.TrimSuffix(p, "*")) {
			return true
		}
	}
	return false
}

// listed is one package as `go list -json` describes it.
type listed struct {
	ImportPath string
	Imports    []string
	Standard   bool
}

// goList lists every package of the module with what its code (not its
// tests, which may use any package to drive another) imports.
func goList(t *testing.T) []listed {
	t.Helper()
	cmd := exec.Command("go", "list", "-json", "./...")
	cmd.Dir = "../.."
	out, err := cmd.Output()
	require.NoError(t, err, "go list")
	var pkgs []listed
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p listed
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else {
			require.NoError(t, err)
		}
		pkgs = append(pkgs, p)
	}
	return pkgs
}

// TestPackagesImportWhatTheMapAllows holds the code to README's package
// map: every package of the module is in the map, and imports no package
// of ours the map does not allow it (nor a library where the map says
// standard library only).
func TestPackagesImportWhatTheMapAllows(t *testing.T) {
	rows := packageMap(t)
	for _, p := range goList(t) {
		pkg := strings.TrimPrefix(strings.TrimPrefix(p.ImportPath, module), "/")
		at := -1
		for i, r := range rows {
			if r.names(pkg) {
				at = i
				break
			}
		}
		if !assert.GreaterOrEqual(t, at, 0, "package %s is not in README's package map", pkg) {
			continue
		}
		row := rows[at]
		for _, imp := range p.Imports {
			ourPkg, ours := strings.CutPrefix(imp, module+"/")
			switch {
			case !ours && row.stdOnly:
				assert.False(t, strings.Contains(strings.SplitN(imp, "/", 2)[0], "."),
					"%s imports the library %s; README's package map allows it the standard library only", pkg, imp)
			case !ours:
			case !row.ours:
				t.Errorf("%s imports %s; README's package map allows it no package of ours (%s)", pkg, ourPkg, row.line)
			case row.above:
				allowed := false
				for _, r := range rows[:at] {
					allowed = allowed || r.names(ourPkg)
				}
				assert.True(t, allowed, "%s imports %s, which is not a package above it in README's package map", pkg, ourPkg)
			default:
				assert.Contains(t, row.mayImport, ourPkg, "%s imports %s; README's package map allows it only %s", pkg, ourPkg, strings.Join(row.mayImport, ", "))
			}
		}
	}
}

// TestTheMapsArrowsPointDown holds README's promise that arrows point down
// the package map: every package a row allows sits in an earlier row, so
// a reader going down the table meets a package after everything it
// builds on, and no two rows allow each other (within
// one row, as `internal/browsertest`, `internal/junitcheck`, one may
// import the other).
func TestTheMapsArrowsPointDown(t *testing.T) {
	rows := packageMap(t)
	for i, r := range rows {
		for _, imp := range r.mayImport {
			above := r.names(imp) // a row of several: one may import another
			for _, earlier := range rows[:i] {
				above = above || earlier.names(imp)
			}
			assert.True(t, above, "README's package map: %s may import %s, which is not above it: %s", strings.Join(r.packages, ", "), imp, r.line)
		}
	}
}
