package mockserver_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/agentruns/agentruns/mockserver"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestFaultHeaderInjectsOneAnswer(t *testing.T) {
	c := newMock(t, mockserver.Options{})
	r := c.do("POST", "/agent/run", map[string]any{"prompt": "x"}, mockserver.FaultHeader, "status=429; retry_after=2s")
	assert.Equal(t, http.StatusTooManyRequests, r.status)
	assert.Equal(t, "2", r.header.Get("Retry-After"))
	p := r.problem(t)
	assert.Equal(t, mockserver.ProblemTypeBase+"resource_unavailable", p.Type)
	assert.True(t, p.Retryable)

	assert.Empty(t, r.header.Get("Retry-After-Ms"), "whole seconds need no milliseconds")
	r = c.do("GET", "/agent/runs", nil, mockserver.FaultHeader, "status=429; retry_after=200ms")
	assert.Equal(t, "1", r.header.Get("Retry-After"), "Retry-After is rounded up to whole seconds")
	assert.Equal(t, "200", r.header.Get("Retry-After-Ms"), "the official clients read the exact wait here")

	r = c.do("GET", "/agent/runs", nil, mockserver.FaultHeader, "error_code=internal_error")
	assert.Equal(t, http.StatusInternalServerError, r.status)
	assert.True(t, r.problem(t).Retryable)
	r = c.do("GET", "/agent/runs", nil, mockserver.FaultHeader, "status=503")
	assert.Equal(t, http.StatusServiceUnavailable, r.status)
	r = c.do("GET", "/agent/runs", nil, mockserver.FaultHeader, "error_code=environment_setup_failed")
	assert.Equal(t, http.StatusInternalServerError, r.status)
	assert.False(t, r.problem(t).Retryable, "as the real service marks it")

	start := time.Now()
	r = c.do("GET", "/agent/runs", nil, mockserver.FaultHeader, "delay=150ms")
	assert.Equal(t, http.StatusOK, r.status)
	assert.GreaterOrEqual(t, time.Since(start), 150*time.Millisecond)

	for _, bad := range []string{"status=200", "status=abc", "delay=forever", "error_code=nope", "colour=red", "status", "drop=maybe"} {
		r := c.do("GET", "/agent/runs", nil, mockserver.FaultHeader, bad)
		assert.Equal(t, http.StatusBadRequest, r.status, bad)
		assert.Contains(t, r.problem(t).Detail, mockserver.FaultHeader)
	}
}

func TestFaultRulesFireForTheNextNMatches(t *testing.T) {
	c := newMock(t, mockserver.Options{})
	r := c.do("POST", "/__mock/faults", map[string]any{"method": "POST", "path": "/agent/run*", "status": 429, "retry_after": "1s", "times": 2})
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	assert.Equal(t, http.StatusOK, c.do("GET", "/agent/runs", nil).status, "other methods pass")
	for i := 0; i < 2; i++ {
		assert.Equal(t, http.StatusTooManyRequests, c.do("POST", "/agent/runs", map[string]any{"prompt": "x"}, "X-Stainless-Retry-Count", string(rune('0'+i))).status)
	}
	assert.Equal(t, http.StatusOK, c.do("POST", "/agent/run", map[string]any{"prompt": "x"}, "X-Stainless-Retry-Count", "2").status)

	var rules []mockserver.FaultRule
	c.do("GET", "/__mock/faults", nil).json(t, &rules)
	require.Len(t, rules, 1)
	assert.Equal(t, 3, rules[0].Matched)
	assert.Equal(t, 2, rules[0].Injected)

	var attempts []mockserver.Attempt
	c.do("GET", "/__mock/requests", nil).json(t, &attempts)
	var retries []int
	for _, a := range attempts {
		if a.Method == "POST" && a.RetryCount != nil {
			retries = append(retries, *a.RetryCount)
		}
	}
	assert.Equal(t, []int{0, 1, 2}, retries)

	require.Equal(t, http.StatusOK, c.do("DELETE", "/__mock/faults", nil).status)
	c.do("GET", "/__mock/faults", nil).json(t, &rules)
	assert.Empty(t, rules)
	assert.Equal(t, http.StatusBadRequest, c.do("POST", "/__mock/faults", map[string]any{"path": "/agent/runs"}).status, "a rule must inject something")
	assert.Equal(t, http.StatusBadRequest, c.do("POST", "/__mock/faults", map[string]any{"path": "[", "status": 500}).status)
}

func TestProbabilisticFaultsRepeatWithTheSameSeed(t *testing.T) {
	pattern := func() string {
		c := newMock(t, mockserver.Options{})
		c.do("POST", "/__mock/faults", map[string]any{"path": "/agent/runs", "status": 503, "probability": 0.5, "seed": 42})
		var b strings.Builder
		for i := 0; i < 40; i++ {
			if c.do("GET", "/agent/runs", nil).status == http.StatusOK {
				b.WriteByte('.')
			} else {
				b.WriteByte('x')
			}
		}
		return b.String()
	}
	first := pattern()
	assert.Equal(t, first, pattern())
	assert.Contains(t, first, "x")
	assert.Contains(t, first, ".")
}

func TestDroppedConnectionsAndHeaderMatching(t *testing.T) {
	c := newMock(t, mockserver.Options{})
	c.do("POST", "/__mock/faults", map[string]any{"path": "/agent/runs/*", "header": "X-Chaos", "value": "on", "drop": true})
	req, err := http.NewRequest("GET", c.base+"/agent/runs/abc", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer k")
	req.Header.Set("X-Chaos", "on")
	_, err = http.DefaultClient.Do(req)
	assert.Error(t, err, "the connection is dropped")
	assert.Equal(t, http.StatusNotFound, c.do("GET", "/agent/runs/abc", nil).status, "without the header the rule does not match")
}

func TestFaultRulesBelongToTheirSession(t *testing.T) {
	c := newMock(t, mockserver.Options{})
	c.in("a").do("POST", "/__mock/faults", map[string]any{"path": "/agent/runs", "status": 500})
	assert.Equal(t, http.StatusInternalServerError, c.in("a").do("GET", "/agent/runs", nil).status)
	assert.Equal(t, http.StatusOK, c.in("b").do("GET", "/agent/runs", nil).status)
	c.in("a").do("POST", "/__mock/reset", nil)
	assert.Equal(t, http.StatusOK, c.in("a").do("GET", "/agent/runs", nil).status, "reset clears the rules")
}
