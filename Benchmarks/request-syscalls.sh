#!/usr/bin/env bash
# System calls and context switches `lyceum serve` makes per request (issue 26): counts that a busy
# machine moves far less than throughput, printed beside request-cost.sh's instructions.
#
# `serve` (events off) runs on its own; `lyceum bench` sends SCENARIO at 50 in flight, N requests
# each time: once with `strace -c -f` attached to every thread of serve (system calls per request,
# by name; strace slows each call, so batches grow and these are a lower bound), once without it
# (voluntary and involuntary context switches per request, summed over serve's threads from
# /proc/PID/task/*/status, before and after the run).
#
# Usage: Benchmarks/request-syscalls.sh LYCEUM SCENARIO [N] [DURABILITY]
#   e.g. Benchmarks/request-syscalls.sh .build/release/lyceum book-create 5000 always
# Prints: the system calls per request (those at 0.01 or more), then the context switches per request.
set -euo pipefail
lyceum=$1 scenario=$2 n=${3:-5000} durability=${4:-always}
source "$(dirname "$0")/syscalls.sh"
work=$(mktemp -d "${TMPDIR:-/tmp}/lyceum-request-syscalls.XXXXXX")
serve_pid=""
stop() {
  stop_strace
  if [ -n "$serve_pid" ]; then kill -TERM "$serve_pid" 2>/dev/null || true; wait "$serve_pid" 2>/dev/null || true; fi
}
trap 'stop; rm -rf "$work"' EXIT

source "$(dirname "$0")/common.sh"
endpoint="tcp://127.0.0.1:$(free_port)"
"$lyceum" serve --endpoint "$endpoint" --events-endpoint none --data "$work/data" --durability "$durability" \
  --log-level warning >/dev/null 2>"$work/serve.log" &
serve_pid=$!
until "$lyceum" call --broker "$endpoint" --timeout 5000 books '{"op":"list","learner":"probe"}' >/dev/null 2>&1; do
  kill -0 "$serve_pid" 2>/dev/null || { echo "request-syscalls: serve exited; its log:" >&2; cat "$work/serve.log" >&2; exit 1; }
  sleep 0.2
done

run() {
  "$lyceum" bench --endpoint "$endpoint" --scenario "$scenario" --in-flight 50 --requests "$1" --warmup 0s \
    --timeout 60s --progress 60s ${BENCH_ARGS:-} >/dev/null 2>"$work/bench.log" || { cat "$work/bench.log" >&2; return 1; }
}

run 500 # warm up: first-use allocations, journal file growth, the books a read run creates
# The bench's set-up (a read run creates its books first) is counted too: measure it alone and
# subtract, as request-cost.sh subtracts a shorter run.
read -r v0 n0 < <(context_switches "$serve_pid")
run 1
read -r v1 n1 < <(context_switches "$serve_pid")
run "$n"
read -r v2 n2 < <(context_switches "$serve_pid")

syscalls_per_request "$serve_pid" 1 "$n" "$work/syscalls" run || { echo "request-syscalls: strace could not attach to serve, or a run failed" >&2; exit 1; }
echo "request-syscalls: $scenario, $n requests, $durability: system calls per request (strace -c -f)"
awk '{ printf "  %-16s %6.2f\n", $1, $2 }' "$work/syscalls"
awk -v n="$n" -v a="$((v2 - v1 - (v1 - v0)))" -v b="$((n2 - n1 - (n1 - n0)))" \
  'BEGIN { printf "context switches per request: %.2f voluntary, %.2f involuntary\n", a / (n - 1), b / (n - 1) }'
