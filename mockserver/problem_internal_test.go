package mockserver

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/agentruns/agentruns/mockserver/errcode"
	"github.com/agentruns/agentruns/mockserver/store"
	"github.com/stretchr/testify/assert"
)

// TestEveryKindHasOneAnswer: each kind of store failure is answered from
// the one table, with a code of the API, and a new kind fails here until
// the table answers it.
func TestEveryKindHasOneAnswer(t *testing.T) {
	for k := store.Internal; !strings.HasPrefix(k.String(), "Kind("); k++ {
		a, ok := answers[k]
		if assert.True(t, ok, "no answer for kind %s", k) {
			assert.True(t, errcode.Known(string(a.code)), "%s: %s", k, a.code)
		}
	}
}

// TestStoreFailuresBecomeProblems: problemOf reads a failure's kind through
// any wrapping, keeps its message as the detail, and answers one condition
// one way wherever it comes from.
func TestStoreFailuresBecomeProblems(t *testing.T) {
	for _, tc := range []struct {
		err        error
		status     int
		retryable  bool
		retryAfter string
		detail     string
	}{
		{store.ErrRunNotFound, 404, false, "", "no run with this id"},
		{fmt.Errorf("run abc: %w", store.ErrOtherTeam), 403, false, "", "run abc: the run belongs to another team"},
		{store.ErrTerminal, 400, false, "", "finished"},
		{store.ErrNotCancelable, 422, false, "", "cannot be cancelled"},
		{store.ErrPending, 409, true, "1", "handed to a worker"},
		{store.ErrBackwards, 409, false, "", "only moves forward"},
		{store.ErrTooManySessions, 429, true, "5", "too many"},
		// A full mock session, whether a create or a schedule meets it.
		{store.ErrStoreFull, 429, false, "", "most runs"},
		{errors.New("something else"), 500, true, "", "something else"},
	} {
		rec := httptest.NewRecorder()
		writeProblem(rec, httptest.NewRequest(http.MethodGet, "/agent/runs", nil), problemOf(tc.err))
		p := problemOf(tc.err).problem("")
		assert.Equal(t, tc.status, rec.Code, "%v", tc.err)
		assert.Equal(t, tc.retryable, p.Retryable, "%v", tc.err)
		assert.Equal(t, tc.retryAfter, rec.Header().Get("Retry-After"), "%v", tc.err)
		// Only a code that is usually retryable says when this one is not.
		final := !tc.retryable && (tc.status == 409 || tc.status == 429)
		assert.Equal(t, final, rec.Header().Get("X-Should-Retry") == "false", "%v", tc.err)
		assert.Contains(t, p.Detail, tc.detail)
	}
	kept := errorf(codeInvalidRequest, "already a problem")
	assert.Same(t, kept, problemOf(fmt.Errorf("wrapped: %w", kept)))
}
