// Command agentruns-clientgate compares two OpenAPI documents of the Cloud
// Agent Runs API and lists each breaking difference with the released
// official client versions it breaks (package clientgate). It exits 1 when
// a difference breaks a client version, 0 when none does, 2 for a wrong
// command line or a document it cannot read.
//
//	agentruns-clientgate [--all] BASE.yaml REVISION.yaml
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/agentruns/agentruns/clientcheck"
	"github.com/agentruns/agentruns/clientgate"
	"github.com/agentruns/agentruns/internal/readcap"
	"github.com/agentruns/agentruns/openapi"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

// The exit statuses, as docs/client-versions.md lists them.
const (
	exitNoneBroken = 0
	exitBroken     = 1
	exitUsage      = 2
)

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("agentruns-clientgate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	all := fs.Bool("all", false, "list the breaking differences no client version meets too")
	fs.Usage = func() {
		fmt.Fprint(stderr, `Usage: agentruns-clientgate [--all] BASE REVISION

Compares two OpenAPI documents of the Cloud Agent Runs API (YAML or JSON;
BASE is today's, REVISION the one to ship) with oasdiff's breaking-change
checks, and names for each difference the released official client
versions it breaks: `+clientcheck.Names()+`.

Exit status: 0 no client version breaks; 1 a difference breaks one; 2 the
command line is wrong or a document cannot be read.

Flags:
`)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitNoneBroken
		}
		fmt.Fprintln(stderr, "run agentruns-clientgate --help for its usage")
		return exitUsage
	}
	if fs.NArg() != 2 {
		fmt.Fprintf(stderr, "want two documents, BASE and REVISION; got %d arguments\n", fs.NArg())
		for _, a := range fs.Args() {
			if strings.HasPrefix(a, "-") {
				// Go's flags end at the first argument that is not one.
				fmt.Fprintf(stderr, "%s comes after a document: give flags before BASE and REVISION\n", a)
				break
			}
		}
		fmt.Fprintln(stderr, "run agentruns-clientgate --help for its usage")
		return exitUsage
	}
	docs := make([][]byte, 2)
	for i, name := range fs.Args() {
		b, err := readDocument(name)
		if err != nil {
			fmt.Fprintf(stderr, "%s %v\n", []string{"BASE", "REVISION"}[i], err)
			return exitUsage
		}
		docs[i] = b
	}
	versions, err := clientcheck.Load()
	if err != nil {
		fmt.Fprintln(stderr, err)
		return exitUsage
	}
	changes, err := clientgate.Compare(docs[0], docs[1], versions)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return exitUsage
	}
	breaking, quiet := 0, 0
	for _, c := range changes {
		if len(c.Breaks) > 0 {
			breaking++
		} else if !*all {
			quiet++
			continue
		}
		where := c.Operation
		if where == "" {
			where = "(the document)"
		}
		fmt.Fprintf(stdout, "%s %s [%s]\n    %s\n", strings.ToUpper(c.Level), where, c.ID, c.Text)
		if len(c.Breaks) == 0 {
			fmt.Fprintln(stdout, "    breaks no known client version")
		}
		for _, b := range c.Breaks {
			fmt.Fprintf(stdout, "    breaks %s: %s\n", b.Version, b.Why)
		}
	}
	broken := clientgate.BrokenVersions(changes, versions)
	fmt.Fprintf(stdout, "%d breaking difference(s) found by oasdiff; %d break a client version", len(changes), breaking)
	if quiet > 0 {
		fmt.Fprintf(stdout, " (%d that break none not shown: --all shows them)", quiet)
	}
	fmt.Fprintln(stdout)
	if len(broken) == 0 {
		fmt.Fprintln(stdout, "no client version breaks")
		return exitNoneBroken
	}
	fmt.Fprintf(stdout, "client versions broken: %s\n", strings.Join(broken, ", "))
	return exitBroken
}

// readDocument reads a document, at most readcap.Limit of it, and refuses
// anything that is not an OpenAPI 3.0 or 3.1 document: a gate given an
// empty file or a drift report as BASE would otherwise find nothing broken,
// and pass for ever.
func readDocument(name string) ([]byte, error) {
	b, err := readcap.File(name, readcap.Limit)
	if err != nil {
		return nil, err
	}
	if err := openapi.CheckDocument(b); err != nil {
		return nil, fmt.Errorf("%s: not a readable OpenAPI 3.x document: %w", name, err)
	}
	return b, nil
}
