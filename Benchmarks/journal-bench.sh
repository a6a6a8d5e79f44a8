#!/usr/bin/env bash
# The journal's benchmarks, each printed with a Redis reference measured in the same run:
#   1. appends/s per durability policy with 1 and 64 concurrent writers (vs redis-benchmark SET
#      with appendfsync always, 1 and 64 clients), and with policy always and 50 writes in flight:
#      50 blocked writer threads vs one thread whose writes `whenDurable` callbacks acknowledge
#      (vs 50 Redis clients);
#   2. replay of a RECORDS-record journal of ~200-byte books with progress on (vs redis-server
#      loading an AOF of the same keys and values);
#   3. resident memory after replay vs the journal's size and vs Redis's used_memory_rss.
# Needs redis-server and redis-benchmark (`scripts/ensure-deps.sh bench`). Environment:
# RECORDS (default 1000000), RUN_SECONDS per append run (default 3), SECTIONS (default
# "append replay"), JOURNAL_BENCH_BIN (a journal-bench already built, else it is built here).
set -euo pipefail
cd "$(dirname "$0")/.."
records=${RECORDS:-1000000}
run_seconds=${RUN_SECONDS:-3}

sections=${SECTIONS:-append replay}
bench=${JOURNAL_BENCH_BIN:-}
if [ -z "$bench" ]; then
  swift build -c release --product journal-bench >&2
  bench=.build/release/journal-bench
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/journal-bench.XXXXXX")
redis_pid=""
trap 'stop_redis; rm -rf "$work"' EXIT

divide() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.4f", a / b }'; }
source Benchmarks/common.sh


if [[ $sections == *append* ]]; then
echo "== appends per second: ~200-byte books, ${run_seconds}s per run, files in $work"
mkdir -p "$work/redis-append"
start_redis "$work/redis-append" --appendonly yes --appendfsync always
redis_one=$(redis-benchmark -p "$redis_port" -t set -d 200 -c 1 -n 3000 -r 1000000 -q | sed -n 's/.*SET: \([0-9.]*\) requests.*/\1/p')
redis_many=$(redis-benchmark -p "$redis_port" -t set -d 200 -c 64 -n 30000 -r 1000000 -q | sed -n 's/.*SET: \([0-9.]*\) requests.*/\1/p')
redis_fifty=$(redis-benchmark -p "$redis_port" -t set -d 200 -c 50 -n 30000 -r 1000000 -q | sed -n 's/.*SET: \([0-9.]*\) requests.*/\1/p')
stop_redis
printf "%-26s %12s %12s %10s\n" "" "1 writer" "64 writers" "64 vs 1"
printf "%-26s %12.0f %12.0f %9.1fx\n" "redis appendfsync always" "$redis_one" "$redis_many" "$(divide $redis_many $redis_one)"
for policy in always interval:100 none; do
  read -r one _ < <($bench append "$policy" 1 "$run_seconds" "$work/append-$policy-1" 2>/dev/null)
  read -r many _ < <($bench append "$policy" 64 "$run_seconds" "$work/append-$policy-64" 2>/dev/null)
  printf "%-26s %12s %12s %9.1fx\n" "journal $policy" "$one" "$many" "$(divide $many $one)"
  if [ "$policy" = always ]; then
    printf "%-26s %11.2fx %11.2fx\n" "  journal always / redis" "$(divide $one $redis_one)" "$(divide $many $redis_many)"
  fi
done
echo
echo "== policy always, 50 writes in flight"
read -r blocked blocked_per_sync < <($bench append always 50 "$run_seconds" "$work/append-blocked-50" 2>/dev/null)
read -r callbacks callbacks_per_sync < <($bench acknowledge always 50 "$run_seconds" "$work/append-callbacks-50" 2>/dev/null)
printf "%-42s %10s %9s %16s\n" "" "appends/s" "vs redis" "appends per sync"
printf "%-42s %10.0f %8.2fx\n" "redis appendfsync always, 50 clients" "$redis_fifty" 1
printf "%-42s %10s %8.2fx %16s\n" "journal, 50 threads blocked in the wait" "$blocked" "$(divide $blocked $redis_fifty)" "$blocked_per_sync"
printf "%-42s %10s %8.2fx %16s\n" "journal, 1 thread + whenDurable callbacks" "$callbacks" "$(divide $callbacks $redis_fifty)" "$callbacks_per_sync"
rm -rf "$work"/append-*
fi
[[ $sections == *replay* ]] || exit 0

echo
echo "== replay of $records books (~200-byte values)"
$bench generate "$work/replay" "$records" 2> >(grep "^generate:" >&2)
mkdir -p "$work/redis-load/appendonlydir"
$bench redis-aof "$work/redis-load/appendonlydir/appendonly.aof.1.base.aof" "$records"
echo "file appendonly.aof.1.base.aof seq 1 type b" > "$work/redis-load/appendonlydir/appendonly.aof.manifest"
# Both start from a warm page cache, so the comparison is of decoding, not of the disk.
cat "$work/replay/journal.jsonl" "$work/redis-load/appendonlydir/appendonly.aof.1.base.aof" > /dev/null

journal=$($bench replay "$work/replay" 2> >(grep '^replay:' >&2))
journal_seconds=$(echo "$journal" | sed -n 's/.*seconds=\([0-9.]*\).*/\1/p')
journal_rss=$(echo "$journal" | sed -n 's/.*rss_bytes=\([0-9]*\).*/\1/p')
journal_bytes=$(echo "$journal" | sed -n 's/.*journal_bytes=\([0-9]*\).*/\1/p')

start_redis "$work/redis-load" --appendonly yes --appenddirname appendonlydir
redis_seconds=$(sed -n 's/.*DB loaded from append only file: \([0-9.]*\) seconds.*/\1/p' "$work/redis-load/redis.log" | tail -1)
redis_keys=$(redis-cli -p "$redis_port" dbsize)
redis_rss=$(redis-cli -p "$redis_port" info memory | tr -d '\r' | sed -n 's/^used_memory_rss:\([0-9]*\)$/\1/p')
redis_aof_bytes=$(stat -c %s "$work/redis-load/appendonlydir/appendonly.aof.1.base.aof")
stop_redis

printf "%-30s %10s %14s %14s\n" "" "seconds" "RSS MiB" "file MiB"
printf "%-30s %10.3f %14.1f %14.1f\n" "journal replay ($records)" "$journal_seconds" "$(divide $journal_rss 1048576)" "$(divide $journal_bytes 1048576)"
printf "%-30s %10.3f %14.1f %14.1f\n" "redis AOF load ($redis_keys keys)" "$redis_seconds" "$(divide $redis_rss 1048576)" "$(divide $redis_aof_bytes 1048576)"
printf "journal/redis: time %.2fx, memory %.2fx; journal RSS / journal size %.2f\n" \
  "$(divide $journal_seconds $redis_seconds)" "$(divide $journal_rss $redis_rss)" "$(divide $journal_rss $journal_bytes)"
