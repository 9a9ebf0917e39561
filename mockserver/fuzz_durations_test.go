package mockserver_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/agentruns/agentruns/mockserver"
	"github.com/stretchr/testify/require"
)

// hangBound is how long a listing or a get may take before FuzzDurations
// calls the mock hung. It catches a walk that never ends, not slowness:
// both answer in milliseconds on an idle machine, and no busy one comes
// near minutes.
const hangBound = 3 * time.Minute

// durationInputs are the ways a caller hands the mock a duration or an
// instant, as FuzzDurations picks them by number: each puts value where
// it goes.
var durationInputs = []struct {
	name string
	send func(m *fuzzMock, value string) *httptest.ResponseRecorder
}{
	{"X-Mock-Fate step", fateHeader("step")},
	{"X-Mock-Fate queued", fateHeader("queued")},
	{"X-Mock-Fate pending", fateHeader("pending")},
	{"X-Mock-Fate claimed", fateHeader("claimed")},
	{"X-Mock-Fate inprogress", fateHeader("inprogress")},
	{"fate rule step", fateRule("step")},
	{"fate rule queued and inprogress", fateRule("queued", "inprogress")},
	{"X-Mock-Fault retry_after", func(m *fuzzMock, v string) *httptest.ResponseRecorder {
		return m.send("GET", "/agent/runs", "", mockserver.FaultHeader, "status=429; retry_after="+v)
	}},
	{"fault rule retry_after", func(m *fuzzMock, v string) *httptest.ResponseRecorder {
		return m.send("POST", "/__mock/faults", jsonOf(map[string]any{"path": "/agent/runs/*", "status": 429, "retry_after": v, "times": 1}))
	}},
	{"clock advance", func(m *fuzzMock, v string) *httptest.ResponseRecorder {
		return m.send("POST", "/__mock/clock/advance", jsonOf(map[string]string{"by": v}))
	}},
	{"clock set", func(m *fuzzMock, v string) *httptest.ResponseRecorder {
		return m.send("PUT", "/__mock/clock", jsonOf(map[string]string{"now": v}))
	}},
	{"schedule cron", func(m *fuzzMock, v string) *httptest.ResponseRecorder {
		return m.send("POST", "/agent/schedules", jsonOf(map[string]any{"name": "fuzzed", "cron_schedule": v, "prompt": "tick"}))
	}},
	// Options: a mock of its own, built from the value.
	{"--step", optionMock(func(o *mockserver.Options, d time.Duration) { o.Step = d })},
	{"--queued", optionMock(func(o *mockserver.Options, d time.Duration) { o.Queued = d })},
	{"--link-lifetime", optionMock(func(o *mockserver.Options, d time.Duration) { o.LinkLifetime = d })},
}

func fateHeader(key string) func(*fuzzMock, string) *httptest.ResponseRecorder {
	return func(m *fuzzMock, v string) *httptest.ResponseRecorder {
		return m.send("POST", "/agent/run", `{"prompt":"fated"}`, mockserver.FateHeader, key+"="+v)
	}
}

func fateRule(keys ...string) func(*fuzzMock, string) *httptest.ResponseRecorder {
	return func(m *fuzzMock, v string) *httptest.ResponseRecorder {
		rule := map[string]any{"prompt_pattern": "ruled"}
		for _, k := range keys {
			rule[k] = v
		}
		rec := m.send("POST", "/__mock/fates", jsonOf(rule))
		if rec.Code != http.StatusOK {
			return rec
		}
		return m.send("POST", "/agent/run", `{"prompt":"ruled"}`)
	}
}

// optionMock replaces the mock by one built with a duration option; a
// value that is no duration, or one New refuses, leaves it as it was.
func optionMock(set func(*mockserver.Options, time.Duration)) func(*fuzzMock, string) *httptest.ResponseRecorder {
	return func(m *fuzzMock, v string) *httptest.ResponseRecorder {
		d, err := time.ParseDuration(v)
		if err != nil {
			return nil
		}
		opts := fuzzOptions()
		set(&opts, d)
		s, err := mockserver.New(opts)
		if err != nil {
			return nil // refused, with a message naming the option (TestDurationOptionsAreBounded)
		}
		m.h = s
		return m.send("POST", "/agent/run", `{"prompt":"optioned"}`)
	}
}

func jsonOf(v any) string {
	raw, _ := json.Marshal(v)
	return string(raw)
}

// send answers one request with a body and headers in pairs.
func (m *fuzzMock) send(method, path, body string, headers ...string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	return m.serve(req)
}

