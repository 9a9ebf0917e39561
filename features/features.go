// Package features holds the contract suite's Gherkin feature files. They are
// the readable specification of the Cloud Agent Runs API's behaviour, embedded
// so that the agentruns-contract binary carries them wherever it runs.
package features

import "embed"

// FS holds every *.feature file of this folder at its root.
//
//go:embed *.feature
var FS embed.FS
