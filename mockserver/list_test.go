package mockserver_test

import (
	"fmt"
	"net/http"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/agentruns/agentruns/mockserver"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestListShowsNewestFirstAndOnlyTheTeamsRuns(t *testing.T) {
	c := newMock(t, mockserver.Options{})
	a := c.create(map[string]any{"prompt": "first", "config": map[string]any{"name": "order"}}).RunID
	c.advance(time.Second)
	b := c.create(map[string]any{"prompt": "second", "config": map[string]any{"name": "order"}}).RunID
	c.advance(time.Second)
	cc := c.create(map[string]any{"prompt": "third", "config": map[string]any{"name": "order"}}).RunID
	assert.Equal(t, []string{cc, b, a}, ids(c.list("name=order&sort_by=created_at").Runs))
	assert.Equal(t, []string{a, b, cc}, ids(c.list("name=order&sort_by=created_at&sort_order=asc").Runs))

	all := c.list("limit=500&sort_by=created_at")
	require.NotEmpty(t, all.Runs)
	for i, r := range all.Runs {
		assert.NotEqual(t, "user-carol", r.Creator.UID, "another team's run is never listed")
		if i > 0 {
			assert.GreaterOrEqual(t, all.Runs[i-1].CreatedAt, r.CreatedAt, "newest created first")
		}
	}
	assert.Len(t, c.list("").Runs, min(20, len(all.Runs)), "the default page is 20 runs")

	carol := c.as("wk-mock-carol")
	r := carol.do("GET", "/agent/runs/"+a, nil)
	assert.Equal(t, http.StatusForbidden, r.status)
	assert.Equal(t, mockserver.ProblemTypeBase+"not_authorized", r.problem(t).Type)
	assert.Equal(t, http.StatusForbidden, carol.do("POST", "/agent/runs/"+a+"/cancel", nil).status)
	assert.Empty(t, carol.list("name=order").Runs)
}

func TestListFilters(t *testing.T) {
	c := newMock(t, mockserver.Options{Step: time.Minute})
	mk := func(name, model, env, skill, prompt string, key string) string {
		cfg := map[string]any{"name": name, "model_id": model, "environment_id": env}
		if skill != "" {
			cfg["skill_spec"] = skill
		}
		return c.as(key).create(map[string]any{"prompt": prompt, "config": cfg}).RunID
	}
	r1 := mk("f", "gpt-5", "env-a", "", "Refactor the billing module", "wk-mock-alice")
	c.advance(time.Minute) // r1 is PENDING from here
	r2 := mk("f", "claude", "env-b", "acme/skills:lint", "Fix lint errors", "wk-mock-bob")
	c.advance(time.Minute)
	mid := c.do("GET", "/__mock/clock", nil)
	var clock mockserver.ClockInfo
	mid.json(t, &clock)
	c.advance(time.Second)
	r3 := mk("f", "gpt-5", "env-b", "", "Write billing docs", "wk-mock-bob")
	cases := []struct {
		query string
		want  []string
	}{
		{"", []string{r3, r2, r1}},
		{"state=QUEUED", []string{r3}},
		{"state=QUEUED&state=CLAIMED", []string{r3, r1}},
		{"state=PENDING", []string{r2}},
		{"state=SUCCEEDED", nil},
		{"config_name=f&model_id=gpt-5", []string{r3, r1}},
		{"model_id=claude", []string{r2}},
		{"creator=user-bob", []string{r3, r2}},
		{"creator=user-alice&model_id=claude", nil},
		{"source=API", []string{r3, r2, r1}},
		{"source=SLACK", nil},
		{"environment_id=env-b", []string{r3, r2}},
		{"skill_spec=acme/skills:lint", []string{r2}},
		{"skill=acme/skills:lint", []string{r2}},
		{"created_after=" + url.QueryEscape(clock.Now), []string{r3}},
		{"created_before=" + url.QueryEscape(clock.Now), []string{r2, r1}},
		{"updated_after=" + url.QueryEscape(clock.Now), []string{r3}},
		{"q=billing", []string{r3, r1}},
		{"q=BILLING+docs", []string{r3}},
		{"q=lint", []string{r2}},
		{"sort_by=title&sort_order=asc", []string{r2, r1, r3}},
	}
	for _, tc := range cases {
		t.Run(tc.query, func(t *testing.T) {
			q := "name=f"
			if tc.query != "" {
				q += "&" + tc.query
			}
			if tc.query == "config_name=f&model_id=gpt-5" {
				q = tc.query
			}
			got := c.list(q)
			assert.Equal(t, len(tc.want), len(got.Runs), "%s", q)
			if len(tc.want) > 0 {
				assert.Equal(t, tc.want, ids(got.Runs))
			}
		})
	}
}

