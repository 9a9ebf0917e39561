#!/usr/bin/env bash
# bench/run.sh is `make bench`: the mock side by side with Prism and with a
# minimal Go net/http server under the same load (get, a page of 20 and of
# one, create of one body again and of a new body each time, create +
# cancel, an events poll, schedule create + delete), then the Go
# benchmarks at
# 10k/100k/1M stored runs, heap per stored run, start-up time and the
# contract suite's wall time. It prints tables; it asserts nothing.
#
# Everything listens on 127.0.0.1 only. Prism is installed with npm into
# .bench-cache/ (git-ignored) on first use; wrk comes from Debian's packages.
# Every wait and every load is bounded in time.
#
# Knobs (environment): BENCH_DURATION (10s), BENCH_CONNECTIONS (32),
# BENCH_THREADS (2), BENCH_PACE (12s) and BENCH_CAPACITY (4) for the full
# pass at a team's pace (BENCH_SKIP_PACE=1 leaves it out),
# BENCH_ROUNDS (2: each load runs this many times and the
# better run is kept), BENCH_GO_TIME (1s per Go benchmark), BENCH_SKIP_GO=1
# (HTTP load only), BENCH_SKIP_HTTP=1 (no load against the mock, Prism and
# the limit server), BENCH_SKIP_PROXY=1 (no load through the validating
# proxy), BENCH_ONLY_PROXY_CHECKS=1 (only what the proxy checks at 1, 32
# and 128 connections), BENCH_SIZES (store sizes of the Go benchmarks: 10000,100000; add
# 1000000 for the million-run figures, which take about 10 more minutes
# to fill on two idle cores and more on a busy machine).
set -euo pipefail
cd "$(dirname "$0")/.."

GO=${GO:-go}
CACHE=.bench-cache
DURATION=${BENCH_DURATION:-10s}
CONNS=${BENCH_CONNECTIONS:-32}
THREADS=${BENCH_THREADS:-2}
ROUNDS=${BENCH_ROUNDS:-2}
GO_TIME=${BENCH_GO_TIME:-1s}
export BENCH_SIZES=${BENCH_SIZES:-10000,100000}
PRISM_VERSION=5.16.0
HOST=127.0.0.1
PORT_MOCK=4610 PORT_PRISM=4611 PORT_LIMIT=4612 PORT_START=4613 PORT_UPSTREAM=4614 PORT_PROXY=4615 PORT_PROXY_BP=4616
RUN_ID=f29d0da9-953f-48f1-a09f-76b5a170b338 # a fixture run alice's team sees
AUTH="Authorization: Bearer wk-mock-alice"

mkdir -p "$CACHE/bin" "$CACHE/logs"
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
}
trap cleanup EXIT

note() { printf '%s\n' "$*" >&2; }

# --- tools ----------------------------------------------------------------

ensure_wrk() {
  command -v wrk >/dev/null && return
  note "bench: installing wrk (Debian package)"
  if [ "$(id -u)" = 0 ]; then
    apt-get update -qq >/dev/null && apt-get install -y -qq wrk >/dev/null
  else
    sudo apt-get update -qq >/dev/null && sudo apt-get install -y -qq wrk >/dev/null
  fi
}

PRISM=$CACHE/prism/node_modules/.bin/prism
ensure_prism() {
  if [ -x "$PRISM" ] && [ "$("$PRISM" --version 2>/dev/null)" = "$PRISM_VERSION" ]; then return; fi
  note "bench: installing @stoplight/prism-cli@$PRISM_VERSION with npm into $CACHE/prism"
  mkdir -p "$CACHE/prism"
  npm install --prefix "$CACHE/prism" --no-audit --no-fund --loglevel=error \
    "@stoplight/prism-cli@$PRISM_VERSION" >"$CACHE/logs/npm.log" 2>&1 ||
    { cat "$CACHE/logs/npm.log" >&2; exit 1; }
}

build() {
  note "bench: building the mock, the limit server and the start-up timer"
  $GO build -o "$CACHE/bin/agentruns-mock" ./cmd/agentruns-mock
  $GO build -o "$CACHE/bin/limitserver" ./bench/limitserver
  $GO build -o "$CACHE/bin/startup" ./bench/startup
}

