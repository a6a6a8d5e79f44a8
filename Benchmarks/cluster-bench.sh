#!/usr/bin/env bash
# The scale-out benchmark (issue 17): what a partitioned cluster on this machine writes, and what
# one broker can route.
#   1. Durable writes vs worker processes: one `lyceum broker --partitions 16` and 1, 2 and 4
#      partitioned `lyceum worker --service books` processes on loopback, the 16 partitions shared
#      evenly by `lyceum partitions init` (durability always: each partition's journal syncs on its
#      own). `lyceum bench` sends book creates for LEARNERS learners (every partition is hit) at
#      CONCURRENCY in flight, the same time per point, reading the broker's and the workers' CPU
#      separately (--server-pid) and the writes each fdatasync carried (the workers' journal metrics);
#      with 4 workers, book reads the same way (the CPU per read the model needs). First, as the
#      reference, the same against a plain broker and one unpartitioned worker (one journal).
#   2. The broker's routing ceiling: cheap requests (progress-watch, answered at once by the
#      minimal Python workers of partition_workers.py, 32 sessions) through `lyceum broker` without
#      and with `--partitions 16`, closed loop; the broker's CPU per request, and 1 s ÷ that: the
#      requests/s one broker forwards with a core to itself.
#   3. fdatasync/s of the data directory's file system (one writer, 200-byte appends): the disk
#      figure docs/cluster.md's model rests on.
# Prints a table (ratios against the 1-worker point); writes OUT/cluster.md, cluster.json (with the
# load average around every point: the machine may be shared), cluster.svg (writes/s vs workers)
# and the JSON of every run. Every process it starts is stopped on exit.
#
# Usage: Benchmarks/cluster-bench.sh [--quick]
#   --quick   a second per point, a few hundred learners: for the test suite, figures meaningless
# Environment: BIN_DIR (lyceum already built; else a release build), OUT (default
# bench-results/<date>), RUN_SECONDS (default 10), CONCURRENCY (default 50), LEARNERS (default 2000).
set -euo pipefail
cd "$(dirname "$0")/.."

quick=0
case "${1:-}" in
  --quick) quick=1 ;;
  "") ;;
  *) echo "usage: Benchmarks/cluster-bench.sh [--quick]" >&2; exit 2 ;;
esac
if [ "$quick" = 1 ]; then
  run_seconds=${RUN_SECONDS:-1} warmup=300ms learners=${LEARNERS:-400} sync_seconds=0.3
else
  run_seconds=${RUN_SECONDS:-10} warmup=2s learners=${LEARNERS:-2000} sync_seconds=2
fi
concurrency=${CONCURRENCY:-50}
partitions=16
out=${OUT:-bench-results/$(date -u +%F)}
mkdir -p "$out"
if [ -z "${BIN_DIR:-}" ]; then
  swift build -c release --product lyceum >&2
  BIN_DIR=$(swift build -c release --show-bin-path)
fi
lyceum=$BIN_DIR/lyceum
work=$(mktemp -d "${TMPDIR:-/tmp}/lyceum-cluster.XXXXXX")
pids=()
# TERM every process of the current point, then wait for each (workers drain and sync first).
stop_all() { stop_processes "${pids[@]}"; pids=(); }
trap 'stop_all; rm -rf "$work"' EXIT