// answers runs one request and fails the test if it takes past hangBound.
func answers(t *testing.T, m *fuzzMock, what, method, path string) *httptest.ResponseRecorder {
	t.Helper()
	done := make(chan *httptest.ResponseRecorder, 1)
	go func() { done <- m.send(method, path, "") }()
	select {
	case rec := <-done:
		return rec
	case <-time.After(hangBound):
		t.Fatalf("%s (%s %s) did not answer within %v: the mock is stuck", what, method, path, hangBound)
		return nil
	}
}

// FuzzDurations sends a random value through each way a caller gives the
// mock a duration or an instant (headers, rules, the clock, crons,
// options), after setting the clock to another random instant, and then
// requires a listing and a get to answer. A value past a bound is a 400
// naming it; none may overflow the mock's time arithmetic and leave a
// walk that never ends (step=2562047h once did).
func FuzzDurations(f *testing.F) {
	for _, seed := range []struct {
		input     uint8
		value, at string
	}{
		{0, "2562047h", ""},
		{0, "9223372036854775807ns", ""},
		{1, "2562047h", ""},
		{0, "8760h", "2261-12-31T00:00:00Z"},
		{4, "100000h", ""},
		{5, "2562047h", ""},
		{6, "8760h", "9999-12-31T00:00:00Z"},
		{7, "2m", ""},
		{8, "-1s", ""},
		{9, "2562047h", "2300-01-01T00:00:00Z"},
		{10, "9999-12-31T23:59:59.999Z", ""},
		{10, "2262-04-11T23:47:16.854775807Z", ""},
		{11, "59 23 31 12 *", "9999-12-30T00:00:00Z"},
		{11, "0 0 29 2 *", "2400-01-01T00:00:00Z"},
		{12, "2562047h", ""},
		{12, "8760h", "3000-01-01T00:00:00Z"},
		{13, "-5s", ""},
		{14, "2562047h", "9999-12-31T23:00:00Z"},
		{14, "1h", "9999-12-31T23:59:00Z"},
	} {
		f.Add(seed.input, seed.value, seed.at)
	}
	f.Fuzz(func(t *testing.T, input uint8, value, at string) {
		m := &fuzzMock{}
		s, err := mockserver.New(fuzzOptions())
		require.NoError(t, err)
		m.h = s
		if at != "" {
			m.send("PUT", "/__mock/clock", jsonOf(map[string]string{"now": at}))
		}
		in := durationInputs[int(input)%len(durationInputs)]
		if rec := in.send(m, value); rec != nil {
			checkAnswer(t, rec, fmt.Sprintf("%s %q", in.name, value))
			if rec.Code == http.StatusBadRequest {
				require.NotEmpty(t, rec.Body.String())
			}
		}
		// A run that exists whatever the input did, to get; then time moves
		// on, so every timeline is walked at a later instant.
		rec := m.send("POST", "/agent/run", `{"prompt":"the one to get"}`)
		checkAnswer(t, rec, "create")
		var created mockserver.RunAgentResponse
		if rec.Code == http.StatusOK {
			require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &created))
		}
		m.send("POST", "/__mock/clock/advance", `{"by":"1h"}`)
		for _, path := range []string{"/agent/runs", "/agent/runs?sort_by=updated_at&sort_order=asc", "/agent/schedules"} {
			rec = answers(t, m, "a listing after "+in.name, "GET", path)
			checkAnswer(t, rec, path)
			require.Equal(t, http.StatusOK, rec.Code, "%s after %s %q: %s", path, in.name, value, rec.Body)
		}
		if created.RunID != "" {
			for _, path := range []string{"/agent/runs/" + created.RunID, "/agent/events?run_ids=" + created.RunID} {
				rec = answers(t, m, "a get after "+in.name, "GET", path)
				checkAnswer(t, rec, path)
				if rec.Code == http.StatusTooManyRequests && in.name == "fault rule retry_after" {
					// The input's own fault rule (/agent/runs/*, once)
					// answered this get, as it should; the next is the run.
					rec = answers(t, m, "a get after the fault", "GET", path)
					checkAnswer(t, rec, path)
				}
				require.Equal(t, http.StatusOK, rec.Code, "%s", rec.Body)
			}
		}
	})
}

func fuzzOptions() mockserver.Options {
	return mockserver.Options{ClockMode: mockserver.VirtualClock, ClockStart: clockStart, Step: 10 * time.Second, MaxBodyBytes: 64 << 10}
}
