package report

import _ "embed"

// JUnitSchema is the XML schema the JUnit report follows (junit.xsd), for
// validating a report with a schema validator such as xmllint.
//
//go:embed junit.xsd
var JUnitSchema []byte
