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
//	node openapi/clientfacts/extract.cjs ../oz-sdk-typescript | go run ./openapi/facts/gen -facts -o openapi/testdata/client-facts.json -
package main

import (
	"flag"
	"fmt"
	"io"
	"os"

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
	if *out == "" {
		_, err = os.Stdout.Write(b)
		return err
	}
	return os.WriteFile(*out, b, 0o644)
}