# wait_ready URL PID: until URL answers 200, at most 60 s.
wait_ready() {
  local url=$1 pid=$2 i
  for ((i = 0; i < 600; i++)); do
    kill -0 "$pid" 2>/dev/null || { note "bench: the server for $url exited"; return 1; }
    if [ "$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 -H "$AUTH" "$url")" = 200 ]; then return 0; fi
    sleep 0.1
  done
  note "bench: $url did not answer within 60 s"
  return 1
}

# --- HTTP load --------------------------------------------------------------

# wrk_once URL [wrk args]: prints "rps p50_ms p99_ms errors" of one run.
wrk_once() {
  local url=$1
  shift
  wrk -t"$THREADS" -c"$CONNS" -d"$DURATION" --timeout 5s --latency "$@" "$url" | awk '
    function ms(v) {
      if (v ~ /us$/) return v / 1000
      if (v ~ /ms$/) return v + 0
      if (v ~ /m$/)  return v * 60000
      if (v ~ /s$/)  return v * 1000
      return v + 0
    }
    $1 == "50%" { p50 = ms($2) }
    $1 == "99%" { p99 = ms($2) }
    /^Requests\/sec:/ { rps = $2 }
    / requests in / { total = $1 }
    /Non-2xx or 3xx responses:/ { errs += $NF }
    /Socket errors:/ { gsub(",", ""); errs += $4 + $6 + $8 + $10 }
    END { printf "%.0f %.3f %.3f %d %d\n", rps, p50, p99, errs, total }'
}

declare -A RESULT # [server,endpoint] = "rps p50 p99 errors requests cpu_us", the best round
declare -A PID    # [server] = its process id
TICK=$(getconf CLK_TCK)

# cpu_ticks PID: user + system CPU time the process has used, in clock ticks.
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }

# load SERVER ENDPOINT URL [wrk args]: one round, kept if it beats the best.
# Besides wrk's figures it records the server's CPU time per request, which
# a busy machine disturbs much less than throughput.
load() {
  local server=$1 endpoint=$2 url=$3
  shift 3
  local got t0 t1
  t0=$(cpu_ticks "${PID[$server]}")
  got=$(wrk_once "$url" "$@")
  t1=$(cpu_ticks "${PID[$server]}")
  got="$got $(awk -v d=$((t1 - t0)) -v tick="$TICK" -v n="${got##* }" 'BEGIN { printf "%.1f", (n > 0 ? d / tick * 1e6 / n : 0) }')"
  note "  $server $endpoint: $got"
  local prev=${RESULT[$server,$endpoint]:-}
  if [ -z "$prev" ] || [ "${got%% *}" -gt "${prev%% *}" ]; then
    RESULT[$server,$endpoint]=$got
  fi
}

# The rows of the HTTP table, in the order printed.
ENDPOINTS="get list list1 post postnew cancel events schedule"

endpoint_label() {
  case $1 in
  get) echo "GET /agent/runs/{id}" ;;
  list) echo "GET /agent/runs?limit=20" ;;
  list1) echo "GET /agent/runs?limit=1" ;;
  post) echo "POST /agent/run" ;;
  postnew) echo "POST /agent/run, new" ;;
  cancel) echo "create + cancel, in turn" ;;
  events) echo "GET /agent/events (poll)" ;;
  schedule) echo "schedule create + delete" ;;
  esac
}

