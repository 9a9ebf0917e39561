-- POST /agent/schedules for wrk (bench/run.sh). A team holds at most 100
-- schedules, so each one created is deleted by the request after, and the
-- load is creates and deletes in turn (DELETE /agent/schedules/{id}).
dofile("bench/create_then.lua")
create_then{
  path = "/agent/schedules",
  body = '{"name":"nightly-triage","cron_schedule":"0 3 * * *","prompt":"Triage the issues opened since yesterday and label them.","agent_config":{"name":"triage","environment_id":"env-web-app"}}',
  status = 201,
  id = '^{"id":"([^"]+)"',
  follow = function(id) return "DELETE", "/agent/schedules/" .. id end,
}
