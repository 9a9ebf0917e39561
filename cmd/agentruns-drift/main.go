// Command agentruns-drift works with what the validating proxy learns of a
// server beyond the OpenAPI document (package drift, docs/proxy.md):
//
//	agentruns-drift compare [--json] [--names A,B] A.json B.json
//	agentruns-drift apply [--document FILE] [--out FILE] OVERLAY.yaml
//
// compare reads two profiles the proxy wrote (--proxy-profile) for the same
// traffic to two servers, the mock and the real one, and lists how their
// answers differ; it exits 1 when they do, 0 when they do not. apply
// applies the overlay the proxy wrote (--proxy-overlay) to the document and
// writes the document it makes, checked to be valid OpenAPI. Both exit 2
// for a wrong command line or a file they cannot read: one that is not
// what they want (an overlay given as the document, a drift report given
// as a profile), or larger than 64 MiB (readcap.Limit).
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/agentruns/agentruns/drift"
	"github.com/agentruns/agentruns/internal/readcap"
	"github.com/agentruns/agentruns/openapi"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

// The exit statuses, as docs/proxy.md lists them.
const (
	exitSame    = 0
	exitDiffers = 1
	exitUsage   = 2
)

const usage = `Usage:
  agentruns-drift compare [--json] [--names A,B] A.json B.json
  agentruns-drift apply [--document FILE] [--out FILE] OVERLAY.yaml

compare lists how two profiles written by the proxy (--proxy-profile) for
the same traffic differ: per operation, the statuses, content types and
members seen on one side only, members seen with other types, and values of
an enum seen on one side only. Ids, times and the order of members never
count. Exit 1 when they differ, 0 when not, 2 for bad input.

apply applies an overlay written by the proxy (--proxy-overlay) to the
OpenAPI document (the embedded one unless --document) and writes the result
to --out or standard output, after checking it is a valid document.
`

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprint(stderr, usage)
		if len(args) == 0 {
			return exitUsage
		}
		return exitSame
	}
	var err error
	code := exitSame
	switch args[0] {
	case "compare":
		code, err = compare(args[1:], stdout, stderr)
	case "apply":
		err = apply(args[1:], stdout, stderr)
	default:
		err = fmt.Errorf("unknown command %q: give compare or apply", args[0])
	}
	if err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(stderr, "agentruns-drift:", err)
			return exitUsage
		}
		return exitSame
	}
	return code
}

func compare(args []string, stdout, stderr io.Writer) (int, error) {
	fs := flag.NewFlagSet("agentruns-drift compare", flag.ContinueOnError)
	fs.SetOutput(stderr)
	asJSON := fs.Bool("json", false, "write the differences as JSON instead of a table")
	names := fs.String("names", "", "what to call the two sides in the table, `A,B` (default: the files' names)")
	if err := fs.Parse(args); err != nil {
		return exitUsage, err
	}
	if fs.NArg() != 2 {
		return exitUsage, fmt.Errorf("compare needs two profiles, got %d argument(s) (flags go before the files)", fs.NArg())
	}
	left, right := fs.Arg(0), fs.Arg(1)
	ln, rn := sideName(left), sideName(right)
	if *names != "" {
		a, b, ok := strings.Cut(*names, ",")
		if !ok || a == "" || b == "" {
			return exitUsage, fmt.Errorf("--names wants two names separated by a comma, got %q", *names)
		}
		ln, rn = a, b
	}
	lp, err := readProfile(left)
	if err != nil {
		return exitUsage, err
	}
	rp, err := readProfile(right)
	if err != nil {
		return exitUsage, err
	}
	diffs := drift.Compare(lp, rp)
	if *asJSON {
		if diffs == nil {
			diffs = []drift.Difference{}
		}
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		out := comparison{Left: side{ln, left}, Right: side{rn, right}, Differences: diffs}
		if err := enc.Encode(out); err != nil {
			return exitUsage, err
		}
		// Read in a terminal as often as piped to a program.
		if _, err := stdout.Write(drift.PrintableJSON(b.Bytes())); err != nil {
			return exitUsage, err
		}
	} else if len(diffs) == 0 {
		fmt.Fprintf(stdout, "%s and %s answered the same traffic alike.\n", drift.Printable(ln), drift.Printable(rn))
	} else {
		fmt.Fprintf(stdout, "%d difference(s) between %s (%s) and %s (%s):\n\n", len(diffs),
			drift.Printable(ln), drift.Printable(left), drift.Printable(rn), drift.Printable(right))
		if err := drift.WriteTable(stdout, diffs, ln, rn); err != nil {
			return exitUsage, err
		}
	}
	if len(diffs) > 0 {
		return exitDiffers, nil
	}
	return exitSame, nil
}

// comparison is what --json writes: which side is which, and how they
// differ (each difference's left and right are the sides named here).
type comparison struct {
	Left        side               `json:"left"`
	Right       side               `json:"right"`
	Differences []drift.Difference `json:"differences"`
}

type side struct {
	Name string `json:"name"`
	File string `json:"file"`
}

func sideName(file string) string {
	return strings.TrimSuffix(filepath.Base(file), filepath.Ext(file))
}

// readProfile reads a profile, at most readcap.Limit of it, refusing a
// file that is not one (a drift report given by mistake would compare as
// empty).
func readProfile(file string) (drift.ProfileData, error) {
	var p drift.ProfileData
	b, err := readcap.File(file, readcap.Limit)
	if err != nil {
		return p, err
	}
	if strings.TrimSpace(string(b)) == "" {
		return p, fmt.Errorf("%s: not a profile: the file is empty", file)
	}
	var shape map[string]json.RawMessage
	if err := json.Unmarshal(b, &shape); err != nil {
		return p, fmt.Errorf("%s: not a profile: %v", file, err)
	}
	if _, ok := shape["operations"]; !ok {
		return p, fmt.Errorf("%s: not a profile (no \"operations\"): write one with --proxy-profile or GET /__mock/proxy/profile", file)
	}
	if err := json.Unmarshal(b, &p); err != nil {
		return p, fmt.Errorf("%s: not a profile: %v", file, err)
	}
	return p, nil
}

func apply(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("agentruns-drift apply", flag.ContinueOnError)
	fs.SetOutput(stderr)
	document := fs.String("document", "", "the OpenAPI document to apply the overlay to (default: the embedded openapi/openapi.yaml)")
	out := fs.String("out", "", "write the result to this `file` (default: standard output)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return fmt.Errorf("apply needs one overlay, got %d argument(s) (flags go before the file)", fs.NArg())
	}
	ov, err := readcap.File(fs.Arg(0), readcap.Limit)
	if err != nil {
		return err
	}
	doc := openapi.Document
	if *document != "" {
		if doc, err = readcap.File(*document, readcap.Limit); err != nil {
			return err
		}
		if err := openapi.CheckDocument(doc); err != nil {
			return fmt.Errorf("--document %s: not a readable OpenAPI 3.x document: %w", *document, err)
		}
	}
	result, err := drift.Apply(doc, ov)
	if err != nil {
		return fmt.Errorf("%s: %w", fs.Arg(0), err)
	}
	if err := openapi.CheckDocument(result); err != nil {
		return fmt.Errorf("%s: the document it makes is not valid: %w", fs.Arg(0), err)
	}
	if *out == "" {
		_, err = stdout.Write(result)
		return err
	}
	return os.WriteFile(*out, result, 0o644)
}
