#!/usr/bin/env bash
# Backup and restore of BOOKS books (default 1M), and what a running backup costs durable writes,
# beside Redis in the same run (issue 29). Not a test: it prints figures, it asserts nothing.
#   1. `lyceum serve` is filled with BOOKS books (`lyceum bench --books`, durability none), then
#      restarted with durability always;
#   2. `lyceum backup` time and throughput; `lyceum restore` (which verifies first) time;
#   3. book-create latency (p50, p99; 50 in flight, closed loop, durability always) without and
#      with backups running back to back, beside redis-benchmark SET (200 bytes, 50 clients,
#      appendfsync always) on BOOKS keys without and with BGSAVE running back to back, and
#      BGSAVE's own time and RDB size.
# Needs redis-server, redis-cli, redis-benchmark (`scripts/ensure-deps.sh bench`). Environment:
# BOOKS (default 1000000), RUN_SECONDS per latency run (default 10), BENCH_LYCEUM_BINARY (a lyceum
# already built, else `swift build -c release` builds it here).
set -euo pipefail
cd "$(dirname "$0")/.."
books=${BOOKS:-1000000}
run_seconds=${RUN_SECONDS:-10}
lyceum=${BENCH_LYCEUM_BINARY:-}
if [ -z "$lyceum" ]; then
  swift build -c release --product lyceum >&2
  lyceum=.build/release/lyceum
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/backup-bench.XXXXXX")
serve_pid=""
redis_pid=""
stop_serve() { if [ -n "$serve_pid" ]; then kill -TERM "$serve_pid" 2>/dev/null || true; wait "$serve_pid" 2>/dev/null || true; serve_pid=""; fi; }
trap 'stop_serve; stop_redis; rm -rf "$work"' EXIT
source Benchmarks/common.sh
seconds_since() { /usr/bin/python3 -c "import time,sys; print(f'{time.time() - float(sys.argv[1]):.1f}')" "$1"; }

start_serve() {
  local durability=$1
  endpoint="tcp://127.0.0.1:$(free_port)"
  "$lyceum" serve --endpoint "$endpoint" --data "$work/data" --durability "$durability" --events-endpoint none \
    --log-level warning 2>>"$work/serve.log" &
  serve_pid=$!
  until "$lyceum" call catalog '{"op":"list_categories"}' --broker "$endpoint" --timeout 1000 >/dev/null 2>&1; do sleep 0.2; done
}

# book-create latency with 50 writes in flight for RUN_SECONDS: prints "p50_ms p99_ms requests/s".
lyceum_latency() {
  "$lyceum" bench --broker "$endpoint" --scenario book-create --in-flight 50 --connections 4 --learners 10000 --books 1 \
    --warmup 1s --duration "${run_seconds}s" --json --progress 60s 2>/dev/null \
  | /usr/bin/python3 -c 'import json,sys; r=json.load(sys.stdin); l=r["latency_us"]; print("%.2f %.2f %.0f" % (l["p50"]/1000, l["p99"]/1000, r["requests_per_second"]))'
}

echo "== filling lyceum serve with $books books (durability none), data in $work"
start_serve none
started=$(now)
"$lyceum" bench --broker "$endpoint" --scenario book-read --learners 10000 --books "$books" --requests 1 --warmup 1ms \
  --in-flight 200 --connections 4 --progress 60s >/dev/null 2>&1
echo "filled in $(seconds_since "$started") s"
stop_serve
start_serve always
journal_bytes=$(stat -c %s "$work/data/books/journal.jsonl")

