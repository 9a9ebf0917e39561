package mockserver

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/agentruns/agentruns/fixtures"
)

// FateHeader lets a client choose, per create request, how the new run ends
// and how long it takes, e.g. "state=FAILED; error_code=insufficient_credits; step=500ms".
const FateHeader = "X-Mock-Fate"

// fate is how a new run will end and how long each state before that lasts.
type fate struct {
	final     State
	errorCode string
	message   string
	retryable *bool
	steps     stepsOf
}

// statusMessage is what a run that met this fate shows at its end; what the
// fate leaves open is filled with what a real failure of that kind says.
func (f fate) statusMessage() *StatusMessage {
	m := &StatusMessage{Message: f.message, ErrorCode: f.errorCode, Retryable: f.retryable}
	if m.ErrorCode == "" {
		m.ErrorCode = string(codeInvalidRequest)
		if f.final == Errored {
			m.ErrorCode = string(codeInternal)
		}
	}
	if m.Message == "" {
		m.Message = "The agent could not complete the task."
		if f.final == Errored {
			m.Message = "The run stopped because of a platform error."
		}
	}
	if m.Retryable == nil {
		m.Retryable = boolPtr(errorCodes[errorCode(m.ErrorCode)].retryable)
	}
	return m
}

// fateFor picks a new run's fate: the server's defaults, then the first
// fixture rule matching the prompt, then the session's first matching rule,
// then the request's header.
func (c *config) fateFor(prompt, header string, session *fateRules) (fate, error) {
	f := fate{final: Succeeded, steps: c.steps}
	for _, rule := range c.fixtures.Fates {
		if rule.Pattern.MatchString(prompt) {
			if err := f.applyRule(rule.Fate); err != nil {
				return fate{}, err
			}
			break
		}
	}
	session.decide(&f, prompt)
	if header != "" {
		if err := f.applyHeader(header); err != nil {
			return fate{}, err
		}
	}
	return f, nil
}

func (f *fate) applyRule(r fixtures.Fate) error {
	if r.State != "" {
		if err := f.setFinal(r.State); err != nil {
			return err
		}
	}
	if r.ErrorCode != "" {
		f.errorCode = r.ErrorCode
	}
	if r.Message != "" {
		f.message = r.Message
	}
	if r.Retryable != nil {
		f.retryable = r.Retryable
	}
	if r.Step > 0 {
		for i := range f.steps {
			f.steps[i] = time.Duration(r.Step)
		}
	}
	return nil
}

func (f *fate) setFinal(s string) error {
	st := State(strings.ToUpper(strings.TrimSpace(s)))
	if !st.finalFate() {
		return fmt.Errorf("state must be SUCCEEDED, FAILED or ERROR, not %q", s)
	}
	f.final = st
	return nil
}

// applyHeader reads "key=value" pairs separated by ";" or ",".
func (f *fate) applyHeader(h string) error {
	for _, part := range strings.FieldsFunc(h, func(r rune) bool { return r == ';' || r == ',' }) {
		key, value, ok := strings.Cut(strings.TrimSpace(part), "=")
		key, value = strings.ToLower(strings.TrimSpace(key)), strings.TrimSpace(value)
		if !ok || value == "" {
			return fmt.Errorf("%q is not key=value", strings.TrimSpace(part))
		}
		if err := f.apply(key, value); err != nil {
			return err
		}
	}
	return nil
}

var stepIndex = map[string]int{"queued": 0, "pending": 1, "claimed": 2, "inprogress": 3}

// apply sets one key of a fate, as the header and session rules name them.
func (f *fate) apply(key, value string) error {
	switch key {
	case "state":
		return f.setFinal(value)
	case "error_code":
		if !knownErrorCode(value) {
			return fmt.Errorf("error_code %q is not an error code of the API", value)
		}
		f.errorCode = value
	case "message":
		f.message = value
	case "retryable":
		b, err := strconv.ParseBool(value)
		if err != nil {
			return fmt.Errorf("retryable must be true or false, not %q", value)
		}
		f.retryable = &b
	case "step", "queued", "pending", "claimed", "inprogress":
		d, err := time.ParseDuration(value)
		if err != nil || d < 0 {
			return fmt.Errorf("%s must be a duration such as 500ms or 2s, not %q", key, value)
		}
		if key == "step" {
			for i := range f.steps {
				f.steps[i] = d
			}
		} else {
			f.steps[stepIndex[key]] = d
		}
	default:
		return fmt.Errorf("unknown key %q (known: state, error_code, message, retryable, step, queued, pending, claimed, inprogress)", key)
	}
	return nil
}

// FateRule decides the fate of a session's next runs whose prompt matches.
// Durations are Go duration strings ("500ms", "2s"); empty fields keep what
// the server or a fixture rule would choose.
type FateRule struct {
	ID string `json:"id"`
	// PromptPattern is a regular expression; "" matches every prompt.
	PromptPattern string `json:"prompt_pattern,omitempty"`
	// State is the final state: SUCCEEDED, FAILED or ERROR.
	State      State  `json:"state,omitempty"`
	ErrorCode  string `json:"error_code,omitempty"`
	Message    string `json:"message,omitempty"`
	Retryable  *bool  `json:"retryable,omitempty"`
	Step       string `json:"step,omitempty"`
	Queued     string `json:"queued,omitempty"`
	Pending    string `json:"pending,omitempty"`
	Claimed    string `json:"claimed,omitempty"`
	InProgress string `json:"inprogress,omitempty"`
	// Times limits the rule to the next N matching runs; 0 is unlimited.
	Times int `json:"times,omitempty"`
	// Used counts the runs the rule decided.
	Used int `json:"used"`

	pattern *regexp.Regexp
}

func (r *FateRule) applyTo(f *fate) error {
	pairs := [][2]string{{"state", string(r.State)}, {"error_code", r.ErrorCode}, {"message", r.Message},
		{"step", r.Step}, {"queued", r.Queued}, {"pending", r.Pending}, {"claimed", r.Claimed}, {"inprogress", r.InProgress}}
	for _, p := range pairs {
		if p[1] != "" {
			if err := f.apply(p[0], p[1]); err != nil {
				return err
			}
		}
	}
	if r.Retryable != nil {
		f.retryable = r.Retryable
	}
	return nil
}

// fateRules are one session's fate rules.
type fateRules struct{ ruleSet[FateRule] }

func (fr *fateRules) add(r FateRule) (FateRule, error) {
	re, err := regexp.Compile(r.PromptPattern)
	if err != nil {
		return r, fmt.Errorf("prompt_pattern: %v", err)
	}
	if r.Times < 0 {
		return r, fmt.Errorf("times must be 0 or more")
	}
	if err := r.applyTo(&fate{final: Succeeded}); err != nil {
		return r, err
	}
	r.pattern, r.Used = re, 0
	// The copy handed back is taken under the lock: matching updates the
	// stored rule's counts from other requests.
	stored, out := r, r
	fr.insert(&stored, func(id string) { stored.ID = id; out = stored })
	return out, nil
}

// decide applies the first live rule matching prompt to f.
func (fr *fateRules) decide(f *fate, prompt string) {
	fr.first(func(r *FateRule) bool {
		if r.Times > 0 && r.Used >= r.Times || !r.pattern.MatchString(prompt) {
			return false
		}
		r.Used++
		_ = r.applyTo(f) // checked when the rule was added
		return true
	})
}
