// Command gen writes the structural facts of an OpenAPI document as
// canonical JSON (see package facts). It refreshes the committed facts of
// the service's published document:
//
//	go run ./openapi/facts/gen -o openapi/testdata/published-facts.json path/to/agent-api-openapi.yaml
//
// Without -o the facts go to standard output.
package main

import (
	"flag"
	"fmt"
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
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: go run ./openapi/facts/gen [-o facts.json] openapi.yaml")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return fmt.Errorf("want one document, got %d arguments", fs.NArg())
	}
	doc, err := os.ReadFile(fs.Arg(0))
	if err != nil {
		return err
	}
	f, err := facts.Extract(doc)
	if err != nil {
		return err
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
