package mockserver

import (
	"fmt"
	"math/rand"
	"net/http"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/agentruns/agentruns/mockserver/errcode"
	"github.com/agentruns/agentruns/mockserver/numbered"
)

// FaultHeader makes the mock misbehave for one request, e.g.
// "status=429; error_code=resource_unavailable; retry_after=2s" or "delay=3s".
const FaultHeader = "X-Mock-Fault"

// Fault is what the mock does instead of (or before) answering a request.
type Fault struct {
	// Status, when set, answers with this status and a problem+json body.
	Status int `json:"status,omitempty"`
	// ErrorCode names the problem; by default the code the API uses for Status.
	ErrorCode string `json:"error_code,omitempty"`
	// RetryAfter is sent as the Retry-After header (a Go duration).
	RetryAfter string `json:"retry_after,omitempty"`
	// Delay holds the answer back this long (a Go duration).
	Delay string `json:"delay,omitempty"`
	// Drop closes the connection without an answer.
	Drop bool `json:"drop,omitempty"`

	retryAfter, delay time.Duration
}

// FaultRule injects a Fault into matching requests.
type FaultRule struct {
	ID string `json:"id"`
	// Method matches the request method; "" matches any.
	Method string `json:"method,omitempty"`
	// Path matches the request path (without /api/v1) with path.Match
	// wildcards: "/agent/runs/*" matches every run. A path given with the
	// /api/v1 prefix is kept without it, so it matches both forms.
	Path string `json:"path"`
	// Header, when set, must be present with Value ("" matches any value).
	Header string `json:"header,omitempty"`
	Value  string `json:"value,omitempty"`
	Fault
	// Times limits the rule to the next N matching requests; 0 is unlimited.
	Times int `json:"times,omitempty"`
	// Probability of injecting per matching request (0 means always); the
	// draws come from Seed, so a flaky scenario repeats exactly.
	Probability float64 `json:"probability,omitempty"`
	Seed        int64   `json:"seed,omitempty"`
	// Matched counts matching requests, Injected those that got the fault.
	Matched  int `json:"matched"`
	Injected int `json:"injected"`

	rng *rand.Rand
}

// maxPatternBytes bounds a fault rule's path pattern and header match.
const maxPatternBytes = 1024

// maxFaultDuration bounds delays and Retry-After. It is above the official
// clients' 60 s default timeout, so their timeout handling can be tested, and
// below the mock's default write timeout, which would cut a longer delay.
const maxFaultDuration = 2 * time.Minute

// faultCodes says which error code an injected status carries by default.
var faultCodes = map[int]errorCode{
	400: codeInvalidRequest, 401: codeAuthRequired, 403: codeNotAuthorized, 404: codeNotFound,
	405: codeMethodNotAllowed, 409: codeConflict, 413: codePayloadTooLarge, 415: codeUnsupportedMediaType,
	422: codeNotSupported, 429: codeUnavailable, 500: codeInternal, 502: codeUnavailable, 503: codeUnavailable, 504: codeUnavailable,
}

// check validates a fault and parses its durations.
func (f *Fault) check() error {
	if f.Status != 0 && (f.Status < 400 || f.Status > 599) {
		return fmt.Errorf("status must be an error status from 400 to 599, not %d", f.Status)
	}
	if f.ErrorCode != "" && !errcode.Known(f.ErrorCode) {
		return fmt.Errorf("error_code %q is not an error code of the API", f.ErrorCode)
	}
	if f.ErrorCode != "" && f.Status == 0 {
		f.Status = statusOf(errorCode(f.ErrorCode))
	}
	for _, d := range []struct {
		name, raw string
		dst       *time.Duration
	}{{"retry_after", f.RetryAfter, &f.retryAfter}, {"delay", f.Delay, &f.delay}} {
		if d.raw == "" {
			continue
		}
		v, err := time.ParseDuration(d.raw)
		if err != nil || v < 0 || v > maxFaultDuration {
			return fmt.Errorf("%s must be a duration from 0 to %v such as 500ms, not %q", d.name, maxFaultDuration, d.raw)
		}
		*d.dst = v
	}
	if f.Status == 0 && f.delay == 0 && !f.Drop {
		return fmt.Errorf("say what to inject: status, error_code, delay or drop")
	}
	return nil
}

