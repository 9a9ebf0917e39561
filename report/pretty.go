package report

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// ANSI colours of the statuses, used only when Options.Colors is set.
var colours = map[Status]string{
	Passed:      "\x1b[32m", // green
	Failed:      "\x1b[31m", // red
	Skipped:     "\x1b[36m", // cyan
	Undefined:   "\x1b[33m", // yellow
	Pending:     "\x1b[33m",
	Ambiguous:   "\x1b[33m",
	Interrupted: "\x1b[33m",
}

// marks set a step's status apart without colours.
var marks = map[Status]string{
	Passed:      "✓",
	Failed:      "✗",
	Skipped:     "-",
	Undefined:   "?",
	Pending:     "?",
	Ambiguous:   "?",
	Interrupted: "-",
}

// Pretty prints each scenario whole as it ends, as the feature file reads,
// with a mark before each step and the error under the step that failed.
// Scenarios that run at once never interleave, and no Go source location is
// shown: a reader of the spec sees the spec.
type Pretty struct {
	w           io.Writer
	colors      bool
	lastFeature string
}

// NewPretty makes a Pretty formatter.
func NewPretty(w io.Writer, o Options) Formatter { return &Pretty{w: w, colors: o.Colors} }

func (p *Pretty) paint(s Status, text string) string {
	if !p.colors {
		return text
	}
	return colours[s] + text + "\x1b[0m"
}

// Scenario prints one scenario.
func (p *Pretty) Scenario(sc Scenario) error {
	var b strings.Builder
	if sc.Feature != p.lastFeature {
		fmt.Fprintf(&b, "\nFeature: %s\n", sc.Feature)
		p.lastFeature = sc.Feature
	}
	writeScenario(&b, sc, p.paint)
	_, err := io.WriteString(p.w, b.String())
	return err
}

// writeScenario renders sc; paint colours a status's text.
func writeScenario(b *strings.Builder, sc Scenario, paint func(Status, string) string) {
	fmt.Fprintf(b, "\n  Scenario: %s  # %s:%d\n", sc.Name, sc.URI, sc.Line)
	switch sc.Status {
	case Skipped, Interrupted:
		fmt.Fprintf(b, "    %s\n", paint(sc.Status, string(sc.Status)+": "+sc.Message))
		return
	}
	for _, st := range sc.Steps {
		fmt.Fprintf(b, "    %s %s\n", paint(st.Status, marks[st.Status]), paint(st.Status, st.Keyword+st.Text))
		writeArgument(b, st, "        ")
		if st.Message != "" {
			fmt.Fprintf(b, "%s\n", indent(paint(st.Status, st.Message), "        "))
		}
	}
}

// writeArgument prints a step's data table or doc string.
func writeArgument(b *strings.Builder, st Step, pad string) {
	if len(st.Table) > 0 {
		widths := map[int]int{}
		for _, row := range st.Table {
			for i, cell := range row {
				widths[i] = max(widths[i], len([]rune(cell)))
			}
		}
		for _, row := range st.Table {
			b.WriteString(pad + "|")
			for i, cell := range row {
				fmt.Fprintf(b, " %s%s |", cell, strings.Repeat(" ", widths[i]-len([]rune(cell))))
			}
			b.WriteString("\n")
		}
	}
	if st.DocString != "" {
		fmt.Fprintf(b, "%s\"\"\"\n%s\n%s\"\"\"\n", pad, indent(st.DocString, pad), pad)
	}
}

func indent(s, pad string) string {
	return pad + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n"+pad)
}

// Close prints the tally and what was not checked.
func (p *Pretty) Close(r Run) error {
	_, err := fmt.Fprintf(p.w, "\n%s\n", tally(r))
	return err
}

// tally is one line, "57 scenarios (50 passed, 1 failed, 6 skipped) in
// 3.2s", and a second saying what was not checked for want of an option.
func tally(r Run) string {
	n := r.Count()
	var parts []string
	for _, s := range []Status{Passed, Failed, Skipped, Interrupted, Undefined, Pending, Ambiguous} {
		if n[s] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n[s], s))
		}
	}
	line := fmt.Sprintf("%d scenarios (%s) in %s", len(r.Scenarios), strings.Join(parts, ", "), r.Duration.Round(time.Millisecond))
	if nc := r.NotChecked(); nc != "" {
		line += "\n" + strings.ToUpper(nc[:1]) + nc[1:]
	}
	return line
}

// Progress prints one character per scenario as it ends (. passed, F
// failed, S skipped, I interrupted, U undefined, pending or ambiguous), then
// the scenarios that did not pass, whole, and the tally.
type Progress struct {
	w      io.Writer
	colors bool
	n      int
	// marksOnly ends with the count alone, for a run whose report goes
	// elsewhere (NewMarks).
	marksOnly bool
}

// NewProgress makes a Progress formatter.
func NewProgress(w io.Writer, o Options) Formatter { return &Progress{w: w, colors: o.Colors} }

// NewMarks makes a formatter that prints Progress's characters and the
// count, nothing else: a sign of life on the terminal while the report
// proper is written to a file.
func NewMarks(w io.Writer, o Options) Formatter {
	return &Progress{w: w, colors: o.Colors, marksOnly: true}
}

var progressChars = map[Status]string{
	Passed: ".", Failed: "F", Skipped: "S", Interrupted: "I", Undefined: "U", Pending: "U", Ambiguous: "U",
}

// Scenario prints one character.
func (p *Progress) Scenario(sc Scenario) error {
	p.n++
	c := progressChars[sc.Status]
	if p.colors {
		c = colours[sc.Status] + c + "\x1b[0m"
	}
	if p.n%50 == 0 {
		c += fmt.Sprintf(" %d\n", p.n)
	}
	_, err := io.WriteString(p.w, c)
	return err
}

// Close prints the scenarios that did not pass and the tally.
func (p *Progress) Close(r Run) error {
	var b strings.Builder
	if p.n%50 != 0 {
		fmt.Fprintf(&b, " %d\n", p.n)
	}
	if p.marksOnly {
		_, err := io.WriteString(p.w, b.String())
		return err
	}
	paint := func(s Status, text string) string {
		if !p.colors {
			return text
		}
		return colours[s] + text + "\x1b[0m"
	}
	for _, sc := range r.Scenarios {
		if sc.Status != Passed && sc.Status != Skipped {
			writeScenario(&b, sc, paint)
		}
	}
	fmt.Fprintf(&b, "\n%s\n", tally(r))
	_, err := io.WriteString(p.w, b.String())
	return err
}
