#!/usr/bin/env bash
# What publishing events adds to a progress write in `lyceum serve`, end to end (issue 6).
#
# The same closed-loop progress writes (`lyceum bench --scenario progress-watch`, 50 in flight)
# against `lyceum serve` with events published and a `lyceum watch --json` dashboard reading
# them, and against `lyceum serve --events-endpoint none`, in alternating rounds in this run.
# The cost of a write is the CPU time `serve` spends per write (utime + stime from /proc, which
# includes the publisher thread's encoding and sending); throughput is printed beside it, but on
# 2 cores it also pays for the dashboard process, which runs on the same machine.
#
# Usage: Benchmarks/events-cost.sh [ROUNDS] [SECONDS]    (default 3 rounds of 8 s per arm)
# BIN_DIR: lyceum already built; else a release build.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-3}
seconds=${2:-8}

if [ -z "${BIN_DIR:-}" ]; then
  swift build -c release --product lyceum >&2
  BIN_DIR=$(swift build -c release --show-bin-path)
fi
lyceum=$BIN_DIR/lyceum
work=$(mktemp -d "${TMPDIR:-/tmp}/lyceum-events-cost.XXXXXX")
serve_pid="" watch_pid=""
stop() {
  for pid in $watch_pid $serve_pid; do kill -TERM "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; done
  watch_pid="" serve_pid=""
}
trap 'stop; rm -rf "$work"' EXIT

free_port() { /usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
# CPU seconds the process has used so far, user and system.
cpu_seconds() { awk -v hz="$(getconf CLK_TCK)" '{ print ($14 + $15) / hz }' "/proc/$1/stat"; }
json() { /usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$1" "$2"; }
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

# run ARM DURABILITY ROUND: one measured run; appends "cpu_us_per_write rps" to $work/ARM-DURABILITY.
run() {
  local arm=$1 durability=$2 round=$3 endpoint events snapshots data before after requests rps delivered
  endpoint="tcp://127.0.0.1:$(free_port)" events="tcp://127.0.0.1:$(free_port)" snapshots="tcp://127.0.0.1:$(free_port)"
  data="$work/data-$arm-$durability-$round"
  local publishing=(--events-endpoint "$events" --snapshot-endpoint "$snapshots")
  [ "$arm" = on ] || publishing=(--events-endpoint none)
  "$lyceum" serve --endpoint "$endpoint" "${publishing[@]}" --data "$data" --durability "$durability" --log-level warning \
    >/dev/null 2>>"$work/serve.log" &
  serve_pid=$!
  until "$lyceum" call --broker "$endpoint" --timeout 1000 progress '{"op":"list","learner":"probe"}' >/dev/null 2>&1; do
    kill -0 "$serve_pid" 2>/dev/null || { echo "events-cost: lyceum serve exited; its log:" >&2; cat "$work/serve.log" >&2; exit 1; }
    sleep 0.02
  done
  if [ "$arm" = on ]; then
    "$lyceum" watch --json --connect "$events" --snapshot "$snapshots" >"$work/events-$round.jsonl" 2>>"$work/watch.log" &
    watch_pid=$!
    sleep 0.5 # long enough for its subscription to reach the publisher
  fi
  before=$(cpu_seconds "$serve_pid")
  "$lyceum" bench --endpoint "$endpoint" --scenario progress-watch --learners 1000000 --seed "$round" \
    --connections 4 --in-flight 50 --warmup 100ms --duration "${seconds}s" --label "$arm" --json \
    >"$work/bench.json" 2>/dev/null
  after=$(cpu_seconds "$serve_pid")
  requests=$(json "$work/bench.json" requests)
  rps=$(json "$work/bench.json" requests_per_second)
  sleep 0.3
  delivered="-"
  [ "$arm" = off ] || delivered=$(grep -c '"seq"' "$work/events-$round.jsonl" || true)
  stop
  awk -v b="$before" -v a="$after" -v n="$requests" -v r="$rps" 'BEGIN { printf "%.2f %.0f\n", (a - b) * 1e6 / n, r }' >>"$work/$arm-$durability"
  echo "events-cost: durability $durability, round $round/$rounds, events $arm: $(tail -1 "$work/$arm-$durability" | awk '{ printf "%s µs of serve CPU per write, %s writes/s", $1, $2 }'), events delivered to the dashboard: $delivered" >&2
}

printf '\nProgress writes through `lyceum serve`, 50 in flight, %d s per run, median of %d alternating rounds\n' "$seconds" "$rounds"
printf '| %-10s | %-34s | %-34s | %-22s |\n' "durability" "serve CPU per write: no events / events" "writes/s: no events / events" "publishing adds (CPU)"
printf '|%s|%s|%s|%s|\n' "------------" "------------------------------------" "------------------------------------" "------------------------"
for durability in always none; do
  for round in $(seq 1 "$rounds"); do
    run off "$durability" "$round"
    run on "$durability" "$round"
  done
  off_cpu=$(awk '{ print $1 }' "$work/off-$durability" | median) on_cpu=$(awk '{ print $1 }' "$work/on-$durability" | median)
  off_rps=$(awk '{ print $2 }' "$work/off-$durability" | median) on_rps=$(awk '{ print $2 }' "$work/on-$durability" | median)
  printf '| %-10s | %14s µs / %14s µs | %14s / %17s | %21s |\n' "$durability" "$off_cpu" "$on_cpu" "$off_rps" "$on_rps" \
    "$(awk -v a="$on_cpu" -v b="$off_cpu" 'BEGIN { printf "%+.1f%% (goal ≤ 5%%)", (a / b - 1) * 100 }')"
done