echo "== lyceum backup and restore of $books books (books journal $journal_bytes bytes, not compacted)"
started=$(now)
"$lyceum" backup --to "$work/backup" --broker "$endpoint" --timeout 60000 2>/dev/null | head -1
backup_seconds=$(seconds_since "$started")
backup_bytes=$(du -sb "$work/backup" | cut -f1)
started=$(now)
"$lyceum" restore --from "$work/backup" --data "$work/restored" >/dev/null
restore_seconds=$(seconds_since "$started")
/usr/bin/python3 - "$books" "$backup_seconds" "$restore_seconds" "$backup_bytes" <<'EOF'
import sys
books, backup, restore, size = int(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4])
print(f"backup:  {backup:6.1f} s  {books / backup:9.0f} books/s  {size / backup / 2**20:6.1f} MiB/s  ({size / 2**20:.0f} MiB)")
print(f"restore: {restore:6.1f} s  {books / restore:9.0f} books/s  {size / restore / 2**20:6.1f} MiB/s  (verify included)")
EOF

echo "== durable book-create latency, 50 in flight, ${run_seconds}s (ms: p50 p99, writes/s)"
read -r quiet_p50 quiet_p99 quiet_rate < <(lyceum_latency)
( i=0; while true; do rm -rf "$work/loop"; "$lyceum" backup --to "$work/loop" --broker "$endpoint" --timeout 60000 >/dev/null 2>&1 || true; i=$((i+1)); echo "$i" > "$work/loops"; done ) &
loop_pid=$!
read -r busy_p50 busy_p99 busy_rate < <(lyceum_latency)
kill "$loop_pid" 2>/dev/null || true; wait "$loop_pid" 2>/dev/null || true
stop_serve

echo "== redis: $books keys of 200 bytes, appendfsync always"
start_redis "$work/redis" --appendonly yes --appendfsync always --enable-debug-command yes
redis-cli -p "$redis_port" debug populate "$books" book 200 >/dev/null
redis-cli -p "$redis_port" bgsave >/dev/null
while [ "$(redis-cli -p "$redis_port" info persistence | tr -d '\r' | sed -n 's/^rdb_bgsave_in_progress://p')" = 1 ]; do sleep 0.1; done
bgsave_seconds=$(redis-cli -p "$redis_port" info persistence | tr -d '\r' | sed -n 's/^rdb_last_bgsave_time_sec://p')
rdb_bytes=$(stat -c %s "$work/redis/dump.rdb")
redis_set() {
  redis-benchmark -p "$redis_port" -t set -d 200 -c 50 -r "$books" -n $((run_seconds * 3000)) --csv 2>/dev/null \
  | /usr/bin/python3 -c 'import csv,sys; r=list(csv.DictReader(sys.stdin))[0]; print("%.2f %.2f %.0f" % (float(r["p50_latency_ms"]), float(r["p99_latency_ms"]), float(r["rps"])))'
}
read -r redis_quiet_p50 redis_quiet_p99 redis_quiet_rate < <(redis_set)
( while true; do redis-cli -p "$redis_port" bgsave >/dev/null 2>&1 || true; sleep 0.2; done ) &
loop_pid=$!
read -r redis_busy_p50 redis_busy_p99 redis_busy_rate < <(redis_set)
kill "$loop_pid" 2>/dev/null || true; wait "$loop_pid" 2>/dev/null || true
stop_redis
echo "redis BGSAVE of $books keys: ${bgsave_seconds} s, RDB $((rdb_bytes / 1048576)) MiB"

printf "%-44s %9s %9s %10s\n" "" "p50 ms" "p99 ms" "writes/s"
printf "%-44s %9s %9s %10s\n" "lyceum book-create (always), no backup" "$quiet_p50" "$quiet_p99" "$quiet_rate"
printf "%-44s %9s %9s %10s\n" "lyceum book-create, backups back to back" "$busy_p50" "$busy_p99" "$busy_rate"
printf "%-44s %9s %9s %10s\n" "redis SET (appendfsync always), no BGSAVE" "$redis_quiet_p50" "$redis_quiet_p99" "$redis_quiet_rate"
printf "%-44s %9s %9s %10s\n" "redis SET, BGSAVE back to back" "$redis_busy_p50" "$redis_busy_p99" "$redis_busy_rate"
