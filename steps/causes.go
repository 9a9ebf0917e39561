package steps

import (
	"errors"
	"regexp"
	"strings"
	"sync"

	"github.com/agentruns/agentruns/openapi"
	"github.com/agentruns/agentruns/report"
)

// A scenario's root cause is the first answer it met that breaks the API's
// document (report.Cause): the client notes it as it checks each answer,
// and the scenario's report carries it, so that failures worded
// differently but caused by one mistake are told as one (report/causes.go).
// A look at a run that contradicts an earlier look which broke the document
// (a field missing from one answer, present in the next: "expected
// updated_at to stay nothing") is a knock-on of that earlier answer, even
// in another scenario: it takes the earlier answer's cause.

// firstCause holds the first cause noted; a scenario's clients share it.
type firstCause struct {
	mu    sync.Mutex
	cause *report.Cause
}

// note keeps c unless it is nil or a cause was noted before.
func (f *firstCause) note(c *report.Cause) {
	if f == nil || c == nil {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.cause == nil {
		f.cause = c
	}
}

// get returns the cause noted, nil when none was.
func (f *firstCause) get() *report.Cause {
	if f == nil {
		return nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.cause
}

// violationCause is the cause of the validator's err: its first finding.
func violationCause(err error, method, path string, status int) *report.Cause {
	var v *openapi.ValidationError
	if errors.As(err, &v) && len(v.Findings) > 0 {
		return &report.Cause{Operation: v.Operation, Status: v.Status, Field: v.Findings[0].Field, Message: v.Findings[0].Message}
	}
	first, _, _ := strings.Cut(err.Error(), "\n") // another validator than the project's
	return &report.Cause{Operation: method + " " + pathTemplate(path), Status: status, Message: first}
}

// problemCause is the cause of an error answer that is not a problem
// document as the API promises (checkProblem's err).
func problemCause(err error, method, path string, status int) *report.Cause {
	first, _, _ := strings.Cut(err.Error(), "\n")
	field := "body"
	if strings.HasPrefix(first, "error responses must be") {
		field = "header.Content-Type"
	}
	return &report.Cause{Operation: method + " " + pathTemplate(path), Status: status, Field: field, Message: first}
}

// idSegment is a path segment that names one resource: the API's own
// segments (agent, runs, cancel...) hold no digit, ids do.
var idSegment = regexp.MustCompile(`^[^/]*[0-9][^/]*$`)

// pathTemplate stands "{id}" for each id in path, so that the same
// operation on two runs reads the same.
func pathTemplate(path string) string {
	path, _, _ = strings.Cut(path, "?")
	segs := strings.Split(path, "/")
	for i, s := range segs {
		if idSegment.MatchString(s) {
			segs[i] = "{id}"
		}
	}
	return strings.Join(segs, "/")
}
