# The curl example of docs/testing-your-client.md; retries.test.js runs this
# very file against a fresh mock, with MOCK and S set, and checks its output.
# internal/buildfiles checks that the page quotes it line for line.
MOCK=${MOCK:-http://127.0.0.1:4010}   # go run ./cmd/agentruns-mock
S=${S:-my-ci-job}                      # an isolated session: its own runs, clock, rules and journal

# The next two creates get 429 resource_unavailable with Retry-After: 1.
curl -s -w '\n' -X POST "$MOCK/__mock/faults" -H "X-Mock-Session: $S" -H 'Content-Type: application/json' \
  -d '{"method": "POST", "path": "/agent/run*", "status": 429, "retry_after": "1s", "times": 2}'

# Three attempts, numbered the way the official clients number their retries.
for i in 0 1 2; do
  curl -s -o /dev/null -w '%{http_code}\n' -X POST "$MOCK/agent/run" \
    -H "X-Mock-Session: $S" -H 'Authorization: Bearer wk-mock-alice' -H 'Content-Type: application/json' \
    -H "X-Stainless-Retry-Count: $i" -d '{"prompt": "Fix the flaky login test"}'
done   # prints 429, 429, 200

# What the mock saw (retry_count 0, 1, 2), and what the rule did (matched 3, injected 2).
curl -s -w '\n' "$MOCK/__mock/requests" -H "X-Mock-Session: $S"
curl -s -w '\n' "$MOCK/__mock/faults" -H "X-Mock-Session: $S"

# One request, one fault: the X-Mock-Fault header instead of a rule.
curl -s -i -w '\n' "$MOCK/agent/runs" -H "X-Mock-Session: $S" -H 'Authorization: Bearer wk-mock-alice' \
  -H 'X-Mock-Fault: status=503; retry_after=2s'

# A delay longer than the caller's timeout: curl gives up (exit status 28).
curl -s --max-time 0.5 "$MOCK/agent/runs" -H "X-Mock-Session: $S" -H 'Authorization: Bearer wk-mock-alice' \
  -H 'X-Mock-Fault: delay=3s' || echo "curl exit status $?"
