package refserver

import (
	"net/http"
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// objectsWithout lists, by JSON Pointer, the objects of v that lack the
// undocumented member, and those that have it; metadata's and the tool
// servers' maps are walked but not counted, being keyed by names.
func objectsWithout(v any, at string, without, with *[]string) {
	switch v := v.(type) {
	case []any:
		for i, item := range v {
			objectsWithout(item, at+"/"+strconv.Itoa(i), without, with)
		}
	case map[string]any:
		if _, ok := v[extraMember]; ok {
			*with = append(*with, at)
		} else {
			*without = append(*without, at)
		}
		for k, member := range v {
			objectsWithout(member, at+"/"+k, without, with)
		}
	}
}

// A run that has been through every state, with metadata and a tool
// server, so that its answer holds every kind of nested object.
const richRun = `{"prompt": "Tag the release", "metadata": {"ticket_id": "REL-1"},
	"config": {"mcp_servers": {"docs": {"url": "https://mcp.example.test", "headers": {"X-Team": "web"}}}}}`

func TestExtrasAddAMemberToEveryObject(t *testing.T) {
	for _, extras := range []bool{true, false} {
		c := newClient(t, Options{Step: time.Millisecond, Extras: extras})
		_, _, created, _ := c.do("POST", "/agent/runs", richRun)
		id := created["run_id"].(string)
		require.Eventually(t, func() bool {
			_, _, run, _ := c.do("GET", "/agent/runs/"+id, "")
			return run["state"] == "SUCCEEDED"
		}, 10*time.Second, 5*time.Millisecond)

		for _, path := range []string{"/agent/runs?limit=500", "/agent/runs/" + id, "/agent/runs/nope", "/agent/models", "/agent/events"} {
			status, _, body, raw := c.do("GET", path, "")
			require.NotNil(t, body, raw)
			var without, with []string
			objectsWithout(body, "", &without, &with)
			if !extras {
				assert.Empty(t, with, "%s without Extras", path)
				continue
			}
			sort.Strings(without)
			var unexpected []string
			for _, p := range without {
				if !isNameKeyedPointer(p) {
					unexpected = append(unexpected, p)
				}
			}
			assert.Empty(t, unexpected, "%s (%d): objects without %s", path, status, extraMember)
			assert.Greater(t, len(with), 0, path)
		}

		_, _, run, _ := c.do("GET", "/agent/runs/"+id, "")
		for _, nested := range []string{"creator", "scope", "request_usage", "agent_config"} {
			_, has := run[nested].(map[string]any)[extraMember]
			assert.Equal(t, extras, has, "%s (Extras %v)", nested, extras)
		}
		_, has := run["artifacts"].([]any)[0].(map[string]any)["data"].(map[string]any)[extraMember]
		assert.Equal(t, extras, has, "an artifact's data")
		assert.Equal(t, map[string]any{"ticket_id": "REL-1"}, run["metadata"], "metadata is the caller's names alone")
		servers := run["agent_config"].(map[string]any)["mcp_servers"].(map[string]any)
		assert.Len(t, servers, 1, "no server named rollout_ring")
		_, has = servers["docs"].(map[string]any)[extraMember]
		assert.Equal(t, extras, has, "a tool server is an object of fields")
		assert.Equal(t, map[string]any{"X-Team": "web"}, servers["docs"].(map[string]any)["headers"])
	}
}

// isNameKeyedPointer is a pointer to one of the maps keyed by names.
func isNameKeyedPointer(p string) bool {
	for i := len(p) - 1; i >= 0; i-- {
		if p[i] == '/' {
			return nameKeyed[p[i+1:]]
		}
	}
	return false
}

func TestExtrasShowEveryRunsSourceOutsideTheEnum(t *testing.T) {
	for _, extras := range []bool{true, false} {
		c := newClient(t, Options{Step: time.Hour, Extras: extras})
		_, _, created, _ := c.do("POST", "/agent/runs", `{"prompt": "Fix the build"}`)
		_, _, run, _ := c.do("GET", "/agent/runs/"+created["run_id"].(string), "")
		_, _, page, _ := c.do("GET", "/agent/runs?limit=500", "")
		sources := map[string]bool{run["source"].(string): true}
		for _, r := range page["runs"].([]any) {
			sources[r.(map[string]any)["source"].(string)] = true
		}
		if extras {
			assert.Equal(t, map[string]bool{extraSource: true}, sources)
		} else {
			assert.NotContains(t, sources, extraSource)
			assert.True(t, sources["API"])
		}
	}
}

func TestExtrasAnswerAnUndocumentedStatusWhenAsked(t *testing.T) {
	for _, tc := range []struct {
		extras bool
		prefer string
		want   int
	}{
		{true, "status=203", http.StatusNonAuthoritativeInfo},
		{true, "respond-async, status=203", http.StatusNonAuthoritativeInfo},
		{true, "", http.StatusOK},
		{true, "status=204", http.StatusOK},
		{false, "status=203", http.StatusOK},
	} {
		c := newClient(t, Options{Extras: tc.extras})
		req, err := http.NewRequest("GET", c.url+"/agent/models", nil)
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer wk-test")
		if tc.prefer != "" {
			req.Header.Set("Prefer", tc.prefer)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		assert.Equal(t, tc.want, resp.StatusCode, "%+v", tc)
		assert.Equal(t, "application/json", resp.Header.Get("Content-Type"))
	}
	// Only the models: another operation asked the same keeps its 200.
	c := newClient(t, Options{Extras: true})
	req, _ := http.NewRequest("GET", c.url+"/agent/environments", nil)
	req.Header.Set("Authorization", "Bearer wk-test")
	req.Header.Set("Prefer", "status=203")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)
}

func TestExtrasServeAnOperationTheDocumentLacks(t *testing.T) {
	c := newClient(t, Options{Step: time.Hour, Extras: true})
	_, _, created, _ := c.do("POST", "/agent/runs", `{"prompt": "Fix the build"}`)
	id := created["run_id"].(string)

	status, header, usage, _ := c.do("GET", "/agent/runs/"+id+"/usage", "")
	assert.Equal(t, http.StatusOK, status)
	assert.Equal(t, "application/json", header.Get("Content-Type"))
	assert.Equal(t, map[string]any{"run_id": id, "credits_used": float64(usageCredits), extraMember: extraValue}, usage)

	status, header, problem, _ := c.do("GET", "/agent/runs/nope/usage", "")
	assert.Equal(t, http.StatusNotFound, status)
	assert.Equal(t, "application/problem+json", header.Get("Content-Type"))
	assert.Equal(t, problemBase+"resource_not_found", problem["type"])

	other := c
	other.key = OtherTeamKeyPrefix + "key"
	status, _, _, _ = other.do("GET", "/agent/runs/"+id+"/usage", "")
	assert.Equal(t, http.StatusForbidden, status, "another team's run")

	status, _, _, _ = c.do("POST", "/agent/runs/"+id+"/usage", "")
	assert.Equal(t, http.StatusNotFound, status, "GET alone")

	without := newClient(t, Options{Step: time.Hour})
	_, _, created, _ = without.do("POST", "/agent/runs", `{"prompt": "Fix the build"}`)
	status, _, _, _ = without.do("GET", "/agent/runs/"+created["run_id"].(string)+"/usage", "")
	assert.Equal(t, http.StatusNotFound, status, "without Extras")
}
