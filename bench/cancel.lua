-- POST /agent/runs/{id}/cancel for wrk (bench/run.sh): each run created
-- (POST /agent/run, as post.lua) is cancelled by the request after, so the
-- load is creates and cancels in turn, every cancel on a run still going.
-- Cancelling runs created beforehand instead would leave tens of thousands
-- of runs in progress at once, which a test session never has.
dofile("bench/create_then.lua")
create_then{
  path = "/agent/run",
  body = '{"prompt":"The login integration test in web/auth fails about one run in ten on CI. Find the race and fix it.","config":{"name":"flaky-tests","model_id":"auto","environment_id":"env-web-app"}}',
  status = 200,
  id = '"run_id":"([^"]+)"',
  follow = function(id) return "POST", "/agent/runs/" .. id .. "/cancel" end,
}