// problem is the answer an injected status gets: a valid problem of the API,
// retryable as the real service would mark it.
func (f *Fault) problem() *apiError {
	code, ok := errorCode(f.ErrorCode), f.ErrorCode != ""
	if !ok {
		if code, ok = faultCodes[f.Status]; !ok {
			code = codeInternal
		}
	}
	e := &apiError{code: code, status: f.Status, retryAfter: f.retryAfter,
		detail: fmt.Sprintf("injected by the mock: %d %s", f.Status, code)}
	if e.status == statusOf(code) {
		e.status = 0
	}
	return e
}

// parseFaultHeader reads an X-Mock-Fault header (headerkv.go).
func parseFaultHeader(h string) (Fault, error) {
	var f Fault
	pairs, err := parseHeaderPairs(h, "drop")
	if err != nil {
		return f, err
	}
	for _, p := range pairs {
		switch p.key {
		case "status":
			n, err := strconv.Atoi(p.value)
			if err != nil {
				return f, fmt.Errorf("status must be a number, not %q", p.value)
			}
			f.Status = n
		case "error_code":
			f.ErrorCode = p.value
		case "retry_after":
			f.RetryAfter = p.value
		case "delay":
			f.Delay = p.value
		case "drop":
			b, err := strconv.ParseBool(p.value)
			if err != nil {
				return f, fmt.Errorf("drop must be true or false, not %q", p.value)
			}
			f.Drop = b
		default:
			return f, fmt.Errorf("unknown key %q (known: status, error_code, retry_after, delay, drop)", p.key)
		}
	}
	return f, f.check()
}

// faultRules are one mock session's fault rules.
type faultRules struct{ numbered.Set[FaultRule] }

func (fr *faultRules) add(r FaultRule) (FaultRule, error) {
	if r.Path == "" {
		return r, fmt.Errorf("path is required (use \"*\" wildcards, e.g. \"/agent/runs/*\")")
	}
	// Rules match the path the API knows, which the mock serves both at the
	// root and under /api/v1; a rule written with the prefix means the same
	// path, so it is kept without it rather than never matching.
	if r.Path == versionPrefix || strings.HasPrefix(r.Path, versionPrefix+"/") {
		r.Path = strings.TrimPrefix(r.Path, versionPrefix)
	}
	if len(r.Path) > maxPatternBytes || len(r.Header) > maxPatternBytes || len(r.Value) > maxPatternBytes {
		return r, fmt.Errorf("path, header and value are limited to %d bytes each", maxPatternBytes)
	}
	if _, err := path.Match(r.Path, "/"); err != nil {
		return r, fmt.Errorf("path %q is not a valid pattern: %v", r.Path, err)
	}
	if r.Times < 0 || r.Probability < 0 || r.Probability > 1 {
		return r, fmt.Errorf("times must be 0 or more and probability between 0 and 1")
	}
	if err := r.Fault.check(); err != nil {
		return r, err
	}
	r.Method = strings.ToUpper(r.Method)
	r.Matched, r.Injected = 0, 0
	r.rng = rand.New(rand.NewSource(r.Seed))
	// The copy handed back is taken under the lock: matching updates the
	// stored rule's counts from other requests.
	stored, out := r, r
	if err := fr.Insert(&stored, func(id string) { stored.ID = id; out = stored }); err != nil {
		return r, err
	}
	return out, nil
}

// match finds the fault for a request, if any rule fires. A rule whose
// Times are used up stays listed, with its counts, but no longer fires.
func (fr *faultRules) match(r *http.Request, apiPath string) *Fault {
	var fault *Fault
	fr.First(func(rule *FaultRule) bool {
		if rule.Method != "" && rule.Method != r.Method {
			return false
		}
		if ok, _ := path.Match(rule.Path, apiPath); !ok {
			return false
		}
		if rule.Header != "" {
			v, present := r.Header[http.CanonicalHeaderKey(rule.Header)]
			if !present || rule.Value != "" && !slices.Contains(v, rule.Value) {
				return false
			}
		}
		rule.Matched++
		if rule.Times > 0 && rule.Injected >= rule.Times {
			return false
		}
		if rule.Probability > 0 && rule.rng.Float64() >= rule.Probability {
			return false
		}
		rule.Injected++
		f := rule.Fault
		fault = &f
		return true
	})
	return fault
}

func (fr *faultRules) removeID(id string) bool {
	return fr.Remove(id, func(r *FaultRule) string { return r.ID })
}
