-- POST /agent/run for wrk: a realistic create request (see bench/run.sh).
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Authorization"] = "Bearer wk-mock-alice"
wrk.body = '{"prompt":"The login integration test in web/auth fails about one run in ten on CI. Find the race and fix it.","config":{"name":"flaky-tests","model_id":"auto","environment_id":"env-web-app"}}'
