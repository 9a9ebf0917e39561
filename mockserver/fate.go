package mockserver

import (
	"fmt"
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
// fixture rule matching the prompt, then the request's header.
func (c *config) fateFor(prompt, header string) (fate, error) {
	f := fate{final: Succeeded, steps: c.steps}
	for _, rule := range c.fixtures.Fates {
		if rule.Pattern.MatchString(prompt) {
			if err := f.applyRule(rule.Fate); err != nil {
				return fate{}, err
			}
			break
		}
	}
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
	stepIndex := map[string]int{"queued": 0, "pending": 1, "claimed": 2, "inprogress": 3}
	for _, part := range strings.FieldsFunc(h, func(r rune) bool { return r == ';' || r == ',' }) {
		key, value, ok := strings.Cut(strings.TrimSpace(part), "=")
		key, value = strings.ToLower(strings.TrimSpace(key)), strings.TrimSpace(value)
		if !ok || value == "" {
			return fmt.Errorf("%q is not key=value", strings.TrimSpace(part))
		}
		switch key {
		case "state":
			if err := f.setFinal(value); err != nil {
				return err
			}
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
	}
	return nil
}
