package steps

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"reflect"
	"regexp"
	"strings"
	"time"
)

// subject is a JSON object under test: the body of the last response or the
// run's details. When there is none, err says why, and every assertion on
// the subject returns that reason.
type subject struct {
	what string // "the response", "the run"
	doc  map[string]any
	err  error
}

// fieldIs checks a dotted field against a string ("QUEUED", "true", ...).
func (s subject) fieldIs(field, want string) error {
	if s.err != nil {
		return s.err
	}
	v, ok := lookup(s.doc, field)
	if !ok || str(v) != want {
		return fmt.Errorf("expected %s's %q to be %q, got %s", s.what, field, want, show(v))
	}
	return nil
}

// fieldsEqual checks that two fields are present and equal.
func (s subject) fieldsEqual(a, b string) error {
	if s.err != nil {
		return s.err
	}
	va, _ := lookup(s.doc, a)
	vb, _ := lookup(s.doc, b)
	if va == nil || !reflect.DeepEqual(va, vb) {
		return fmt.Errorf("expected %s's %q to equal its %q (%s), got %s", s.what, a, b, show(vb), show(va))
	}
	return nil
}

func (s subject) nonEmpty(field string) error {
	if s.err != nil {
		return s.err
	}
	if v, _ := lookup(s.doc, field); str(v) == "" {
		return fmt.Errorf("expected %s to have a non-empty %q, got %s", s.what, field, show(v))
	}
	return nil
}

var uuidRE = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)

func (s subject) isUUID(field string) error {
	if s.err != nil {
		return s.err
	}
	if v, _ := lookup(s.doc, field); !uuidRE.MatchString(str(v)) {
		return fmt.Errorf("expected %s's %q to be a UUID, got %s", s.what, field, show(v))
	}
	return nil
}

func (s subject) isAbsoluteURL(field string) error {
	if s.err != nil {
		return s.err
	}
	v, _ := lookup(s.doc, field)
	if u, err := url.Parse(str(v)); err != nil || !u.IsAbs() || u.Host == "" {
		return fmt.Errorf("expected %s's %q to be an absolute URL, got %s", s.what, field, show(v))
	}
	return nil
}

func (s subject) isTimestamp(field string) error {
	if s.err != nil {
		return s.err
	}
	_, err := timestamp(s.doc, field)
	return err
}

// notBefore checks that two timestamp fields are in order.
func (s subject) notBefore(field, other string) error {
	if s.err != nil {
		return s.err
	}
	t, err := timestamp(s.doc, field)
	if err != nil {
		return err
	}
	o, err := timestamp(s.doc, other)
	if err != nil {
		return err
	}
	if t.Before(o) {
		return fmt.Errorf("expected %s's %q (%s) not to be before its %q (%s)", s.what, field, t.Format(time.RFC3339Nano), other, o.Format(time.RFC3339Nano))
	}
	return nil
}

// holds checks that field holds every part of sent (extra fields are fine).
func (s subject) holds(field string, sent any) error {
	if s.err != nil {
		return s.err
	}
	if sent == nil {
		return fmt.Errorf("nothing was sent for %q", field)
	}
	got, _ := lookup(s.doc, field)
	if p, ok := contains(sent, got, field); !ok {
		sentV, _ := lookup(map[string]any{field: sent}, p)
		gotV, _ := lookup(s.doc, p)
		return fmt.Errorf("expected %s's %q to be %s as sent, got %s", s.what, p, show(sentV), show(gotV))
	}
	return nil
}

// hasStatusCode checks the status message of a run that failed.
func (s subject) hasStatusCode(code string) error {
	if s.err != nil {
		return s.err
	}
	if msg, _ := lookup(s.doc, "status_message.message"); str(msg) == "" {
		return fmt.Errorf("expected %s to have a status_message with a message, got status_message %s", s.what, show(s.doc["status_message"]))
	}
	return s.fieldIs("status_message.error_code", code)
}

// isRetryable checks a problem document's "retryable".
func (s subject) isRetryable() error {
	if s.err != nil {
		return s.err
	}
	if s.doc["retryable"] != true {
		return fmt.Errorf("expected %s to say \"retryable\": true, got %s", s.what, show(s.doc["retryable"]))
	}
	return nil
}

// unchangedSince compares the subject with an earlier look at the same run.
func (s subject) unchangedSince(earlier map[string]any, when string) error {
	if s.err != nil {
		return s.err
	}
	if earlier == nil {
		return fmt.Errorf("the run was never seen %s", when)
	}
	for _, f := range []string{"state", "updated_at", "started_at", "status_message"} {
		if a, b := earlier[f], s.doc[f]; !reflect.DeepEqual(a, b) {
			return fmt.Errorf("%s changed after it was %s: %s was %s, now %s", s.what, when, f, show(a), show(b))
		}
	}
	return nil
}

// Assertions on a whole response. A nil response means no request was made.

func (r *response) hasStatus(want int) error {
	if r == nil {
		return errNoRequest
	}
	return r.expectStatus(want)
}

// isJSONString checks a body that is one JSON string, such as a cancelled
// run's id.
func (r *response) isJSONString(want string) error {
	if r == nil {
		return errNoRequest
	}
	var got string
	if err := r.json(&got); err != nil {
		return err
	}
	if got != want {
		return fmt.Errorf("%s: expected the JSON string %q, got %q", r.op, want, got)
	}
	return nil
}

// isProblem checks the status, the problem document and its code: the last
// segment of "type".
func (r *response) isProblem(status int, code string) error {
	if r == nil {
		return errNoRequest
	}
	if err := r.expectStatus(status); err != nil {
		return err
	}
	if err := checkProblem(r); err != nil {
		return fmt.Errorf("%s: %w\n%s", r.op, err, r.excerpt())
	}
	obj, err := r.object()
	if err != nil {
		return err
	}
	if typ := str(obj["type"]); problemCode(typ) != code {
		return fmt.Errorf("%s: expected a problem whose type ends in the code %q, got type %q", r.op, code, typ)
	}
	return nil
}

// subject is the response's body as a JSON object.
func (r *response) subject() subject {
	if r == nil {
		return subject{err: errNoRequest}
	}
	obj, err := r.object()
	return subject{what: "the response to " + r.op, doc: obj, err: err}
}

var errNoRequest = errors.New("no request was made yet")

// problemCode is the last segment of a problem type URI.
func problemCode(typ string) string {
	if i := strings.LastIndexAny(typ, "/#:"); i >= 0 {
		return typ[i+1:]
	}
	return typ
}

// ok fails unless the response is a 200.
func (r *response) ok(doing string) error {
	if err := r.hasStatus(http.StatusOK); err != nil {
		return fmt.Errorf("%s: %w", doing, err)
	}
	return nil
}
