// Package clientfacts holds what each released official client of the API
// reads back from it: one file per client version, <language>-<version>.json,
// in the form of package openapi/facts, each naming the client and version
// it was read from. extract.cjs reads a TypeScript client (its source or its
// npm package's declaration files), extract_python.py a Python client's
// source; the Makefile's client-facts targets regenerate the files.
package clientfacts

import (
	"embed"
	"fmt"
	"io/fs"
	"sort"
	"strings"

	"github.com/agentruns/agentruns/openapi/facts"
)

//go:embed *.json
var files embed.FS

// All returns the facts of every known client version, read fresh (callers
// may change them), ordered by language, then by version as released.
func All() ([]*facts.Facts, error) {
	names, err := fs.Glob(files, "*.json")
	if err != nil {
		return nil, err
	}
	var all []*facts.Facts
	for _, name := range names {
		b, err := files.ReadFile(name)
		if err != nil {
			return nil, err
		}
		f, err := facts.Unmarshal(b)
		if err != nil {
			return nil, fmt.Errorf("clientfacts: %s: %w", name, err)
		}
		if f.Client == nil || Name(f.Client)+".json" != name {
			return nil, fmt.Errorf("clientfacts: %s does not name the client it came from as its file name says", name)
		}
		all = append(all, f)
	}
	sort.SliceStable(all, func(i, j int) bool {
		a, b := all[i].Client, all[j].Client
		if a.Language != b.Language {
			return a.Language < b.Language
		}
		return lessVersion(a.Version, b.Version)
	})
	return all, nil
}

// Name is how a client version is named on command lines and in reports:
// "typescript-1.0.0-alpha.8", "python-0.11.0".
func Name(c *facts.Client) string { return c.Language + "-" + c.Version }

// lessVersion orders semantic versions: numbers by value, a pre-release
// before its release.
func lessVersion(a, b string) bool {
	coreA, preA, _ := strings.Cut(a, "-")
	coreB, preB, _ := strings.Cut(b, "-")
	if c := compareDotted(coreA, coreB); c != 0 {
		return c < 0
	}
	if (preA == "") != (preB == "") {
		return preA != ""
	}
	return compareDotted(preA, preB) < 0
}

func compareDotted(a, b string) int {
	pa, pb := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < len(pa) && i < len(pb); i++ {
		na, errA := atoi(pa[i])
		nb, errB := atoi(pb[i])
		switch {
		case errA == nil && errB == nil && na != nb:
			if na < nb {
				return -1
			}
			return 1
		case (errA != nil || errB != nil) && pa[i] != pb[i]:
			return strings.Compare(pa[i], pb[i])
		}
	}
	return len(pa) - len(pb)
}

func atoi(s string) (int, error) {
	var n int
	_, err := fmt.Sscanf(s, "%d", &n)
	if err != nil || fmt.Sprint(n) != s {
		return 0, fmt.Errorf("not a number: %q", s)
	}
	return n, nil
}
