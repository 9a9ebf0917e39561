-- POST /agent/run for wrk (bench/run.sh), every body new: the prompt and
-- the title carry the request's number, so no verdict the mock remembers
-- on a body it accepted before can serve it (post.lua repeats one body, the
-- case a client's retry loop makes). Each wrk thread numbers its own requests; two
-- threads may send the same body now and then, which is rare enough not to
-- matter here.
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Authorization"] = "Bearer wk-mock-alice"
local n = 0
request = function()
  n = n + 1
  return wrk.format(nil, nil, nil,
    '{"prompt":"The checkout test number ' .. n .. ' in web/cart fails about one run in ten on CI. Find the race and fix it.",' ..
    '"title":"Flaky checkout test ' .. n .. '","config":{"name":"flaky-tests","model_id":"auto","environment_id":"env-web-app"}}')
end
