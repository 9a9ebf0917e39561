package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/agentruns/agentruns/features"
	"github.com/agentruns/agentruns/htmlreport"
)

// runDocs is `agentruns-contract docs`: the features as an HTML page, with
// no server and nothing run, for publishing the behaviour as documentation.
func runDocs(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("agentruns-contract docs", flag.ContinueOnError)
	fs.SetOutput(stderr)
	output := fs.String("output", "", "`file` for the page (default stdout)")
	title := fs.String("title", "Cloud Agent Runs API: behaviour", "the page's `title`")
	fs.Usage = func() {
		fmt.Fprint(stderr, `Usage: agentruns-contract docs [--output spec.html]

Writes the contract suite's features as one self-contained HTML page (the
API's behaviour as a readable spec) without running anything.

Flags:
`)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return errHelp
		}
		return errUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "unexpected arguments: %v\n", fs.Args())
		fs.Usage()
		return errUsage
	}
	spec, err := htmlreport.Parse(features.FS)
	if err != nil {
		return fmt.Errorf("reading the features: %w", err)
	}
	w := stdout
	if *output != "" {
		f, err := os.Create(*output)
		if err != nil {
			return err
		}
		defer f.Close()
		w = f
	}
	if err := htmlreport.WriteSpec(w, *title, spec); err != nil {
		return fmt.Errorf("writing the page: %w", err)
	}
	if *output != "" {
		fmt.Fprintf(stderr, "wrote the spec of %d features to %s\n", len(spec), *output)
	}
	return nil
}
