package steps

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/agentruns/agentruns/internal/probe"
	"github.com/agentruns/agentruns/openapi"
	"github.com/agentruns/agentruns/suiteconfig"
)

// A server built to the published document serves none of what the newest
// client added (newest_tag.go), and is not wrong: the document is the
// contract. So a run that selects the newest client's scenarios first asks
// the server whether it serves that surface: each of its GET operations,
// with ids of the key's own run and identity. An operation that answers
// anything but 404, 405 or 501 is served. Where any is, the surface is
// judged whole (its scenarios, and answers held to the whole document),
// so that a server serving it wrongly fails; where none is, its scenarios
// are skipped and answers are held to the published view, and the
// summary's first lines say so and which released clients that breaks.
// A team that promises the newest client says so (Config.NewestClient),
// and is judged on that surface whatever it serves.

// NewestSurface is what a run found of the newest client's surface.
type NewestSurface struct {
	// Judged tells that the surface's scenarios ran and every answer was
	// held to the whole document.
	Judged bool
	// Promised is Config.NewestClient: the surface is judged unasked.
	Promised bool
	// LeftOut tells that the tags select none of the surface's
	// scenarios: nothing was asked.
	LeftOut bool
	// Asked is each operation of the surface the suite asked about, and
	// what the server answered; empty when it had nothing to ask with (no
	// run and no identity of the key's team, and a read-only run).
	Asked []SurfaceAnswer
	// Breaks are the released client versions that call an operation of
	// the surface the server does not serve, when it is not judged.
	Breaks []ClientCalls
}

// SurfaceAnswer is the server's answer to one operation of the surface.
type SurfaceAnswer struct {
	Operation string // "GET /agent/identities/{uid}"
	Status    int    // 0 when no answer came
	Problem   string // why no answer came
}

// served tells whether the answer shows the operation served.
func (a SurfaceAnswer) served() bool {
	switch a.Status {
	case 0, http.StatusNotFound, http.StatusMethodNotAllowed, http.StatusNotImplemented:
		return false
	}
	return true
}

func (a SurfaceAnswer) String() string {
	if a.Status == 0 {
		return a.Operation + " gave no answer (" + a.Problem + ")"
	}
	return fmt.Sprintf("%s answered %d", a.Operation, a.Status)
}

// ClientCalls is a released client version and the operations it calls.
type ClientCalls struct {
	Version    string
	Operations []string
}

// newestClientName names the newest official client, as the document's
// marks do.
const newestClientName = "oz-agent-sdk 1.4.0-alpha.6"

// Lines are what the summary's first lines say of the surface, nothing
// when the tags left it out.
func (n NewestSurface) Lines() []string {
	asked := make([]string, 0, len(n.Asked))
	for _, a := range n.Asked {
		asked = append(asked, a.String())
	}
	switch {
	case n.LeftOut:
		return nil
	case n.Promised:
		return []string{"NEWEST CLIENT promised (--newest-client): what " + newestClientName + " calls beyond the published document is judged, and what is missing fails"}
	case n.Judged:
		return []string{"NEWEST CLIENT served (" + strings.Join(asked, ", ") + "): what " + newestClientName +
			" calls beyond the published document is judged too (@newest-client)"}
	}
	why := "the server holds no run nor identity of the key's team to ask with"
	if len(asked) > 0 {
		why = strings.Join(asked, ", ")
	}
	lines := []string{"NOT SERVED what " + newestClientName + " calls beyond the published document (" + why + "): " +
		"the server is judged by the published document alone, and the scenarios of that surface (@newest-client) are skipped"}
	for _, b := range n.Breaks {
		lines = append(lines, "        this breaks "+b.Version+", which calls "+strings.Join(b.Operations, ", "))
	}
	return append(lines, "        pass --newest-client if the server promises that client: what is missing then fails")
}

// skipReason is why a scenario of the surface is skipped when the surface
// is not judged.
func (n NewestSurface) skipReason(base string) string {
	if len(n.Asked) == 0 {
		return "checks what the newest official client calls beyond the published document (@newest-client); " + base +
			" holds no run nor identity of the key's team to ask whether it serves that: pass --newest-client to judge it"
	}
	asked := make([]string, 0, len(n.Asked))
	for _, a := range n.Asked {
		asked = append(asked, a.String())
	}
	return "checks what the newest official client calls beyond the published document (@newest-client), which " + base +
		" does not serve (" + strings.Join(asked, ", ") + "): pass --newest-client to hold it to that client"
}

