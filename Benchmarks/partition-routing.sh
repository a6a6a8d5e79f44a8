#!/usr/bin/env bash
# The broker's CPU per request with partition routing off and on (issue 17): `lyceum broker`
# then `lyceum broker --partitions 8`, a real catalog worker, and minimal Python workers that
# answer progress requests at once (`progress`, or `progress.p0`…`progress.p7`), so the broker's
# own cost is what differs. `lyceum bench` sends progress-watch requests (each names a learner)
# at a fixed rate and reads the broker's CPU through --server-pid. Release build, loopback.
# Usage: Benchmarks/partition-routing.sh [seconds per run] [requests per second]
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=${1:-10}
rate=${2:-4000}
swift build -c release --product lyceum >&2
bin=$(swift build -c release --show-bin-path)
work=$(mktemp -d)
pids=()
cleanup() { for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; done; rm -rf "$work"; }
trap cleanup EXIT

run() { # label, broker flags, worker services...
    local label=$1 flags=$2; shift 2
    local port
    port=$(/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
    local endpoint="tcp://127.0.0.1:$port"
    # shellcheck disable=SC2086
    "$bin/lyceum" broker --endpoint "$endpoint" --events-endpoint none --log-level warning $flags 2>"$work/$label-broker.log" &
    local broker=$!
    "$bin/lyceum" worker --broker "$endpoint" --service catalog --log-level warning --data "$work/$label" \
        2>"$work/$label-catalog.log" &
    local catalog=$!
    /usr/bin/python3 Benchmarks/partition_workers.py "$endpoint" "$@" >/dev/null &
    local workers=$!
    pids=("$broker" "$catalog" "$workers")
    sleep 2
    echo "== $label" >&2
    "$bin/lyceum" bench --endpoint "$endpoint" --scenario progress-watch --rate "$rate" --duration "${seconds}s" --warmup 2s \
        --server-pid "$broker" --label "$label" || echo "bench: $label had errors" >&2
    cleanup_run "$broker" "$catalog" "$workers"
}
cleanup_run() { for pid in "$@"; do kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; done; pids=(); }

run unpartitioned "" progress
run partitioned "--partitions 8" progress.p{0..7}
