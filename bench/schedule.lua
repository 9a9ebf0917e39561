-- POST /agent/schedules for wrk (bench/run.sh). A team holds at most 100
-- schedules, so each one created is deleted by the request after, and the
-- load is creates and deletes in turn (DELETE /agent/schedules/{id}).
local json = { ["Content-Type"] = "application/json", ["Authorization"] = "Bearer wk-mock-alice" }
local auth = { ["Authorization"] = "Bearer wk-mock-alice" }
local body = '{"name":"nightly-triage","cron_schedule":"0 3 * * *","prompt":"Triage the issues opened since yesterday and label them.","agent_config":{"name":"triage","environment_id":"env-web-app"}}'

local made, first, last = {}, 1, 0
function request()
  if first <= last then
    local id = made[first]
    made[first], first = nil, first + 1
    return wrk.format("DELETE", "/agent/schedules/" .. id, auth)
  end
  return wrk.format("POST", "/agent/schedules", json, body)
end

function response(status, headers, body)
  local id = status == 201 and body:match('^{"id":"([^"]+)"')
  if id then
    last = last + 1
    made[last] = id
  end
end
