// Command gen writes the structural facts of an OpenAPI document as
// canonical JSON (see package facts). It refreshes the committed facts of
// the service's published document:
//
//	go run ./openapi/facts/gen -o openapi/testdata/published-facts.json path/to/agent-api-openapi.yaml
//
// Without -o the facts go to standard output. With -facts the input is
// facts already (as openapi/clientfacts prints a client's surface), and gen
// writes them in the canonical form; "-" reads standard input:
//
//	node openapi/clientfacts/extract.cjs ../oz-sdk-typescript | go run ./openapi/facts/gen -facts -client-dir openapi/clientfacts -
//
// With -client-dir the facts, which must name their client, are written to
// DIR/<language>-<version>.json, the one file per client version that
// package openapi/clientfacts embeds.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/agentruns/agentruns/openapi/facts"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("gen", flag.ContinueOnError)
	out := fs.String("o", "", "write the facts to this file instead of standard output")
	isFacts := fs.Bool("facts", false, "the input is facts JSON, not an OpenAPI document: rewrite it canonically")
	clientDir := fs.String("client-dir", "", "write a client's facts to DIR/<language>-<version>.json (the facts must name their client)")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: go run ./openapi/facts/gen [-o facts.json] [-facts] openapi.yaml|facts.json|-")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return fmt.Errorf("want one document, got %d arguments", fs.NArg())
	}
	var doc []byte
	var err error
	if fs.Arg(0) == "-" {
		doc, err = io.ReadAll(os.Stdin)
	} else {
		doc, err = os.ReadFile(fs.Arg(0))
	}
	if err != nil {
		return err
	}
	read := facts.Extract
	if *isFacts {
		read = facts.Unmarshal
	}
	f, err := read(doc)
	if err != nil {
		return err
	}
	if len(f.Operations) == 0 {
		return fmt.Errorf("%s: no operations", fs.Arg(0))
	}
	b, err := facts.Marshal(f)
	if err != nil {
		return err
	}
	if *clientDir != "" {
		if f.Client == nil || f.Client.Language == "" || f.Client.Version == "" {
			return fmt.Errorf("%s: the facts name no client language and version", fs.Arg(0))
		}
		*out = filepath.Join(*clientDir, f.Client.Language+"-"+f.Client.Version+".json")
		fmt.Fprintln(os.Stderr, "gen: wrote", *out)
	}
	if *out == "" {
		_, err = os.Stdout.Write(b)
		return err
	}
	return os.WriteFile(*out, b, 0o644)
}