log() { echo "cluster-bench: $*" >&2; }
source Benchmarks/common.sh
# Fails the run, with every log so far, when a process it started has exited.
check_alive() {
  local pid
  for pid in "${pids[@]}"; do
    kill -0 "$pid" 2>/dev/null || { log "process $pid exited; logs:"; tail -n 20 "$work"/*.log >&2; exit 1; }
  done
}

# start_broker [FLAGS…]: a broker on a free loopback port, no events; sets $endpoint, $broker_pid.
start_broker() {
  endpoint="tcp://127.0.0.1:$(free_port)"
  "$lyceum" broker --endpoint "$endpoint" --events-endpoint none --log-level warning "$@" 2>>"$work/broker.log" &
  broker_pid=$!
  pids+=("$broker_pid")
}

# The first and last partition worker INDEX of COUNT owns: the 16 shared evenly, in ranges.
share() { echo "$(($1 * partitions / $2))-$((($1 + 1) * partitions / $2 - 1))"; }

# bench NAME OPTIONS…: lyceum bench's JSON in OUT/NAME.json, the load average around it in $load_before/$load_after.
bench() {
  local name=$1; shift
  load_before=$(loadavg)
  "$lyceum" bench --endpoint "$endpoint" --connections 4 --in-flight "$concurrency" --duration "${run_seconds}s" \
    --warmup "$warmup" --learners "$learners" --json --progress 5s --label "$name" "$@" \
    >"$out/$name.json" 2> >(grep --line-buffered -v '^ts=' >&2) || log "$name: some requests failed (see $out/$name.json)"
  load_after=$(loadavg)
}

# The facts of the run NAME.json just measured: point NAME PARTITIONS WORKERS APPENDS_PER_SYNC
# (null when not read).
point() {
  /usr/bin/python3 -c 'import json,sys; print(json.dumps({"file": sys.argv[1] + ".json", "partitions": int(sys.argv[2]),
    "workers": int(sys.argv[3]), "appends_per_sync": json.loads(sys.argv[4]), "broker_pid": int(sys.argv[5]),
    "load_before": sys.argv[6], "load_after": sys.argv[7], "worker_pids": [int(p) for p in sys.argv[8:]]}))' \
    "$1" "$2" "$3" "$4" "$broker_pid" "$load_before" "$load_after" "${worker_pids[@]}"
}
# Appends per fdatasync over the whole run (warm-up included) of the workers whose metrics are on
# PORTS: how many writes group commit put behind each sync.
appends_per_sync() {
  /usr/bin/python3 - "$@" <<'PY'
import re, sys, urllib.request
totals = {"appends": 0.0, "syncs": 0.0}
for port in sys.argv[1:]:
    text = urllib.request.urlopen("http://127.0.0.1:%s/metrics" % port, timeout=5).read().decode()
    for kind in totals:
        totals[kind] += sum(float(v) for v in re.findall(r"^lyceum_journal_%s_total\{[^}]*\} (\S+)$" % kind, text, re.M))
print(round(totals["appends"] / totals["syncs"], 2) if totals["syncs"] else "null")
PY
}

# 1. Durable writes with 1, 2 and 4 partitioned worker processes, and first the unpartitioned
# reference: a plain broker and one worker holding one books journal.
write_points=() read_points=()
for workers in unpartitioned 1 2 4; do
  if [ "$workers" = unpartitioned ]; then
    log "writes: broker and one unpartitioned worker (one journal), $concurrency in flight, ${run_seconds} s"
    start_broker
  else
    log "writes: broker --partitions $partitions and $workers worker process(es), $concurrency in flight, ${run_seconds} s"
    start_broker --partitions "$partitions"
  fi
  worker_pids=() metrics_ports=()
  for ((index = 0; index < ${workers/unpartitioned/1}; index++)); do
    data="$work/w$workers-$index"
    flags=()
    if [ "$workers" != unpartitioned ]; then
      "$lyceum" partitions init --data "$data" --partitions "$partitions" --own "$(share "$index" "$workers")" --service books >/dev/null
      flags=(--partitions "$partitions" --node "bench-w$index")
    fi
    metrics_ports+=("$(free_port)")
    "$lyceum" worker --broker "$endpoint" "${flags[@]}" --service books --data "$data" --durability always \
      --forwarder-endpoint "tcp://127.0.0.1:$(free_port)" --metrics-port "${metrics_ports[-1]}" \
      --log-level warning 2>>"$work/worker-$index.log" &
    pids+=("$!")
    worker_pids+=("$!")
  done
  # Ready when every books partition has one owner (`status` asks every node what it holds), or
  # unpartitioned, when books answers.
  until if [ "$workers" = unpartitioned ]; then
          "$lyceum" call --broker "$endpoint" --timeout 1000 books '{"op":"list","learner":"probe"}' >/dev/null 2>&1
        else
          "$lyceum" status --broker "$endpoint" --partitions "$partitions" --timeout 1000 2>/dev/null \
            | /usr/bin/python3 -c 'import json,sys; rows=json.load(sys.stdin)["partitions"]["table"]
sys.exit(0 if all(r["state"] == "owned" for r in rows if r["service"] == "books") else 1)' 2>/dev/null
        fi; do
    check_alive
    sleep 0.1
  done
  server=(--server-pid "$broker_pid")
  for pid in "${worker_pids[@]}"; do server+=(--server-pid "$pid"); done
  bench "cluster-writes-$workers" --scenario book-create "${server[@]}"
  used=$([ "$workers" = unpartitioned ] && echo 0 || echo "$partitions")
  write_points+=("$(point "cluster-writes-$workers" "$used" "${workers/unpartitioned/1}" "$(appends_per_sync "${metrics_ports[@]}")")")
  case "$workers" in
    unpartitioned|4)
      # Reads on the same cluster (1000 books the setup creates): the model's CPU per read.
      bench "cluster-reads-$workers" --scenario book-read --books 1000 "${server[@]}"
      read_points+=("$(point "cluster-reads-$workers" "$used" "${workers/unpartitioned/1}" null)") ;;
  esac
  stop_all
done

# 2. One broker's routing ceiling, unpartitioned and partitioned, against workers that answer at once.
routing_points=()
sessions=32
for mode in unpartitioned partitioned; do
  log "routing: broker ($mode), progress-watch to minimal workers, $concurrency in flight, ${run_seconds} s"
  if [ "$mode" = partitioned ]; then
    start_broker --partitions "$partitions"
    services=()
    for ((session = 0; session < sessions; session++)); do services+=("progress.p$((session % partitions))"); done
  else
    start_broker
    services=()
    for ((session = 0; session < sessions; session++)); do services+=(progress); done
  fi
  # progress-watch discovers the catalog first, so a real catalog worker serves it.
  "$lyceum" worker --broker "$endpoint" --service catalog --data "$work/catalog-$mode" --log-level warning 2>>"$work/catalog.log" &
  pids+=("$!")
  /usr/bin/python3 Benchmarks/partition_workers.py "$endpoint" "${services[@]}" >/dev/null 2>>"$work/python-workers.log" &
  pids+=("$!")
  until "$lyceum" call --broker "$endpoint" --timeout 1000 progress '{"op":"mark_watched","learner":"probe"}' >/dev/null 2>&1 \
      && "$lyceum" call --broker "$endpoint" --timeout 1000 catalog '{"op":"list_categories"}' >/dev/null 2>&1; do
    check_alive
    sleep 0.1
  done
  bench "cluster-routing-$mode" --scenario progress-watch --server-pid "$broker_pid"
  worker_pids=()
  routing_points+=("\"$mode\": $(point "cluster-routing-$mode" "$([ "$mode" = partitioned ] && echo "$partitions" || echo 0)" 0 null)")
  stop_all
done

# 3. The disk: fdatasync after each 200-byte append, one writer, in the file system the journals used.
fsyncs=$(/usr/bin/python3 - "$work/fsync-probe" "$sync_seconds" <<'PY'
import os, sys, time
path, seconds = sys.argv[1], float(sys.argv[2])
fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
count, start = 0, time.monotonic()
while time.monotonic() - start < seconds:
    os.write(fd, b"x" * 199 + b"\n")
    os.fdatasync(fd)
    count += 1
print(round(count / (time.monotonic() - start)))
os.close(fd)
PY
)

(IFS=,; cat >"$work/facts.json" <<JSON
{"machine": {"cores": $(nproc), "cpu": "$(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo)", "kernel": "$(uname -sr)",
  "commit": "$(git rev-parse --short HEAD 2>/dev/null || echo unknown)"},
 "settings": {"partitions": $partitions, "in_flight": $concurrency, "connections": 4, "seconds": $run_seconds, "warmup": "$warmup",
  "learners": $learners, "durability": "always", "routing_sessions": $sessions, "quick": $([ "$quick" = 1 ] && echo true || echo false)},
 "fsyncs_per_second": $fsyncs,
 "writes": [${write_points[*]}],
 "reads": [${read_points[*]}],
 "routing": {${routing_points[*]}}}
JSON
)
table=$(/usr/bin/python3 Benchmarks/cluster_report.py "$work/facts.json" "$out")
{
  echo "# Lyceum scale-out benchmark, $(date -u '+%F %H:%M UTC')"
  echo
  echo "Machine: $(nproc) cores ($(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo)), $(uname -sr), commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)."
  echo "Every process (broker, workers, the load generator) shares these cores: the load average beside each"
  echo "point says how busy the machine was (it includes this benchmark's own processes)."
  [ "$quick" = 0 ] || echo "**Quick mode: tiny counts, figures are not meaningful.**"
  echo
  echo "\`Benchmarks/cluster-bench.sh\`: one \`lyceum broker --partitions $partitions\`, partitioned \`lyceum worker --service books\`"
  echo "processes sharing the $partitions partitions evenly (durability \`always\`), \`lyceum bench --scenario book-create\`"
  echo "over $learners learners, 4 connections, $concurrency in flight, ${run_seconds} s per point after a $warmup warm-up."
  echo "CPU per write: utime+stime from \`/proc/PID/stat\` over the measured interval ÷ measured writes."
  echo
  echo "$table"
  echo
  echo "![writes/s vs worker processes](cluster.svg)"
} >"$out/cluster.md"
cat "$out/cluster.md"