// surveyPrompt names the run the survey creates when the key's team has
// none to ask about.
const surveyPrompt = "Contract suite pre-flight: does the server serve the newest client's operations? (cancelled at once)"

// surveyNewestSurface asks the server the surface's GET operations, with
// the ids of a run and an identity of the key's team. With no run to ask
// about it creates one (and cancels it), unless the run is read-only.
func surveyNewestSurface(ctx context.Context, hc *http.Client, base, key string, readOnly bool) (NewestSurface, error) {
	marked, err := openapi.NewestClientOperations(openapi.Document)
	if err != nil {
		return NewestSurface{}, err
	}
	ops := slices.Sorted(maps.Keys(marked))
	run := ctx
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	ids := map[string]string{}
	var runs struct {
		Runs []struct {
			RunID          string `json:"run_id"`
			ConversationID string `json:"conversation_id"`
		} `json:"runs"`
	}
	if probe.JSON(ctx, hc, http.MethodGet, base+"/agent/runs?limit=1", key, nil, &runs) == nil && len(runs.Runs) > 0 {
		ids["runId"], ids["conversationId"] = runs.Runs[0].RunID, runs.Runs[0].ConversationID
	} else if !readOnly {
		var created struct {
			RunID string `json:"run_id"`
		}
		body, _ := json.Marshal(map[string]string{"prompt": surveyPrompt})
		if probe.JSON(ctx, hc, http.MethodPost, base+"/agent/run", key, body, &created) == nil && created.RunID != "" {
			ids["runId"] = created.RunID
			defer func() {
				_ = probe.JSON(context.WithoutCancel(ctx), hc, http.MethodPost, base+"/agent/runs/"+url.PathEscape(created.RunID)+"/cancel", key, nil, nil)
			}()
		}
	}
	var identities struct {
		Agents []struct {
			UID string `json:"uid"`
		} `json:"agents"`
	}
	if probe.JSON(ctx, hc, http.MethodGet, base+"/agent/identities", key, nil, &identities) == nil && len(identities.Agents) > 0 {
		ids["uid"] = identities.Agents[0].UID
	}

	// A redirect is an answer: it is not followed.
	direct := *hc
	direct.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	var n NewestSurface
	for _, op := range ops {
		method, path, _ := strings.Cut(op, " ")
		target, ok := fillPath(path, ids)
		if method != http.MethodGet || !ok {
			continue // a write is never sent to ask; an id the server gave none of cannot be asked about
		}
		status, _, err := probe.Get(ctx, &direct, base+target, "Bearer "+key)
		a := SurfaceAnswer{Operation: op, Status: status}
		if err != nil {
			if run.Err() != nil {
				return NewestSurface{}, fmt.Errorf("%w before any scenario", ErrInterrupted)
			}
			a.Status, a.Problem = 0, probe.Reason(err)
		}
		n.Asked = append(n.Asked, a)
		n.Judged = n.Judged || a.served()
	}
	if !n.Judged {
		n.Breaks, err = callersOf(ops)
	}
	return n, err
}

// fillPath puts the ids into a path template; ok is false when one is
// missing.
func fillPath(template string, ids map[string]string) (string, bool) {
	segs := strings.Split(template, "/")
	for i, s := range segs {
		name, isParam := strings.CutPrefix(s, "{")
		if !isParam {
			continue
		}
		id := ids[strings.TrimSuffix(name, "}")]
		if id == "" {
			return "", false
		}
		segs[i] = url.PathEscape(id)
	}
	return strings.Join(segs, "/"), true
}

// callersOf lists the released client versions that call any of ops, each
// with the ones it calls.
func callersOf(ops []string) ([]ClientCalls, error) {
	versions, err := suiteconfig.ClientVersions()
	if err != nil {
		return nil, fmt.Errorf("loading the client versions' facts: %w", err)
	}
	var out []ClientCalls
	for _, v := range versions {
		c := ClientCalls{Version: v.Name}
		for _, op := range ops {
			method, path, _ := strings.Cut(op, " ")
			if _, calls := v.Calls(method, path); calls {
				c.Operations = append(c.Operations, op)
			}
		}
		if len(c.Operations) > 0 {
			out = append(out, c)
		}
	}
	return out, nil
}
