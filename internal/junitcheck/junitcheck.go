// Package junitcheck checks a JUnit report in tests the way CI reads it:
// against report.JUnitSchema with a real schema validator (xmllint, from
// Debian's libxml2-utils), then through a real consumer
// (github.com/joshdk/go-junit).
package junitcheck

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/joshdk/go-junit"

	"github.com/agentruns/agentruns/report"
)

// Validate checks data against the schema with xmllint (see Require).
func Validate(t testing.TB, data []byte) {
	t.Helper()
	xmllint := Require(t)
	dir := t.TempDir()
	xsd := filepath.Join(dir, "junit.xsd")
	doc := filepath.Join(dir, "report.xml")
	if err := os.WriteFile(xsd, report.JUnitSchema, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(doc, data, 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(xmllint, "--noout", "--schema", xsd, doc).CombinedOutput()
	if err != nil {
		t.Fatalf("the JUnit report does not validate against junit.xsd: %v\n%s\n%s", err, out, data)
	}
}

// Require returns xmllint's path. Without it the test is skipped with the
// way to install it, except on CI (CI=true), where .ci/run installs it and
// its absence is a failure.
func Require(t testing.TB) string {
	t.Helper()
	xmllint, err := exec.LookPath("xmllint")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("xmllint is missing: .ci/run installs it (apt-get install libxml2-utils)")
		}
		t.Skip("xmllint is missing, so the JUnit report is not checked against its schema: apt-get install libxml2-utils")
	}
	return xmllint
}

// Totals reads data with go-junit and adds up its suites.
func Totals(t testing.TB, data []byte) (junit.Totals, []junit.Test) {
	t.Helper()
	suites, err := junit.Ingest(data)
	if err != nil {
		t.Fatalf("go-junit cannot read the report: %v\n%s", err, data)
	}
	var tot junit.Totals
	var tests []junit.Test
	for _, s := range suites {
		tot.Tests += s.Totals.Tests
		tot.Passed += s.Totals.Passed
		tot.Skipped += s.Totals.Skipped
		tot.Failed += s.Totals.Failed
		tot.Error += s.Totals.Error
		tests = append(tests, s.Tests...)
	}
	if !bytes.HasPrefix(data, []byte("<?xml")) {
		t.Errorf("the report has no XML declaration:\n%s", data)
	}
	return tot, tests
}
