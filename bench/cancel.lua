-- POST /agent/runs/{id}/cancel for wrk (bench/run.sh): each run created
-- (POST /agent/run, as post.lua) is cancelled by the request after, so the
-- load is creates and cancels in turn, every cancel on a run still going.
-- Cancelling runs created beforehand instead would leave tens of thousands
-- of runs in progress at once, which a test session never has.
local json = { ["Content-Type"] = "application/json", ["Authorization"] = "Bearer wk-mock-alice" }
local auth = { ["Authorization"] = "Bearer wk-mock-alice" }
local body = '{"prompt":"The login integration test in web/auth fails about one run in ten on CI. Find the race and fix it.","config":{"name":"flaky-tests","model_id":"auto","environment_id":"env-web-app"}}'

local made, first, last = {}, 1, 0
function request()
  if first <= last then
    local id = made[first]
    made[first], first = nil, first + 1
    return wrk.format("POST", "/agent/runs/" .. id .. "/cancel", auth)
  end
  return wrk.format("POST", "/agent/run", json, body)
end

function response(status, headers, body)
  local id = status == 200 and body:match('"run_id":"([^"]+)"')
  if id then
    last = last + 1
    made[last] = id
  end
end
