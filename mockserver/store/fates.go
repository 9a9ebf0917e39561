package store

import (
	"fmt"
	"regexp"
	"regexp/syntax"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/agentruns/agentruns/fixtures"
	"github.com/agentruns/agentruns/mockserver/errcode"
)

// Fate is how a new run will end and how long each state before that lasts.
type Fate struct {
	Final     State
	ErrorCode string
	Message   string
	Retryable *bool
	Steps     Steps
	// Artifacts are the kinds of artifact the run shows once it has
	// succeeded, one of each, in this order.
	Artifacts []string
	// Handoff are the names of the files each ended execution of the run
	// leaves for whoever continues the work (handoff.go).
	Handoff []string
}

// StatusMessage is what a run that met this fate shows at its end; what the
// fate leaves open is filled with what a real failure of that kind says.
func (f Fate) StatusMessage() *StatusMessage {
	m := &StatusMessage{Message: f.Message, ErrorCode: f.ErrorCode, Retryable: f.Retryable}
	if m.ErrorCode == "" {
		m.ErrorCode = string(errcode.InvalidRequest)
		if f.Final == Errored {
			m.ErrorCode = string(errcode.Internal)
		}
	}
	if m.Message == "" {
		m.Message = "The agent could not complete the task."
		if f.Final == Errored {
			m.Message = "The run stopped because of a platform error."
		}
	}
	if m.Retryable == nil {
		m.Retryable = boolPtr(errcode.Retryable(m.ErrorCode))
	}
	return m
}

// Check refuses a fate no run of the service meets: a failure whose error
// code belongs to the other final state (environment_setup_failed is the
// caller's side, so FAILED; internal_error the platform's, so ERROR).
func (f Fate) Check() error {
	if f.ErrorCode == "" || !(f.Final == Failed || f.Final == Errored) {
		return nil
	}
	if want := State(errcode.EndState(f.ErrorCode)); want != f.Final {
		return fmt.Errorf("error_code %s ends a run in %s, not %s", f.ErrorCode, want, f.Final)
	}
	return nil
}

// FateFor picks a new run's fate before the request has its say: the
// server's defaults, then the first fixture rule matching the prompt, then
// the mock session's first matching rule. The caller then applies the
// request's own choices with Fate.Set.
//
// Patterns see only the prompt's first MatchedPromptBytes: Go's regular
// expressions run in time linear in the text, and this bounds the text.
func (ms *Session) FateFor(prompt string) Fate {
	if len(prompt) > MatchedPromptBytes {
		prompt = prompt[:MatchedPromptBytes]
	}
	f := Fate{Final: Succeeded, Steps: ms.st.opts.Steps}
	for _, rule := range ms.st.fates {
		if rule.Pattern.MatchString(prompt) {
			_ = f.applyFixture(rule.Fate) // checked by New
			break
		}
	}
	ms.fates.First(func(r *FateRule) bool {
		if r.Times > 0 && r.Used >= r.Times || !r.pattern.MatchString(prompt) {
			return false
		}
		r.Used++
		_ = r.applyTo(&f) // checked when the rule was added
		return true
	})
	return f
}

func (f *Fate) applyFixture(r fixtures.Fate) error {
	if r.State != "" {
		if err := f.Set("state", r.State); err != nil {
			return err
		}
	}
	if r.ErrorCode != "" {
		if err := f.Set("error_code", r.ErrorCode); err != nil {
			return err
		}
	}
	if r.Message != "" {
		f.Message = r.Message
	}
	if r.Retryable != nil {
		f.Retryable = r.Retryable
	}
	if r.Step > 0 {
		if err := f.Set("step", time.Duration(r.Step).String()); err != nil {
			return err
		}
	}
	if len(r.Artifacts) > 0 {
		if err := f.Set("artifacts", strings.Join(r.Artifacts, "+")); err != nil {
			return err
		}
	}
	if len(r.Handoff) > 0 {
		if err := f.Set("handoff", strings.Join(r.Handoff, ",")); err != nil {
			return err
		}
	}
	return nil
}

