-- A wrk load (bench/run.sh) of creates, each followed by one request on
-- what it created: cancel.lua and schedule.lua. Acting on what the load
-- itself made, in turn, keeps the server's state what a test session has
-- (a few runs going, a team under its 100 schedules), whatever the duration.
--
-- create_then{path, body, status, id, follow} sets wrk's request and
-- response: POST body to path; an answer of status whose body matches the
-- pattern id queues the id; the next request is then follow(id), which
-- returns the method and path to send.
local json = { ["Content-Type"] = "application/json", ["Authorization"] = "Bearer wk-mock-alice" }
local auth = { ["Authorization"] = "Bearer wk-mock-alice" }

function create_then(load)
  local made, first, last = {}, 1, 0
  request = function()
    if first <= last then
      local id = made[first]
      made[first], first = nil, first + 1
      local method, path = load.follow(id)
      return wrk.format(method, path, auth)
    end
    return wrk.format("POST", load.path, json, load.body)
  end
  response = function(status, headers, body)
    local id = status == load.status and body:match(load.id)
    if id then
      last = last + 1
      made[last] = id
    end
  end
end