http_bench() {
  ensure_wrk
  ensure_prism
  note "bench: starting the mock, Prism and the limit server on $HOST"
  "$CACHE/bin/agentruns-mock" --quiet --addr "$HOST:$PORT_MOCK" >"$CACHE/logs/mock.log" 2>&1 &
  pids+=($!)
  local mock_pid=$!
  "$PRISM" mock -h "$HOST" -p "$PORT_PRISM" --errors false -v silent openapi/openapi.yaml >"$CACHE/logs/prism.log" 2>&1 &
  pids+=($!)
  local prism_pid=$!
  wait_ready "http://$HOST:$PORT_MOCK/agent/runs/$RUN_ID" "$mock_pid"
  # The limit server sends the mock's own answers to the reads, so both
  # write the same bytes to the socket.
  local bodies="$CACHE/bodies"
  mkdir -p "$bodies"
  local mock="http://$HOST:$PORT_MOCK"
  curl -sf --max-time 5 -H "$AUTH" -o "$bodies/run.json" "$mock/agent/runs/$RUN_ID"
  curl -sf --max-time 5 -H "$AUTH" -o "$bodies/list20.json" "$mock/agent/runs?limit=20"
  curl -sf --max-time 5 -H "$AUTH" -o "$bodies/list1.json" "$mock/agent/runs?limit=1"
  curl -sf --max-time 5 -H "$AUTH" -o "$bodies/events.json" "$mock/agent/events?run_ids=$RUN_ID&since=0"
  "$CACHE/bin/limitserver" --addr "$HOST:$PORT_LIMIT" --bodies "$bodies" >"$CACHE/logs/limit.log" 2>&1 &
  pids+=($!)
  local limit_pid=$!
  PID[mock]=$mock_pid PID[prism]=$prism_pid PID[limit]=$limit_pid
  wait_ready "http://$HOST:$PORT_PRISM/agent/runs/$RUN_ID" "$prism_pid"
  wait_ready "http://$HOST:$PORT_LIMIT/agent/runs/$RUN_ID" "$limit_pid"

  local s port
  note "bench: warming up each server (2 s of GET)"
  for s in mock prism limit; do
    port=PORT_${s^^}
    DURATION=2s wrk_once "http://$HOST:${!port}/agent/runs/$RUN_ID" -H "$AUTH" >/dev/null
  done
  note "bench: $ROUNDS rounds of wrk -t$THREADS -c$CONNS -d$DURATION per server and endpoint, servers interleaved"
  local r
  for ((r = 1; r <= ROUNDS; r++)); do
    # Each round starts the mock from its fixtures: without this, round 2's
    # reads would meet the runs round 1's creates left (a few hundred
    # thousand), while Prism and the limit server keep no state. What a big
    # store costs is measured by the Go benchmarks below.
    curl -s -o /dev/null --max-time 5 -X POST "http://$HOST:$PORT_MOCK/__mock/reset"
    for s in mock prism limit; do
      port=PORT_${s^^}
      load "$s" get "http://$HOST:${!port}/agent/runs/$RUN_ID" -H "$AUTH"
      load "$s" list "http://$HOST:${!port}/agent/runs?limit=20" -H "$AUTH"
      load "$s" list1 "http://$HOST:${!port}/agent/runs?limit=1" -H "$AUTH"
      load "$s" events "http://$HOST:${!port}/agent/events?run_ids=$RUN_ID&since=0" -H "$AUTH"
      load "$s" schedule "http://$HOST:${!port}/agent/schedules" -s bench/schedule.lua
      load "$s" cancel "http://$HOST:${!port}/agent/run" -s bench/cancel.lua
      # Creates last: each leaves a run in progress for a few seconds, and
      # the rows above should not meet a hundred thousand of them.
      load "$s" post "http://$HOST:${!port}/agent/run" -s bench/post.lua
      load "$s" postnew "http://$HOST:${!port}/agent/run" -s bench/post_new.lua
    done
  done
  kill "$mock_pid" "$prism_pid" "$limit_pid" 2>/dev/null || true
  wait "$mock_pid" "$prism_pid" "$limit_pid" 2>/dev/null || true

  echo
  echo "HTTP load: wrk -t$THREADS -c$CONNS -d$DURATION --latency, best of $ROUNDS rounds; latencies in ms"
  echo
  printf '| %-24s | %-27s | %-27s | %-27s | %-10s | %-10s | %-13s |\n' endpoint \
    "mock req/s  p50  p99" "Prism req/s  p50  p99" "limit req/s  p50  p99" mock/Prism mock/limit "p99 mock/limit"
  printf '|%s|%s|%s|%s|%s|%s|%s|\n' "$(printf -- '-%.0s' {1..26})" "$(printf -- '-%.0s' {1..29})" \
    "$(printf -- '-%.0s' {1..29})" "$(printf -- '-%.0s' {1..29})" "$(printf -- '-%.0s' {1..12})" \
    "$(printf -- '-%.0s' {1..12})" "$(printf -- '-%.0s' {1..15})"
  local e label m p l
  for e in $ENDPOINTS; do
    label=$(endpoint_label "$e")
    m=${RESULT[mock,$e]} p=${RESULT[prism,$e]} l=${RESULT[limit,$e]}
    awk -v label="$label" -v m="$m" -v p="$p" -v l="$l" 'BEGIN {
      split(m, a, " "); split(p, b, " "); split(l, c, " ")
      cell = "%8d %6.2f %7.2f%s"
      ma = sprintf(cell, a[1], a[2], a[3], (a[4] > 0 ? " !" : "  "))
      pb = sprintf(cell, b[1], b[2], b[3], (b[4] > 0 ? " !" : "  "))
      lc = sprintf(cell, c[1], c[2], c[3], (c[4] > 0 ? " !" : "  "))
      printf "| %-24s | %-27s | %-27s | %-27s | %9.1fx | %9.2fx | %12.2fx |\n", label, ma, pb, lc,
        (b[1] > 0 ? a[1] / b[1] : 0), (c[1] > 0 ? a[1] / c[1] : 0), (c[3] > 0 ? a[3] / c[3] : 0)
    }'
  done
  echo
  echo "Server CPU time per request (µs, user + system, from /proc; the same rounds as above):"
  echo
  printf '| %-24s | %8s | %8s | %8s |\n' endpoint mock Prism limit
  printf '|%s|%s|%s|%s|\n' "$(printf -- '-%.0s' {1..26})" "$(printf -- '-%.0s' {1..10})" "$(printf -- '-%.0s' {1..10})" "$(printf -- '-%.0s' {1..10})"
  for e in $ENDPOINTS; do
    label=$(endpoint_label "$e")
    printf '| %-24s | %8s | %8s | %8s |\n' "$label" "${RESULT[mock,$e]##* }" "${RESULT[prism,$e]##* }" "${RESULT[limit,$e]##* }"
  done
  echo
  echo "(! marks a server that answered some requests with a non-2xx status or had socket errors.)"
  echo "Prism's list answers its one example run whatever the limit; the mock's and the limit server's answer"
  echo "20 runs (limit=20) or one (limit=1), so the limit=1 row compares answers of about the same size."
  echo "POST /agent/run repeats one body (bench/post.lua); \"new\" sends a new body each time (bench/post_new.lua), as"
  echo "real clients do: the mock then remembers nothing it validated before."
  echo "create + cancel (bench/cancel.lua): each run created is cancelled by the next request, half the requests"
  echo "each; schedule create + delete (bench/schedule.lua) likewise, as a team holds at most 100 schedules."
  echo "The events poll asks for the events of one finished run since the start (two events)."
}

