#!/usr/bin/env bash
# PUSH→PULL throughput over tcp://127.0.0.1: the Swift wrapper against the same program in C,
# both built and run here, in alternation, so that the ratio compares like with like.
# Usage: Benchmarks/zmq-throughput.sh [MESSAGES] [SIZE] [ROUNDS]
# ZMQ_THROUGHPUT_BIN: a zmq-throughput already built (the suite's quick mode), else it is built here.
set -euo pipefail
cd "$(dirname "$0")/.."
messages=${1:-1000000}
size=${2:-32}
rounds=${3:-11}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "building: C reference (cc -O2) and Swift (release)…" >&2
cc -O2 -o "$work/pushpull" Benchmarks/ZeroMQThroughput/pushpull.c $(pkg-config --cflags --libs libzmq) -lpthread
swift_bin=${ZMQ_THROUGHPUT_BIN:-}
if [ -z "$swift_bin" ]; then
  swift build -c release --product zmq-throughput >&2
  swift_bin=$(swift build -c release --show-bin-path)/zmq-throughput
fi

source Benchmarks/common.sh
declare -A rates
for round in $(seq 1 "$rounds"); do
  c=$("$work/pushpull" "$messages" "$size")
  reused=$("$swift_bin" reused "$messages" "$size")
  array=$("$swift_bin" array "$messages" "$size")
  rates[c]+="$c " rates[reused]+="$reused " rates[array]+="$array "
  echo "round $round/$rounds: C $c, Swift reused $reused, Swift array $array msg/s" >&2
done

c=$(tr ' ' '\n' <<<"${rates[c]}" | grep . | median)
reused=$(tr ' ' '\n' <<<"${rates[reused]}" | grep . | median)
array=$(tr ' ' '\n' <<<"${rates[array]}" | grep . | median)
printf '\nPUSH→PULL, %d messages of %d bytes, tcp://127.0.0.1, median of %d rounds\n' "$messages" "$size" "$rounds"
printf '| %-42s | %14s | %8s |\n' "path" "messages/s" "× C"
printf '|%s|%s|%s|\n' "$(printf -- '-%.0s' {1..44})" "$(printf -- '-%.0s' {1..16})" "$(printf -- '-%.0s' {1..10})"
for row in "C libzmq, zmq_msg_recv into reused msg:$c" "Swift, receive(into: reused Message):$reused" "Swift, receive() → new [UInt8]:$array"; do
  name=${row%:*}; rate=${row##*:}
  printf '| %-42s | %14s | %8s |\n' "$name" "$rate" "$(awk -v a="$rate" -v b="$c" 'BEGIN { printf "%.3f", a / b }')"
done
