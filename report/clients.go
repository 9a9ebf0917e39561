package report

import (
	"fmt"
	"io"
	"strings"
)

// ClientVersion is what one released official client version made of the
// run's answers: beside the document, the suite judges each success answer
// as that version reads it (package clientcheck).
type ClientVersion struct {
	// Name is "<language>-<version>", e.g. "typescript-1.0.0-alpha.8".
	Name string
	// Checked counts the answers of operations this version calls; Broken
	// those that break it.
	Checked, Broken int
	// First lists the first few breaks.
	First []ClientBreak
	// Fails says the run fails when this version breaks
	// (--fail-on-client); otherwise a break is reported only.
	Fails bool
}

// ClientBreak is one way an answer breaks a client version.
type ClientBreak struct {
	Operation, Field, Expected, Got string
}

// Failing tells whether the version breaks and the run promised it.
func (c ClientVersion) Failing() bool { return c.Fails && c.Broken > 0 }

// Verdict says in a word or two what the version made of the run.
func (c ClientVersion) Verdict() string {
	switch {
	case c.Checked == 0:
		return "not reached"
	case c.Broken == 0:
		return "reads every answer"
	case c.Fails:
		return "BREAKS (fails the run)"
	}
	return "breaks"
}

// WriteClientTable writes the client versions as a plain-text table, each
// broken version followed by its first breaks; nothing when there are none.
func WriteClientTable(w io.Writer, clients []ClientVersion) error {
	if len(clients) == 0 {
		return nil
	}
	width := len("client version")
	for _, c := range clients {
		width = max(width, len(c.Name))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%-*s  %8s  %8s  %s\n", width, "client version", "answers", "breaking", "verdict")
	for _, c := range clients {
		fmt.Fprintf(&b, "%-*s  %8d  %8d  %s\n", width, c.Name, c.Checked, c.Broken, c.Verdict())
		for _, br := range c.First {
			fmt.Fprintf(&b, "%*s  %s %s: expected %s, got %s\n", width, "", br.Operation, fieldName(br.Field), br.Expected, br.Got)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func fieldName(f string) string {
	if f == "" {
		return "(the body)"
	}
	return f
}
