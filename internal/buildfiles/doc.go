// Package buildfiles holds the tests that keep the Makefile, .ci/run and the
// README true to each other; it has no code of its own.
package buildfiles