func TestListRejectsBadQueries(t *testing.T) {
	c := newMock(t, mockserver.Options{})
	other := c.list("limit=1&sort_order=asc").PageInfo.NextCursor
	first := c.list("limit=1")
	require.True(t, first.PageInfo.HasNextPage)
	cur := first.PageInfo.NextCursor
	for _, q := range []string{
		"limit=0", "limit=501", "limit=ten", "limit=-1", "limit=1&limit=2",
		"state=DONE", "source=EMAIL", "created_after=yesterday", "created_before=2026-13-01T00:00:00Z",
		"sort_by=size", "sort_order=up", "artifact_type=IMAGE",
		"name=a&config_name=b", "skill=a/b:c&skill_spec=a/b:d",
		"cursor=garbage", "cursor=" + cur[:len(cur)-2] + "xx", "cursor=" + other,
	} {
		r := c.do("GET", "/agent/runs?"+q, nil)
		assert.Equal(t, http.StatusBadRequest, r.status, "%s: %s", q, r.body)
		if r.status == http.StatusBadRequest {
			assert.NotEmpty(t, r.problem(t).Detail, q)
		}
	}
	assert.Equal(t, http.StatusOK, c.do("GET", "/agent/runs?name=a&config_name=a", nil).status, "the same value under both names is fine")
	assert.Equal(t, http.StatusOK, c.do("GET", "/agent/runs?limit=1&cursor="+cur, nil).status)
	require.Equal(t, http.StatusOK, c.do("POST", "/__mock/reset", nil).status)
	assert.Equal(t, http.StatusBadRequest, c.do("GET", "/agent/runs?limit=1&cursor="+cur, nil).status, "a reset ends old cursors")
}

// Walking pages never repeats or skips a run, even while runs are created.
func TestCursorWalkIsCompleteWhileRunsAreCreated(t *testing.T) {
	for _, order := range []string{"", "&sort_order=asc", "&sort_by=title", "&sort_by=created_at&sort_order=asc"} {
		t.Run(order, func(t *testing.T) {
			c := newMock(t, mockserver.Options{})
			want := map[string]bool{}
			for i := 0; i < 23; i++ {
				want[c.create(map[string]any{"prompt": fmt.Sprintf("walk %02d", i), "config": map[string]any{"name": "walk"}}).RunID] = true
			}
			seen := map[string]int{}
			var wg sync.WaitGroup
			stop := make(chan struct{})
			wg.Add(1)
			go func() { // concurrent creations under the same name
				defer wg.Done()
				c := c.on(worker{t})
				for i := 0; i < 30; i++ { // bounded, so an ascending walk can catch up
					select {
					case <-stop:
						return
					default:
						c.create(map[string]any{"prompt": "late", "config": map[string]any{"name": "walk"}})
					}
				}
			}()
			q := "name=walk&limit=4" + order
			page := c.list(q)
			for {
				for _, r := range page.Runs {
					seen[r.RunID]++
				}
				if !page.PageInfo.HasNextPage {
					break
				}
				page = c.list(q + "&cursor=" + url.QueryEscape(page.PageInfo.NextCursor))
			}
			close(stop)
			wg.Wait()
			for id := range want {
				assert.Equal(t, 1, seen[id], "run %s seen once", id)
			}
			for id, n := range seen {
				assert.Equal(t, 1, n, "run %s repeated", id)
			}
		})
	}
}