# --- the validating proxy ---------------------------------------------------

# proxy_bench: the same mock answered directly and through the validating
# proxy (agentruns-mock --proxy), interleaved, one connection (the latency a
# request gains) and $CONNS (under load). The proxy checks answers after they
# are sent; what it could not check in time is counted and printed.
proxy_bench() {
  note "bench: starting a mock and the validating proxy in front of it"
  "$CACHE/bin/agentruns-mock" --quiet --addr "$HOST:$PORT_UPSTREAM" >"$CACHE/logs/upstream.log" 2>&1 &
  pids+=($!)
  local up_pid=$!
  "$CACHE/bin/agentruns-mock" --quiet --addr "$HOST:$PORT_PROXY" --proxy "http://$HOST:$PORT_UPSTREAM" >"$CACHE/logs/proxy.log" 2>&1 &
  pids+=($!)
  local proxy_pid=$!
  PID[direct]=$up_pid PID[proxied]=$up_pid
  wait_ready "http://$HOST:$PORT_UPSTREAM/agent/runs/$RUN_ID" "$up_pid"
  wait_ready "http://$HOST:$PORT_PROXY/agent/runs/$RUN_ID" "$proxy_pid"
  DURATION=2s wrk_once "http://$HOST:$PORT_PROXY/agent/runs/$RUN_ID" -H "$AUTH" >/dev/null
  local r c e
  for ((r = 1; r <= ROUNDS; r++)); do
    for c in 1 "$CONNS"; do
      for e in get list; do
        local path="/agent/runs/$RUN_ID"
        [ "$e" = list ] && path="/agent/runs?limit=20"
        CONNS=$c THREADS=1 load direct "$e-c$c" "http://$HOST:$PORT_UPSTREAM$path" -H "$AUTH"
        CONNS=$c THREADS=1 load proxied "$e-c$c" "http://$HOST:$PORT_PROXY$path" -H "$AUTH"
      done
    done
  done
  local summary
  summary=$(curl -s --max-time 60 "http://$HOST:$PORT_PROXY/__mock/proxy" | awk -F'[:,]' '
    /"exchanges"/ { x = $2 } /"checked"/ { c = $2 } /"violations"/ && !v { v = $2 }
    /^  "unchecked": \{$/ { u = 1; next }
    u && /^  \}/ { u = 0 }
    u { r = $0; gsub(/^ +|,$/, "", r); why = why (why ? "; " : "") r }
    END {
      printf "%d exchanges forwarded, %d checked, %d violations", x, c, v
      if (why) printf " (unchecked: %s)", why
    }')
  kill "$up_pid" "$proxy_pid" 2>/dev/null || true
  wait "$up_pid" "$proxy_pid" 2>/dev/null || true

  echo
  echo "The validating proxy: the same mock directly and through agentruns-mock --proxy; wrk -t1 -d$DURATION --latency, best of $ROUNDS rounds; ms"
  echo
  printf '| %-32s | %-16s | %-16s | %-17s |\n' "endpoint, connections" "direct p50  p99" "proxied p50  p99" "added p50    p99"
  printf '|%s|%s|%s|%s|\n' "$(printf -- '-%.0s' {1..34})" "$(printf -- '-%.0s' {1..18})" "$(printf -- '-%.0s' {1..18})" "$(printf -- '-%.0s' {1..19})"
  local label
  for c in 1 "$CONNS"; do
    for e in get list; do
      label="GET /agent/runs/{id}, $c"
      [ "$e" = list ] && label="GET /agent/runs?limit=20, $c"
      awk -v label="$label" -v d="${RESULT[direct,$e-c$c]}" -v p="${RESULT[proxied,$e-c$c]}" 'BEGIN {
        split(d, a, " "); split(p, b, " ")
        printf "| %-32s | %7.3f %8.3f | %7.3f %8.3f | %+7.3f %+9.3f |\n", label, a[2], a[3], b[2], b[3], b[2] - a[2], b[3] - a[3]
      }'
    done
  done
  echo
  echo "proxy after the runs: $summary"
}

