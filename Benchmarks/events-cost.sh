#!/usr/bin/env bash
# What publishing events adds to a progress write in `lyceum serve`, end to end (issue 6).
#
# The same progress writes (`lyceum bench --scenario progress-watch`, every one a change) against
# `lyceum serve` with events published and a `lyceum watch --json` dashboard reading them
# (arm "on"), with events published and nobody subscribed (arm "idle"), and against
# `lyceum serve --events-endpoint none` (arm "off"), in alternating rounds in this run:
#   - closed loop, 50 in flight: the CPU time `serve` spends per write (utime + stime from /proc,
#     all its threads: the request path, the publisher thread's encoding and sending, and
#     libzmq's I/O thread delivering to the dashboard), and writes/s (which on 2 cores also pays
#     for the dashboard process on the same machine);
#   - open loop at RATE writes/s, below saturation: each write's latency, request to reply, p50
#     and p99: what publishing adds to the request path.
#
# Usage: Benchmarks/events-cost.sh [ROUNDS] [SECONDS] [RATE]   (default 3 rounds, 8 s, 2000/s)
# BIN_DIR: lyceum already built; else a release build.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-3}
seconds=${2:-8}
rate=${3:-2000}

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

source Benchmarks/common.sh
# CPU seconds the process has used so far, user and system.
cpu_seconds() { awk -v hz="$(getconf CLK_TCK)" '{ print ($14 + $15) / hz }' "/proc/$1/stat"; }

# run ARM DURABILITY ROUND: one serve, both loads; appends "cpu_us_per_write rps p50_us p99_us" to $work/ARM-DURABILITY.
run() {
  local arm=$1 durability=$2 round=$3 endpoint events snapshots data before after requests rps delivered
  endpoint="tcp://127.0.0.1:$(free_port)" events="tcp://127.0.0.1:$(free_port)" snapshots="tcp://127.0.0.1:$(free_port)"
  data="$work/data-$arm-$durability-$round"
  # The previous arm's files (the dashboard's tens of MB of JSON lines among them) are written back
  # now: left dirty, they are flushed by this arm's first syncs, which then stall for ~100 ms.
  sync
  local publishing=(--events-endpoint "$events" --snapshot-endpoint "$snapshots")
  [ "$arm" != off ] || publishing=(--events-endpoint none)
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
  "$lyceum" bench --endpoint "$endpoint" --scenario progress-watch --learners 1000000 --seed "$((round + 100))" \
    --connections 4 --rate "$rate" --warmup 500ms --duration "${seconds}s" --label "$arm" --json \
    >"$work/latency.json" 2>/dev/null
  sleep 0.3
  delivered="-"
  [ "$arm" != on ] || delivered=$(grep -c '"seq"' "$work/events-$round.jsonl" || true)
  stop
  awk -v b="$before" -v a="$after" -v n="$requests" -v r="$rps" -v p50="$(json "$work/latency.json" latency_us/p50)" \
    -v p99="$(json "$work/latency.json" latency_us/p99)" 'BEGIN { printf "%.2f %.0f %d %d\n", (a - b) * 1e6 / n, r, p50, p99 }' >>"$work/$arm-$durability"
  echo "events-cost: durability $durability, round $round/$rounds, events $arm: $(tail -1 "$work/$arm-$durability" | awk '{ printf "%s µs of serve CPU per write, %s writes/s; at the fixed rate p50 %s µs, p99 %s µs", $1, $2, $3, $4 }'); events the dashboard got: $delivered" >&2
}

results=() idle=()
for durability in always none; do
  for round in $(seq 1 "$rounds"); do
    run off "$durability" "$round"
    run on "$durability" "$round"
    run idle "$durability" "$round"
  done
  column() { awk -v c="$1" '{ print $c }' "$work/$2-$durability" | median; }
  off_cpu=$(column 1 off) on_cpu=$(column 1 on) off_rps=$(column 2 off) on_rps=$(column 2 on)
  off_p50=$(column 3 off) on_p50=$(column 3 on) off_p99=$(column 4 off) on_p99=$(column 4 on)
  change() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%+.1f%%", (a / b - 1) * 100 }'; }
  idle_cpu=$(column 1 idle) idle_rps=$(column 2 idle)
  idle+=("$(printf 'durability %s, events published but no subscriber: %s µs of serve CPU per write (%s against no events), %s writes/s (%s)' \
    "$durability" "$idle_cpu" "$(change "$idle_cpu" "$off_cpu")" "$idle_rps" "$(change "$idle_rps" "$off_rps")")")
  results+=("$(printf '| %-8s | %8s / %8s µs (%s) | %6s / %6s (%s) | %5s / %5s µs (%s) | %5s / %5s µs (%s) |' "$durability" \
    "$off_cpu" "$on_cpu" "$(change "$on_cpu" "$off_cpu")" "$off_rps" "$on_rps" "$(change "$on_rps" "$off_rps")" \
    "$off_p50" "$on_p50" "$(change "$on_p50" "$off_p50")" "$off_p99" "$on_p99" "$(change "$on_p99" "$off_p99")")")
done
printf '\nProgress writes through `lyceum serve`, no events / events with one dashboard; median of %d alternating rounds of %d s\n' "$rounds" "$seconds"
printf '| durability | serve CPU per write (50 in flight) | writes/s (50 in flight) | latency p50 at %d/s | latency p99 at %d/s |\n' "$rate" "$rate"
printf '|---|---|---|---|---|\n'
printf '%s\n' "${results[@]}"
printf '%s\n' "${idle[@]}"
