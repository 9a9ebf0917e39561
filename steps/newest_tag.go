package steps

import (
	"context"
	"errors"

	"github.com/cucumber/godog"

	"github.com/agentruns/agentruns/suiteconfig"
)

// The newest official client (oz-agent-sdk 1.4.0-alpha.6) calls more than
// the published document: follow-ups (followups.go), handoff attachments
// (handoff_attachments.go), an identity by its uid (identities.go), the
// public redirects (conversations.go), run metadata, the newer filters
// (listing.go) and values. Each scenario of that surface sits in its
// resource's feature file, tagged newestClientTag; this file holds what
// the tag does.

// newestClientTag marks the scenarios of operations and fields newer than
// the published document, so that a server built to that document can
// leave them out; the configuration's check knows it too (a promise of
// the newest client with tags that select none of its scenarios).
const newestClientTag = suiteconfig.NewestClientTag

// registerNewestClientTag gives every failed step of a scenario tagged
// newestClientTag the note NewestClientNote.
func (s *scenario) registerNewestClientTag(sc stepContext) {
	tagged := false
	sc.Before(func(ctx context.Context, sc *godog.Scenario) (context.Context, error) {
		tagged = hasTag(sc, newestClientTag)
		return ctx, nil
	})
	sc.StepContext().After(func(ctx context.Context, _ *godog.Step, status godog.StepResultStatus, err error) (context.Context, error) {
		if !tagged || status != godog.StepFailed {
			return ctx, nil
		}
		return ctx, newestClientHint(err)
	})
}

// NewestClientNote is what every failure of a scenario tagged
// newestClientTag says, in these words and no others: such a scenario
// holds a server to more than the published document, which it does only
// where the server serves that surface or --newest-client promises it
// (newest_surface.go).
const NewestClientNote = "[" + newestClientTag + ": this scenario checks what the official client " + newestClientName + " calls, " +
	"beyond the published API document of May 2026; it is judged where the server serves that surface, or where --newest-client promises it]"

// newestClientHint is the note a failed step of a scenario tagged
// newestClientTag adds to its error (godog puts it before the step's
// own message), whatever the failure: a 404 from a missing operation, a
// value refused, a field not kept. It returns nil when err is nil.
func newestClientHint(err error) error {
	if err == nil {
		return nil
	}
	return errors.New(NewestClientNote)
}
