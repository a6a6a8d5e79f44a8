#!/usr/bin/env bash
# Instructions `lyceum serve` executes per request (issue 19), counted by callgrind: a figure that
# does not depend on how busy the machine is, for comparing one build of the request path with
# another step by step.
#
# `serve` (events off) runs under callgrind; `lyceum bench` sends SCENARIO twice, N1 and then N2
# requests, 50 in flight. Counters are zeroed before each run and dumped after it, and the
# figure is (I2 − I1) ÷ (N2 − N1), so the bench's own set-up (the books it creates before a
# read run) and anything else a run pays once cancels out. All of serve's threads count: the
# broker, the journal's acknowledger, metrics.
#
# BENCH_ARGS adds options to both runs, e.g. BENCH_ARGS="--rate 300" for requests that arrive one
# at a time (open loop): the cost of a request that shares its wake-ups with no other.
#
# FLOOR=PATH measures Benchmarks/floors/floor_server (built) instead of serve, the same way: with
# --sync when DURABILITY is always (issue 38's floors, in Benchmarks/suite.sh).
#
# Usage: Benchmarks/request-cost.sh LYCEUM SCENARIO [N1] [N2] [DURABILITY]
#   e.g. Benchmarks/request-cost.sh .build/release/lyceum book-create 2000 6000 always
# Prints: SCENARIO instructions_per_request (and the two dumps' totals on stderr). KEEP=DIR
# copies each dump there as callgrind.N (N requests), for callgrind_annotate or
# Benchmarks/callgrind-layers.py, which subtracts the N1 dump from the N2 one as this script does.
set -euo pipefail
lyceum=$1 scenario=$2 n1=${3:-2000} n2=${4:-6000} durability=${5:-always}
work=$(mktemp -d "${TMPDIR:-/tmp}/lyceum-request-cost.XXXXXX")
serve_pid=""
stop() { if [ -n "$serve_pid" ]; then kill -TERM "$serve_pid" 2>/dev/null || true; wait "$serve_pid" 2>/dev/null || true; fi; }
trap 'stop; rm -rf "$work"' EXIT

source "$(dirname "$0")/common.sh"
endpoint="tcp://127.0.0.1:$(free_port)"
if [ -n "${FLOOR:-}" ]; then
  server=("$FLOOR" --endpoint "$endpoint" --journal "$work/journal.jsonl" $([ "$durability" = always ] && echo --sync))
else
  server=("$lyceum" serve --endpoint "$endpoint" --events-endpoint none --data "$work/data" --durability "$durability" --log-level warning)
fi
valgrind --tool=callgrind --callgrind-out-file="$work/callgrind.out.%p" --dump-instr=no --collect-atstart=yes \
  "${server[@]}" >/dev/null 2>"$work/serve.log" &
serve_pid=$!
until "$lyceum" call --broker "$endpoint" --timeout 5000 books '{"op":"list","learner":"probe"}' >/dev/null 2>&1; do
  kill -0 "$serve_pid" 2>/dev/null || { echo "request-cost: serve exited; its log:" >&2; cat "$work/serve.log" >&2; exit 1; }
  sleep 0.2
done

# measure N: instructions serve executed while bench sent N requests (plus the bench's set-up).
measure() {
  callgrind_control -z "$serve_pid" >/dev/null 2>&1
  "$lyceum" bench --endpoint "$endpoint" --scenario "$scenario" --in-flight 50 --requests "$1" --warmup 0s \
    --timeout 60s --progress 60s ${BENCH_ARGS:-} >/dev/null 2>"$work/bench.log" || { cat "$work/bench.log" >&2; exit 1; }
  rm -f "$work"/callgrind.out.*
  callgrind_control -d "$serve_pid" >/dev/null 2>&1
  [ -z "${KEEP:-}" ] || cat "$work"/callgrind.out.* >"$KEEP/callgrind.$1"
  # One dump file of all threads; its `totals:` line is the sum.
  cat "$work"/callgrind.out.* | awk '/^totals:/ { sum += $2 } END { print sum }'
}
measure 500 >/dev/null # warm up: first-use allocations, page faults, journal file growth
i1=$(measure "$n1")
i2=$(measure "$n2")
echo "request-cost: $scenario: $i1 instructions for $n1 requests, $i2 for $n2" >&2
awk -v s="$scenario" -v a="$i1" -v b="$i2" -v n1="$n1" -v n2="$n2" 'BEGIN { printf "%s %.0f\n", s, (b - a) / (n2 - n1) }'