var stepIndex = map[string]int{"queued": 0, "pending": 1, "claimed": 2, "inprogress": 3}

// FateKeys are the keys Fate.Set knows, as the X-Mock-Fate header and fate
// rules name them.
const FateKeys = "state, error_code, message, retryable, step, queued, pending, claimed, inprogress, artifacts, handoff"

// ArtifactKinds are the artifact types a fate may give a run: all four.
var ArtifactKinds = []string{ArtifactPlan, ArtifactPullRequest, ArtifactScreenshot, ArtifactFile}

// parseArtifacts reads "PLAN+PULL_REQUEST" (or with spaces, or "none"):
// the header syntax keeps "," and ";" for separating keys.
func parseArtifacts(value string) ([]string, error) {
	if strings.EqualFold(strings.TrimSpace(value), "none") {
		return []string{}, nil
	}
	var out []string
	seen := map[string]bool{}
	for _, k := range strings.FieldsFunc(value, func(r rune) bool { return r == '+' || r == ' ' || r == '|' }) {
		k = strings.ToUpper(k)
		if !slices.Contains(ArtifactKinds, k) {
			return nil, fmt.Errorf("artifacts: %q is not one of %s (join several with +)", k, strings.Join(ArtifactKinds, ", "))
		}
		if seen[k] {
			return nil, fmt.Errorf("artifacts: %s is named twice", k)
		}
		seen[k] = true
		out = append(out, k)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("artifacts: name at least one of %s, or none", strings.Join(ArtifactKinds, ", "))
	}
	return out, nil
}

// Set sets one key of a fate from its text.
func (f *Fate) Set(key, value string) error {
	switch key {
	case "state":
		st := State(strings.ToUpper(strings.TrimSpace(value)))
		if !st.FinalFate() {
			return fmt.Errorf("state must be SUCCEEDED, FAILED or ERROR, not %q", value)
		}
		f.Final = st
	case "error_code":
		if !errcode.Known(value) {
			return fmt.Errorf("error_code %q is not an error code of the API", value)
		}
		f.ErrorCode = value
	case "message":
		f.Message = value
	case "artifacts":
		kinds, err := parseArtifacts(value)
		if err != nil {
			return err
		}
		f.Artifacts = kinds
	case "handoff":
		files, err := parseHandoff(value)
		if err != nil {
			return err
		}
		f.Handoff = files
	case "retryable":
		b, err := strconv.ParseBool(value)
		if err != nil {
			return fmt.Errorf("retryable must be true or false, not %q", value)
		}
		f.Retryable = &b
	case "step", "queued", "pending", "claimed", "inprogress":
		d, err := ParseStep(value)
		if err != nil {
			return fmt.Errorf("%s %w", key, err)
		}
		if key == "step" {
			for i := range f.Steps {
				f.Steps[i] = d
			}
		} else {
			f.Steps[stepIndex[key]] = d
		}
	default:
		return fmt.Errorf("unknown key %q (known: %s)", key, FateKeys)
	}
	return nil
}

// MaxStep bounds how long a run may be told to stay in one state
// (fixtures.MaxStep, where the recorder finds it too).
const MaxStep = fixtures.MaxStep

const maxStepText = "8760h (a year)"

// ParseStep reads the time a run spends in one state, from 0 to MaxStep.
// Its error reads after the name of what was parsed.
func ParseStep(value string) (time.Duration, error) {
	d, err := time.ParseDuration(value)
	if err != nil || d < 0 || d > MaxStep {
		return 0, fmt.Errorf("must be a duration from 0 to %s such as 500ms or 2s, not %q", maxStepText, value)
	}
	return d, nil
}

// CheckSteps refuses steps outside 0 to MaxStep, naming the state.
func CheckSteps(steps Steps) error {
	for i, d := range steps {
		if d < 0 || d > MaxStep {
			return fmt.Errorf("the time in %s is %s; it must be from 0 to %s", progression[i], d, maxStepText)
		}
	}
	return nil
}