# proxy_summary PORT: "exchanges checked unchecked cutoff" of the proxy on
# PORT, once it has checked everything queued (GET /__mock/proxy drains
# first): unchecked counts what the proxy left unchecked for want of
# checking, cutoff the exchanges whose caller went away before the answer's
# end (wrk's requests in flight when a row ends), which no proxy can check.
proxy_summary() {
  curl -s --max-time 120 "http://$HOST:$1/__mock/proxy" | awk -F'[:,]' '
    /"exchanges"/ { x = $2 } /"checked"/ { c = $2 }
    /^  "unchecked": \{$/ { u = 1; next }
    u && /^  \}/ { u = 0 }
    u && /caller went away/ { k += $2; next }
    u { n += $2 }
    END { printf "%d %d %d %d\n", x, c, n, k }'
}

# proxy_checks: does the proxy check everything it forwards? At 1, 32 and
# 128 connections, GET /agent/runs/{id} then a page of 20 for $DURATION each
# through the proxy as it starts by default (one check worker per core; a
# full queue lets an exchange pass unchecked) and with --proxy-backpressure
# (a full queue holds the caller back instead). Forwarded is what wrk
# counted as sent and answered; checked and unchecked are the proxy's own
# counts, reset before each row.
proxy_checks() {
  note "bench: the proxy's checks at 1, 32 and 128 connections, by default and with --proxy-backpressure"
  "$CACHE/bin/agentruns-mock" --quiet --addr "$HOST:$PORT_UPSTREAM" >"$CACHE/logs/upstream.log" 2>&1 &
  pids+=($!)
  local up_pid=$!
  "$CACHE/bin/agentruns-mock" --quiet --addr "$HOST:$PORT_PROXY" --proxy "http://$HOST:$PORT_UPSTREAM" >"$CACHE/logs/proxy.log" 2>&1 &
  pids+=($!)
  local proxy_pid=$!
  "$CACHE/bin/agentruns-mock" --quiet --addr "$HOST:$PORT_PROXY_BP" --proxy "http://$HOST:$PORT_UPSTREAM" --proxy-backpressure >"$CACHE/logs/proxy-bp.log" 2>&1 &
  pids+=($!)
  local bp_pid=$!
  wait_ready "http://$HOST:$PORT_UPSTREAM/agent/runs/$RUN_ID" "$up_pid"
  wait_ready "http://$HOST:$PORT_PROXY/agent/runs/$RUN_ID" "$proxy_pid"
  wait_ready "http://$HOST:$PORT_PROXY_BP/agent/runs/$RUN_ID" "$bp_pid"
  local rows=() c mode port get list sum
  for c in 1 32 128; do
    for mode in default backpressure; do
      port=$PORT_PROXY
      [ "$mode" = backpressure ] && port=$PORT_PROXY_BP
      curl -s -o /dev/null --max-time 60 -X DELETE "http://$HOST:$port/__mock/proxy"
      get=$(CONNS=$c THREADS=$((c < 2 ? 1 : 2)) wrk_once "http://$HOST:$port/agent/runs/$RUN_ID" -H "$AUTH")
      list=$(CONNS=$c THREADS=$((c < 2 ? 1 : 2)) wrk_once "http://$HOST:$port/agent/runs?limit=20" -H "$AUTH")
      sum=$(proxy_summary "$port")
      note "  $mode, $c connections: get $get; list $list; proxy $sum"
      # forwarded (wrk's count), then the proxy's checked and unchecked
      rows+=("$c $mode ${get%% *} ${list%% *} $(($(echo "$get" | cut -d' ' -f5) + $(echo "$list" | cut -d' ' -f5))) ${sum#* }")
    done
  done
  kill "$up_pid" "$proxy_pid" "$bp_pid" 2>/dev/null || true
  wait "$up_pid" "$proxy_pid" "$bp_pid" 2>/dev/null || true

  echo
  echo "Does the proxy check everything it forwards? GET /agent/runs/{id}, then GET /agent/runs?limit=20, $DURATION each (wrk --latency -d$DURATION)"
  echo
  printf '| %11s | %-12s | %9s | %10s | %9s | %9s | %9s | %7s |\n' connections proxy "get req/s" "list req/s" forwarded checked unchecked "cut off"
  printf '|%s|%s|%s|%s|%s|%s|%s|%s|\n' "$(printf -- '-%.0s' {1..13})" "$(printf -- '-%.0s' {1..14})" "$(printf -- '-%.0s' {1..11})" \
    "$(printf -- '-%.0s' {1..12})" "$(printf -- '-%.0s' {1..11})" "$(printf -- '-%.0s' {1..11})" "$(printf -- '-%.0s' {1..11})" "$(printf -- '-%.0s' {1..9})"
  local row
  for row in "${rows[@]}"; do
    # shellcheck disable=SC2086
    printf '| %11s | %-12s | %9s | %10s | %9s | %9s | %9s | %7s |\n' $row
  done
  echo
  echo "(forwarded: answers wrk received; checked, unchecked (for want of checking) and cut off (the caller"
  echo "went away before the answer's end: wrk's requests in flight when a row ends): the proxy's counts."
  echo "The proxy checks on one worker per core: $(nproc) here.)"
}

