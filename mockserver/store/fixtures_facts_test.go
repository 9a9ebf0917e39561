package store_test

import (
	"testing"

	"github.com/agentruns/agentruns/fixtures"
	"github.com/agentruns/agentruns/mockserver/store"
)

// The recorder reads which states end a run from package fixtures, which
// cannot import the store: the two must agree on every state.
func TestFixturesTerminalAgreesWithTheStore(t *testing.T) {
	for _, s := range store.States() {
		if got, want := fixtures.Terminal(string(s)), s.Terminal(); got != want {
			t.Errorf("%s: fixtures.Terminal says %v, the store %v", s, got, want)
		}
	}
	if fixtures.Terminal("NOSUCHSTATE") {
		t.Error("a state the API does not have is not terminal")
	}
}