// FateRule decides the fate of a mock session's next runs whose prompt
// matches. Durations are Go duration strings ("500ms", "2s"); empty fields
// keep what the server or a fixture rule would choose.
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
	// Artifacts is what Fate.Set reads under "artifacts": "PLAN+SCREENSHOT".
	Artifacts string `json:"artifacts,omitempty"`
	// Handoff is what Fate.Set reads under "handoff": "workspace.tar.gz,notes.md".
	Handoff string `json:"handoff,omitempty"`
	// Times limits the rule to the next N matching runs; 0 is unlimited.
	Times int `json:"times,omitempty"`
	// Used counts the runs the rule decided.
	Used int `json:"used"`

	pattern *regexp.Regexp
}

func (r *FateRule) applyTo(f *Fate) error {
	pairs := [][2]string{{"state", string(r.State)}, {"error_code", r.ErrorCode}, {"message", r.Message},
		{"artifacts", r.Artifacts}, {"handoff", r.Handoff}, {"step", r.Step}, {"queued", r.Queued}, {"pending", r.Pending}, {"claimed", r.Claimed}, {"inprogress", r.InProgress}}
	for _, p := range pairs {
		if p[1] != "" {
			if err := f.Set(p[0], p[1]); err != nil {
				return err
			}
		}
	}
	if r.Retryable != nil {
		f.Retryable = r.Retryable
	}
	return nil
}

// Limits of fate rules' patterns: MaxPatternBytes of source, and a
// compiled program of at most MaxPatternInsts instructions, which is what
// a match costs per byte of text (counted repetitions such as (a{99}){99}
// are short to write and huge once compiled). MatchedPromptBytes is how
// much of a prompt patterns see.
const (
	MaxPatternBytes    = 1024
	MaxPatternInsts    = 2000
	MatchedPromptBytes = 4096
)

// compilePattern compiles a fate rule's pattern within the limits.
func compilePattern(p string) (*regexp.Regexp, error) {
	if len(p) > MaxPatternBytes {
		return nil, fmt.Errorf("prompt_pattern is %d bytes; the limit is %d", len(p), MaxPatternBytes)
	}
	parsed, err := syntax.Parse(p, syntax.Perl)
	if err != nil {
		return nil, fmt.Errorf("prompt_pattern: %v", err)
	}
	prog, err := syntax.Compile(parsed.Simplify())
	if err != nil {
		return nil, fmt.Errorf("prompt_pattern: %v", err)
	}
	if len(prog.Inst) > MaxPatternInsts {
		return nil, fmt.Errorf("prompt_pattern compiles to %d instructions; the limit is %d (use fewer or smaller counted repetitions)", len(prog.Inst), MaxPatternInsts)
	}
	return regexp.Compile(p)
}

// AddFate adds a fate rule to the mock session, numbered, and returns it.
func (ms *Session) AddFate(r FateRule) (FateRule, error) {
	re, err := compilePattern(r.PromptPattern)
	if err != nil {
		return r, err
	}
	if r.Times < 0 {
		return r, fmt.Errorf("times must be 0 or more")
	}
	f := Fate{Final: Succeeded}
	if err := r.applyTo(&f); err != nil {
		return r, err
	}
	if err := f.Check(); err != nil {
		return r, err
	}
	r.pattern, r.Used = re, 0
	// The copy handed back is taken under the lock: matching updates the
	// stored rule's counts from other requests.
	stored, out := r, r
	if err := ms.fates.Insert(&stored, func(id string) { stored.ID = id; out = stored }); err != nil {
		return r, err
	}
	return out, nil
}

// Fates lists the mock session's fate rules with how many runs each decided.
func (ms *Session) Fates() []FateRule { return ms.fates.List() }

// ClearFates removes the mock session's fate rules.
func (ms *Session) ClearFates() { ms.fates.Clear() }
