#!/usr/bin/env bash
# The C reference for issue 6's event goals: libzmq alone, publishing 450-byte two-frame messages
# to one TCP subscriber in another process (Benchmarks/EventsBench/pub_floor.c), at the rate and
# batch sizes of `events-bench`'s latency part and of `lyceum serve`. It prints, per batch size,
# the median over ROUNDS runs of the send-to-arrival p50 and p99 and of the CPU the publishing
# process spends per delivered message (with the subscriber, less without), to set beside
# Lyceum's figures from the same `make bench-events` run.
#
# Usage: Benchmarks/events-floor.sh [ROUNDS] [RATE]   (default 5 rounds, 10000 messages/s)
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-5}
rate=${2:-10000}
work=$(mktemp -d "${TMPDIR:-/tmp}/lyceum-events-floor.XXXXXX")
trap 'rm -rf "$work"' EXIT
cc -O2 -o "$work/pub_floor" Benchmarks/EventsBench/pub_floor.c $(pkg-config --cflags --libs libzmq)
source Benchmarks/common.sh

echo "C reference, libzmq alone: $rate messages/s of 450 bytes to 1 TCP subscriber in another process; median of $rounds runs"
echo "| sent in groups of | send to arrival p50 | p99 (each run) | CPU per delivered message |"
echo "|---|---|---|---|"
for batch in 1 4; do
  : >"$work/runs"
  for round in $(seq 1 "$rounds"); do
    "$work/pub_floor" "$rate" "$((rate * 3))" 450 "$batch" >>"$work/runs"
    echo "events-floor: groups of $batch, run $round/$rounds: $(tail -1 "$work/runs")" >&2
  done
  p50=$(awk '{ print $3 }' "$work/runs" | median)
  p99=$(awk '{ print $4 }' "$work/runs" | median)
  each=$(awk '{ printf "%s%.2f", (NR > 1 ? ", " : ""), $4 / 1000 }' "$work/runs")
  cpu=$(awk '{ print $1 - $2 }' "$work/runs" | median)
  printf '| %d | %s µs | %s µs (%s ms) | %s µs |\n' "$batch" "$p50" "$p99" "$each" "$cpu"
done
