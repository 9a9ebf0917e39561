package report

import (
	"encoding/xml"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"
)

// JUnit writes the JUnit XML report that CI servers read (Jenkins, GitLab,
// the GitHub test-report actions): one <testsuite> per feature, one
// <testcase> per scenario with the feature's name as its classname. A failed
// scenario has one <failure> naming the step and its error; a skipped or
// interrupted one a <skipped message="why"/> (for a skip an option would
// have avoided, "not checked: what; --flag would check it", and the
// feature's property not_checked says so for all of them); an <error> means the suite
// itself is incomplete (an undefined, pending or ambiguous step). The
// counters are those of the elements. junit.xsd describes the format.
type JUnit struct {
	w io.Writer
}

// NewJUnit makes a JUnit formatter; it writes when the run ends.
func NewJUnit(w io.Writer, _ Options) Formatter { return &JUnit{w: w} }

// Scenario does nothing: the report is written whole by Close.
func (*JUnit) Scenario(Scenario) error { return nil }

type JUnitTestsuites struct {
	XMLName xml.Name `xml:"testsuites"`
	JUnitCounts
	Suites []JUnitTestsuite `xml:"testsuite"`
}

type JUnitCounts struct {
	Name      string `xml:"name,attr"`
	Tests     int    `xml:"tests,attr"`
	Failures  int    `xml:"failures,attr"`
	Errors    int    `xml:"errors,attr"`
	Skipped   int    `xml:"skipped,attr"`
	Time      string `xml:"time,attr"`
	Timestamp string `xml:"timestamp,attr,omitempty"`
}

type JUnitTestsuite struct {
	JUnitCounts
	Properties *JUnitProperties `xml:"properties,omitempty"`
	Cases      []JUnitTestcase  `xml:"testcase"`
}

type JUnitProperties struct {
	Property []JUnitProperty `xml:"property"`
}

type JUnitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type JUnitTestcase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Time      string        `xml:"time,attr"`
	Skipped   *JUnitSkipped `xml:"skipped"`
	Error     *JUnitProblem `xml:"error"`
	Failure   *JUnitProblem `xml:"failure"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type JUnitSkipped struct {
	Message string `xml:"message,attr"`
}

type JUnitProblem struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

// seconds renders d as JUnit does: seconds with milliseconds, never negative.
func seconds(d time.Duration) string {
	return fmt.Sprintf("%.3f", max(d, 0).Seconds())
}

// Close writes the report.
func (j *JUnit) Close(r Run) error {
	byFeature := map[string][]Scenario{}
	var uris []string
	for _, sc := range r.Scenarios {
		if _, ok := byFeature[sc.URI]; !ok {
			uris = append(uris, sc.URI)
		}
		byFeature[sc.URI] = append(byFeature[sc.URI], sc)
	}
	sort.Strings(uris)

	doc := JUnitTestsuites{JUnitCounts: JUnitCounts{Name: r.Name, Time: seconds(r.Duration)}}
	if !r.Start.IsZero() {
		doc.Timestamp = r.Start.UTC().Format("2006-01-02T15:04:05")
	}
	for _, uri := range uris {
		scs := byFeature[uri]
		sort.SliceStable(scs, func(a, b int) bool { return scs[a].Line < scs[b].Line })
		suite := JUnitTestsuite{JUnitCounts: JUnitCounts{Name: scs[0].Feature}}
		suite.Properties = &JUnitProperties{Property: []JUnitProperty{{Name: "file", Value: uri}}}
		if r.Target != "" {
			suite.Properties.Property = append(suite.Properties.Property, JUnitProperty{Name: "base_url", Value: r.Target})
		}
		if r.Seed != 0 {
			suite.Properties.Property = append(suite.Properties.Property, JUnitProperty{Name: "seed", Value: fmt.Sprint(r.Seed)})
		}
		if nc := (Run{Scenarios: scs}).NotChecked(); nc != "" {
			suite.Properties.Property = append(suite.Properties.Property, JUnitProperty{Name: "not_checked", Value: nc})
		}
		if r.Runs.Created > 0 {
			// What the pass cost, and this feature's share of it.
			suite.Properties.Property = append(suite.Properties.Property,
				JUnitProperty{Name: "runs", Value: r.Runs.Cost()},
				JUnitProperty{Name: "runs_created_here", Value: r.Runs.CreatedBy(scs)})
		}
		var total time.Duration
		start := scs[0].Start
		for _, sc := range scs {
			c := JUnitTestcase{Name: sc.Name, Classname: sc.Feature, Time: seconds(sc.Duration)}
			switch {
			case sc.Status == Failed:
				c.Failure = problem(sc, "failed")
				suite.Failures++
			case sc.Status.Incomplete():
				c.Error = problem(sc, string(sc.Status))
				suite.Errors++
			case sc.Status == Skipped, sc.Status == Interrupted:
				msg := sc.Message
				switch {
				case sc.Status == Interrupted:
					msg = "interrupted: " + msg
				case sc.Needs != nil:
					msg = fmt.Sprintf("not checked: %s; %s would check it (%s)", sc.Needs.What, sc.Needs.Flag, msg)
				}
				c.Skipped = &JUnitSkipped{Message: msg}
				suite.Skipped++
			}
			suite.Cases = append(suite.Cases, c)
			suite.Tests++
			total += max(sc.Duration, 0)
			if !sc.Start.IsZero() && (start.IsZero() || sc.Start.Before(start)) {
				start = sc.Start
			}
		}
		suite.Time = seconds(total)
		if !start.IsZero() {
			suite.Timestamp = start.UTC().Format("2006-01-02T15:04:05")
		}
		doc.Tests += suite.Tests
		doc.Failures += suite.Failures
		doc.Errors += suite.Errors
		doc.Skipped += suite.Skipped
		doc.Suites = append(doc.Suites, suite)
	}
	if len(r.Clients) > 0 {
		suite := clientSuite(r)
		doc.Tests += suite.Tests
		doc.Failures += suite.Failures
		doc.Skipped += suite.Skipped
		doc.Suites = append(doc.Suites, suite)
	}
	return WriteJUnitXML(j.w, doc)
}

// WriteJUnitXML writes a JUnit document as every report of the project
// writes one: the XML header, indented, ending in a newline. The JUnit*
// types are the schema's elements (JUnitSchema), shared with the
// exploration's report (package explore).
func WriteJUnitXML(w io.Writer, doc JUnitTestsuites) error {
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// clientSuite is the testsuite "client versions": one test case per
// released client version, passed when it reads every answer. A version
// that breaks fails only when the run promised it (--fail-on-client);
// otherwise it is skipped, its message saying how many answers break it.
// Either way the first breaks are its system-out.
func clientSuite(r Run) JUnitTestsuite {
	suite := JUnitTestsuite{JUnitCounts: JUnitCounts{Name: "client versions"}}
	for _, c := range r.Clients {
		tc := JUnitTestcase{Name: c.Name, Classname: "client versions", Time: seconds(0)}
		var out strings.Builder
		for _, b := range c.First {
			fmt.Fprintf(&out, "%s %s: expected %s, got %s\n", b.Operation, fieldName(b.Field), b.Expected, b.Got)
		}
		tc.SystemOut = out.String()
		summary := fmt.Sprintf("%d of %d answers break %s", c.Broken, c.Checked, c.Name)
		switch {
		case c.Checked == 0:
			tc.Skipped = &JUnitSkipped{Message: "no answer of an operation this version calls was seen"}
			suite.Skipped++
		case c.Failing():
			tc.Failure = &JUnitProblem{Type: "client-version-broken", Message: summary, Text: out.String()}
			suite.Failures++
		case c.Broken > 0:
			tc.Skipped = &JUnitSkipped{Message: summary + "; not a failure unless the suite's run promises this version (agentruns-contract --fail-on-client " + c.Name + "; the proxy reports, it does not fail on a version)"}
			suite.Skipped++
		}
		suite.Cases = append(suite.Cases, tc)
		suite.Tests++
	}
	suite.Time = seconds(0)
	return suite
}

// problem describes a scenario that did not pass: the message names the
// step and its error's first line, the text is the scenario as it ran.
func problem(sc Scenario, typ string) *JUnitProblem {
	p := &JUnitProblem{Type: typ, Message: sc.Message}
	if st, ok := sc.FailedStep(); ok {
		first, _, _ := strings.Cut(st.Message, "\n")
		p.Message = strings.TrimSpace(st.Keyword) + " " + st.Text + ": " + first
	}
	var b strings.Builder
	writeScenario(&b, sc, func(_ Status, s string) string { return s })
	p.Text = strings.TrimLeft(b.String(), "\n")
	return p
}
