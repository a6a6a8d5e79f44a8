#!/usr/bin/env bash
# `books get` latency in `lyceum serve --dashboard-port` with and without 1,000 open Server-Sent
# Events streams that never read (issue 18): what the dashboard's HTTP side costs the request
# path. Both runs write progress at RATE/s meanwhile, so the streams carry events (each one sent
# to 1,000 sockets); at the default rate the streams stay under their unsent limit for the whole
# run, so none is cut and all 1,000 are open throughout (the script prints how many still are).
#
# Usage: Benchmarks/dashboard-bench.sh [REQUESTS] [RATE]   (default 5000 requests, 20 writes/s)
# BIN_DIR: lyceum already built; else a release build.
set -euo pipefail
cd "$(dirname "$0")/.."
requests=${1:-5000}
rate=${2:-20}

if [ -z "${BIN_DIR:-}" ]; then
  swift build -c release --product lyceum >&2
  BIN_DIR=$(swift build -c release --show-bin-path)
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/lyceum-dashboard-bench.XXXXXX")
source Benchmarks/common.sh
broker_port=$(free_port) dashboard_port=$(free_port)
serve_pid="" streams_pid=""
stop() {
  [ -n "$streams_pid" ] && kill "$streams_pid" 2>/dev/null || true
  [ -n "$serve_pid" ] && kill "$serve_pid" 2>/dev/null && wait "$serve_pid" 2>/dev/null || true
  rm -rf "$work"
}
trap stop EXIT
"$BIN_DIR/lyceum" serve --data "$work/data" --endpoint "tcp://127.0.0.1:$broker_port" \
  --events-endpoint "tcp://127.0.0.1:$(free_port)" --snapshot-endpoint "tcp://127.0.0.1:$(free_port)" \
  --dashboard-port "$dashboard_port" --durability none --log-level warning 2>"$work/serve.log" &
serve_pid=$!
sleep 2
broker="tcp://127.0.0.1:$broker_port"

read -r p50_off p99_off mean_off < <(/usr/bin/python3 Benchmarks/dashboard_latency.py "$broker" "$requests" "$rate")
mkfifo "$work/hold"
/usr/bin/python3 Tests/LyceumServerTests/Clients/dashboard_http.py streams "$dashboard_port" 1000 <"$work/hold" >"$work/streams.out" &
streams_pid=$!
exec 3>"$work/hold"
until grep -q open "$work/streams.out" 2>/dev/null; do sleep 0.2; done
read -r p50_on p99_on mean_on < <(/usr/bin/python3 Benchmarks/dashboard_latency.py "$broker" "$requests" "$rate")
rss=$(awk '/VmRSS/ {print $2}' "/proc/$serve_pid/status")
open_streams=$(ss -Htn state established "( sport = :$dashboard_port )" | wc -l)
exec 3>&-

printf 'books get, %s requests, progress writes at %s/s meanwhile\n' "$requests" "$rate"
printf '%-28s %8s %8s %8s\n' "" "p50 µs" "p99 µs" "mean µs"
printf '%-28s %8s %8s %8s\n' "no streams" "$p50_off" "$p99_off" "$mean_off"
printf '%-28s %8s %8s %8s\n' "1,000 unread SSE streams" "$p50_on" "$p99_on" "$mean_on"
awk -v a="$p50_off" -v b="$p50_on" -v c="$p99_off" -v d="$p99_on" 'BEGIN { printf "ratio (streams / none)       %8.2f %8.2f\n", b / a, d / c }'
printf 'serve resident memory with the streams open: %s KiB; streams still open at the end: %s\n' "$rss" "$open_streams"