# --- start-up and contract suite -------------------------------------------

startup_bench() {
  local url="http://$HOST:$PORT_START/agent/runs?limit=1" best=""
  local r out
  for ((r = 1; r <= ROUNDS; r++)); do
    out=$("$CACHE/bin/startup" -n 7 -url "$url" -header "$AUTH" -- "$CACHE/bin/agentruns-mock" --quiet --addr "$HOST:$PORT_START")
    if [ -z "$best" ] || awk -v a="${out%% *}" -v b="${best%% *}" 'BEGIN { exit !(a < b) }'; then best=$out; fi
  done
  STARTUP_MIN=${best%% *} STARTUP_MEDIAN=${best##* }
}

contract_bench() {
  CONTRACT=""
  if [ ! -f cmd/agentruns-contract/main.go ]; then
    CONTRACT="contract suite: not built yet"
    return
  fi
  $GO build -o "$CACHE/bin/agentruns-contract" ./cmd/agentruns-contract
  local r t0 t1 best="" status=pass
  for ((r = 1; r <= ROUNDS; r++)); do
    t0=$(date +%s%N)
    if ! timeout 300 "$CACHE/bin/agentruns-contract" >"$CACHE/logs/contract.log" 2>&1; then status="FAILED (see $CACHE/logs/contract.log)"; fi
    t1=$(date +%s%N)
    local ms=$(((t1 - t0) / 1000000))
    if [ -z "$best" ] || [ "$ms" -lt "$best" ]; then best=$ms; fi
  done
  CONTRACT=$(printf 'contract suite against the in-process mock: %d.%03d s wall (best of %d; built binary; %s)' \
    $((best / 1000)) $((best % 1000)) "$ROUNDS" "$status")
}

# contract_pace_bench: the full pass a server team runs (--tags 'not
# @newest-client', a second team's key, a failing prompt) against the
# reference server of the published document, its runs each holding one of
# the team's places for D (BENCH_PACE, 12s), the team running C at once
# (BENCH_CAPACITY, 4): runs created, wall time and the bound
# ceil(runs / C) x D + 1 min. Minutes of waiting, little CPU.
# BENCH_SKIP_PACE=1 leaves it out.
contract_pace_bench() {
  PACE=""
  note "bench: a full pass against the reference server at D=${BENCH_PACE:-12s}, C=${BENCH_CAPACITY:-4} (minutes)"
  local out
  if ! out=$(BENCH_PACE=${BENCH_PACE:-12s} BENCH_CAPACITY=${BENCH_CAPACITY:-4} timeout 1800 \
    $GO test ./steps/ -run '^$' -bench '^BenchmarkFullPassAtATeamsPace$' -benchtime 1x -count=1 2>&1); then
    PACE="full pass at a team's pace: FAILED (see $CACHE/logs/pace.log)"
  else
    PACE=$(printf '%s\n' "$out" | grep -m1 '^full pass at D=')
  fi
  printf '%s\n' "$out" >"$CACHE/logs/pace.log"
}

# --- Go benchmarks ----------------------------------------------------------

go_bench() {
  note "bench: Go benchmarks at $BENCH_SIZES stored runs (filling a store of 1,000,000 takes minutes)"
  $GO test -run '^$' -bench '^Benchmark(Create|Get|ListFiltered|ListDefault|ListOrders|EventsPoll|SchedulesList)$' -benchtime="$GO_TIME" -count="$ROUNDS" \
    -benchmem -timeout 60m ./mockserver/ >"$CACHE/logs/gobench.txt"
  $GO test -run '^$' -bench '^BenchmarkHeapPer(Run|Session)$' -benchtime=1x -count="$ROUNDS" -timeout 30m ./mockserver/ >>"$CACHE/logs/gobench.txt"
  $GO test -run '^$' -bench '^BenchmarkStartup$' -benchtime=20x -count="$ROUNDS" ./mockserver/ >>"$CACHE/logs/gobench.txt"
  $GO test -run '^$' -bench '^BenchmarkStartupStateFile$' -benchtime=2x -count="$ROUNDS" -timeout 30m ./mockserver/ >>"$CACHE/logs/gobench.txt"
  echo
  echo "Go benchmarks (in process, through Server.ServeHTTP; best of $ROUNDS by median; times in µs)"
  echo
  printf '| %-44s | %9s | %9s | %9s | %9s | %9s |\n' benchmark p50 p99 mean B/op allocs/op
  printf '|%s|%s|%s|%s|%s|%s|\n' "$(printf -- '-%.0s' {1..36})" "$(printf -- '-%.0s' {1..11})" "$(printf -- '-%.0s' {1..11})" \
    "$(printf -- '-%.0s' {1..11})" "$(printf -- '-%.0s' {1..11})" "$(printf -- '-%.0s' {1..11})"
  awk '
    /^Benchmark(Create|Get|ListFiltered|ListDefault|ListOrders|EventsPoll|SchedulesList|Startup)/ && !/^BenchmarkStartupStateFile/ {
      name = $1; sub(/-[0-9]+$/, "", name); sub(/^Benchmark/, "", name)
      delete v
      for (i = 3; i < NF; i += 2) v[$(i + 1)] = $i
      if (!(name in best) || v["p50-ns"] < p50[name]) {
        best[name] = 1; p50[name] = v["p50-ns"]
        row[name] = sprintf("| %-44s | %9.1f | %9.1f | %9.1f | %9d | %9d |", name, v["p50-ns"] / 1000, v["p99-ns"] / 1000,
          v["ns/op"] / 1000, v["B/op"], v["allocs/op"])
        if (!(name in seen)) { seen[name] = 1; order[++n] = name }
      }
    }
    /^BenchmarkHeapPerRun/ {
      name = $1; sub(/-[0-9]+$/, "", name); sub(/^BenchmarkHeapPerRun\//, "", name)
      for (i = 3; i < NF; i += 2) {
        if ($(i + 1) == "B/run") b = $i
        else if ($(i + 1) == "prompt-B/run") pr = $i
        else if ($(i + 1) == "gc-ms") g = $i
      }
      if (!(name in heap) || b < heap[name]) { heap[name] = b; prompt[name] = pr }
      if (!(name in gc) || g < gc[name]) gc[name] = g
      if (!(name in hseen)) { hseen[name] = 1; horder[++hn] = name }
    }
    /^BenchmarkHeapPerSession/ {
      for (i = 3; i < NF; i += 2) if ($(i + 1) == "B/session" && (!session || $i < session)) session = $i
      next
    }
    /^BenchmarkStartupStateFile/ {
      name = $1; sub(/-[0-9]+$/, "", name); sub(/^BenchmarkStartupStateFile\//, "", name)
      for (i = 3; i < NF; i += 2) sv[$(i + 1)] = $i
      if (!(name in scpu) || sv["cpu-ms/op"] < scpu[name]) {
        scpu[name] = sv["cpu-ms/op"]; swall[name] = sv["p50-ns"] / 1e6; sheap[name] = sv["loaded-B/run"]; sfile[name] = sv["file-MiB"]
      }
      if (!(name in sseen)) { sseen[name] = 1; sorder[++sn] = name }
      next
    }
    END {
      for (i = 1; i <= n; i++) print row[order[i]]
      print ""
      for (i = 1; i <= hn; i++)
        printf "heap per stored run (%s, after GC): %.0f B (%.2f KiB), of which the prompt text is %.0f B; a full GC cycle takes %.0f ms\n",
          horder[i], heap[horder[i]], heap[horder[i]] / 1024, prompt[horder[i]], gc[horder[i]]
      if (session) printf "heap per open mock session (default fixtures, after GC): %.0f B (%.1f KiB)\n", session, session / 1024
      for (i = 1; i <= sn; i++)
        printf "start-up with a state file (%s, %.0f MiB): %.0f ms of CPU, %.0f ms wall; live heap per loaded run %.0f B\n",
          sorder[i], sfile[sorder[i]], scpu[sorder[i]], swall[sorder[i]], sheap[sorder[i]]
    }' "$CACHE/logs/gobench.txt"
}

# --- main -------------------------------------------------------------------

ensure_wrk
if [ "${BENCH_ONLY_PROXY_CHECKS:-}" = 1 ]; then
  $GO build -o "$CACHE/bin/agentruns-mock" ./cmd/agentruns-mock
  proxy_checks
  exit 0
fi
echo "make bench: $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), $(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo); load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "$($GO version | cut -d' ' -f3), wrk $(wrk --version 2>&1 | awk 'NR == 1 { print $2 }' || true), Prism $PRISM_VERSION (node $(node --version 2>/dev/null || echo '?'))"
build
if [ "${BENCH_SKIP_HTTP:-}" != 1 ]; then http_bench; fi
if [ "${BENCH_SKIP_PROXY:-}" != 1 ]; then
  proxy_bench
  proxy_checks
fi
startup_bench
contract_bench
if [ "${BENCH_SKIP_PACE:-}" != 1 ]; then contract_pace_bench; fi
if [ "${BENCH_SKIP_GO:-}" != 1 ]; then go_bench; fi
echo
echo "start-up, exec to first answered request (default fixtures): fastest ${STARTUP_MIN} ms, median ${STARTUP_MEDIAN} ms of 7 starts (best of $ROUNDS)"
echo "$CONTRACT"
if [ -n "${PACE:-}" ]; then echo "$PACE"; fi
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
