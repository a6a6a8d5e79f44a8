#!/usr/bin/env bash
# Lyceum's benchmark suite: every figure beside a reference measured in the same run on the same
# machine, the ratio between them, and each goal of issues 26 and 19 (and 16's for CURVE, 40's for one
# learner's library) with its verdict.
#   1. Swift ZeroMQ wrapper vs C libzmq, PUSH→PULL (Benchmarks/zmq-throughput.sh).
#      1b. Majordomo echo through Lyceum's broker, 50 in flight, workers over TCP and over inproc, vs
#      the C reference broker and C workers (Benchmarks/mdp-bench.sh --only tcp,inproc,c-tcp,c-inproc).
#   2. Catalog and book reads, 50 in flight, vs Redis GET with 50 clients.
#   3. Durable book creates, book updates and progress writes (durability always) vs Redis SET,
#      appendonly yes + appendfsync always;
#      3b. book reads and durable creates again with CURVE on, vs those plaintext runs;
#      3c. instructions per request of book-create, book-update, book-read and catalog-read under
#      callgrind (Benchmarks/request-cost.sh; not in --quick).
#   4. Open loop at 50% of the peak read rate: p99.9 from intended send times.
#   5. RECORDS books: resident memory of `lyceum serve` vs Redis, the server's restart (replay)
#      vs Redis loading an AOF of as many keys, and the journal layer alone (journal-bench.sh).
#      5b. One learner's library (issue 40): `books list` pages of 50 (first page and page 21, by
#      title, rating and created) of learners holding LIBRARIES books, one request at a time; and
#      book reads of other learners in an open loop at PAGES_RATE alone, then beside one client
#      paging the largest library without pause (lyceum bench --scenario book-list).
#   6. Beside NATS (issue 19): catalog reads through `lyceum broker` to a `lyceum worker` process vs
#      request/reply through nats-server to a responder process answering the same course JSON;
#      book creates under `interval:60000` vs JetStream file-stream publish+ack (Benchmarks/NATSLoad).
#      Skipped, with a note in results.md, when nats-server, go or Debian's nats.go are missing.
#      6b. The floors (issue 38, Benchmarks/floors.sh): each Lyceum row above beside a C program over
#      libzmq doing the least its request needs, driven by the same `lyceum bench`: reads vs a ROUTER
#      server answering from memory, durable writes vs the same appending a ~400-byte line per write
#      with pwrite and one fdatasync per wake-up before the replies, CURVE rows vs it with CURVE,
#      broker + worker vs the C reference broker with 16 C workers answering the catalog
#      (Benchmarks/floors/floor_server.c, Benchmarks/MajordomoEcho/mdp_reference.c, built with cc);
#      their system calls, context switches and instructions per request beside Lyceum's. Not in
#      --quick (the test suite's run) unless --only-floors is given.
#   Every write row's journal records and fdatasyncs per request, from serve's own counters
#   (lyceum_journal_appends_total and _syncs_total on its metrics port, over lyceum_requests_total).
#   Server CPU per request (utime+stime of the server processes from /proc/PID/stat over the
#   measured interval ÷ measured requests) beside every Lyceum, Redis and NATS throughput row.
#   Beside each throughput row of reads, creates, updates and progress writes, and of its Redis or
#   NATS reference (issue 26): system calls per request (`strace -c -f` on every thread of the
#   server processes, during a separate short run of STRACE_REQUESTS, Benchmarks/syscalls.sh; strace
#   slows every call, which changes how many requests a wake-up carries: figures to compare between
#   runs measured alike), context switches per request (every thread's, from
#   /proc/PID/task/*/status, over the throughput run itself) and instructions per request (3c).
#   7. Scale-out (issue 17, Benchmarks/cluster-bench.sh): durable writes through one partitioned broker
#      with 1, 2 and 4 worker processes, and one broker's routing ceiling, unpartitioned and partitioned.
#   8. Replication (issue 25, Benchmarks/replication-bench.sh; not in --quick): writes/s and server CPU
#      per write at R = 1 and R = 3, fail-over p50/max over 10 kills of a leader's host and acknowledged
#      writes lost, beside NATS JetStream R3; skipped, with a note, without root, etcd or NATS.
#   --soak only: the mix at 50% of its peak for SOAK seconds, RSS sampled, no errors allowed.
# Writes results.md, the JSON of every run and SVG charts to OUT (default bench-results/<date>).
#
# Usage: Benchmarks/suite.sh [--quick] [--no-cluster] [--soak SECONDS | --only-nats | --only-cluster | --only-pages | --only-floors]
#   --quick          seconds, not minutes: tiny counts, one round, system calls from a few hundred
#                    requests, no callgrind, no floors (part 6b) unless --only-floors; the test suite runs this
#   --no-cluster     without parts 7 and 8 (their cluster and kills take most of the full run)
#   --soak SECONDS   only the soak (make soak: 600)
#   --only-nats      only part 6, the NATS rows and the Lyceum rows beside them (for a busy machine)
#   --only-cluster   only parts 7 and 8, the scale-out and replication rows (cluster.md, cluster.json,
#                    cluster.svg, replication.md, replication.json, replication-failover.svg in OUT too)
#   --only-pages     only part 5b, one learner's library (make bench-pages)
#   --only-floors    only the Lyceum rows that have a floor, their floors and Redis (parts 2, 3, 3b,
#                    3c for creates and reads, the broker + worker run of 6, and 6b; make bench-floors)
# Environment: BIN_DIR (lyceum, zmq-throughput, journal-bench and mdp-bench already built; else a
# release build), OUT, RECORDS (default 1000000), RUN_SECONDS (default 10), CONCURRENCY (default 50),
# STRACE_REQUESTS (default 5000; --quick 300), NATS_SERVER (default: nats-server on PATH, else
# /usr/sbin/nats-server); for part 5b LIBRARIES (books of each listed learner, two sizes or more,
# each over 1000 so that page 21 exists; default "1050 10000 100000", --quick "1050 2100 4200"),
# PAGE_REQUESTS (requests of each page, default 100; --quick 20), PAGES_RATE (book reads/s, default
# 2000; --quick 500).
# Needs redis-server, redis-benchmark and redis-cli, strace and valgrind (scripts/ensure-deps.sh
# bench); for part 6, nats-server, go and golang-github-nats-io-go-nats-dev (scripts/ensure-deps.sh
# nats). Without strace (or the right to trace) or valgrind, those columns say n/a and a note says why.
set -euo pipefail
cd "$(dirname "$0")/.."

quick=0 soak=0 only_nats=0 only_cluster=0 only_pages=0 only_floors=0 no_cluster=0
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) quick=1 ;;
    --no-cluster) no_cluster=1 ;;
    --only-nats) only_nats=1 ;;
    --only-cluster) only_cluster=1 ;;
    --only-pages) only_pages=1 ;;
    --only-floors) only_floors=1 ;;
    --soak) soak=${2:?--soak needs SECONDS}; shift ;;
    *) echo "usage: Benchmarks/suite.sh [--quick] [--no-cluster] [--soak SECONDS | --only-nats | --only-cluster | --only-pages | --only-floors]" >&2; exit 2 ;;
  esac
  shift
done
if [ "$no_cluster" = 1 ] && [ "$only_cluster" = 1 ]; then echo "suite: --no-cluster and --only-cluster leave nothing to run" >&2; exit 2; fi
if [ $((only_nats + only_cluster + only_pages + only_floors)) -gt 1 ]; then echo "suite: --only-nats, --only-cluster, --only-pages and --only-floors exclude each other" >&2; exit 2; fi
# Part 6b, the floors: not in the test suite's --quick run (benchmarks are not tests), unless asked for.
floors=0
if [ "$only_floors" = 1 ] || { [ "$quick" = 0 ] && [ $((only_nats + only_cluster + only_pages)) = 0 ]; }; then floors=1; fi
if [ "$quick" = 1 ]; then
  records=${RECORDS:-3000} run_seconds=${RUN_SECONDS:-1} warmup=300ms zmq_messages=20000 zmq_rounds=1 redis_requests=3000
  strace_requests=${STRACE_REQUESTS:-300} mdp_seconds=0.2
  libraries=${LIBRARIES:-1050 2100 4200} page_requests=${PAGE_REQUESTS:-20} pages_rate=${PAGES_RATE:-500}
else
  records=${RECORDS:-1000000} run_seconds=${RUN_SECONDS:-10} warmup=2s zmq_messages=1000000 zmq_rounds=5 redis_requests=0
  strace_requests=${STRACE_REQUESTS:-5000} mdp_seconds=$run_seconds
  libraries=${LIBRARIES:-1050 10000 100000} page_requests=${PAGE_REQUESTS:-100} pages_rate=${PAGES_RATE:-2000}
fi
read -r -a library_sizes <<<"$(printf '%s\n' $libraries | sort -n | tr '\n' ' ')"
for size in "${library_sizes[@]}"; do
  # Page 21 of 50 is there only past 1,000 books (a page's next_cursor is null when no book follows it).
  [[ "$size" =~ ^[0-9]+$ ]] && [ "$size" -gt 1000 ] || { echo "suite: LIBRARIES: '$size' is not a number of books over 1000 (page 21 of 50 must exist)" >&2; exit 2; }
done
[ ${#library_sizes[@]} -ge 2 ] || { echo "suite: LIBRARIES needs two sizes at least" >&2; exit 2; }
concurrency=${CONCURRENCY:-50}
out=${OUT:-bench-results/$(date -u +%F)}
mkdir -p "$out"

if [ -z "${BIN_DIR:-}" ]; then
  products=(lyceum zmq-throughput journal-bench mdp-bench)
  [ "$only_pages" = 0 ] && [ "$only_floors" = 0 ] || products=(lyceum)
  for product in "${products[@]}"; do swift build -c release --product "$product" >&2; done
  BIN_DIR=$(swift build -c release --show-bin-path)
fi
lyceum=$BIN_DIR/lyceum
work=$(mktemp -d "${TMPDIR:-/tmp}/lyceum-suite.XXXXXX")
redis_pid="" lyceum_pid="" server_pids=() extra_pids=() worker_read_ran=0
# Redis is stopped through its protocol: a parent (such as a test runner) may leave SIGTERM blocked.
stop_redis() {
  [ -n "$redis_pid" ] || return 0
  redis-cli -p "$redis_port" shutdown nosave >/dev/null 2>&1 || kill -KILL "$redis_pid" 2>/dev/null || true
  wait "$redis_pid" 2>/dev/null || true
  redis_pid=""
}
stop_lyceum() { [ -z "$lyceum_pid" ] || { kill -TERM "$lyceum_pid" 2>/dev/null || true; wait "$lyceum_pid" 2>/dev/null || true; lyceum_pid=""; }; }
# Processes of part 6 (broker, worker, nats-server, responder): TERM, then wait for each.
source Benchmarks/processes.sh
stop_extra() { stop_processes "${extra_pids[@]}"; extra_pids=(); }
# System calls (strace) and context switches per request of a server process.
source Benchmarks/syscalls.sh
# The floors and the journal counters of write rows (issue 38).
source Benchmarks/floors.sh
trap 'stop_strace; stop_lyceum; stop_floor; stop_redis; stop_extra; rm -rf "$work"' EXIT

log() { echo "suite: $*" >&2; }
divide() { awk -v a="$1" -v b="$2" 'BEGIN { if (b == 0 || a !~ /^[0-9.]+$/) print "n/a"; else printf "%.2f", a / b }'; }
source Benchmarks/common.sh
rss_kib() { awk '/^VmRSS:/ { print $2 }' "/proc/$1/status"; }
now() { date +%s.%N; }
ms() { awk -v us="$1" 'BEGIN { printf "%.3f", us / 1000 }'; }
# utime+stime of PIDs, in clock ticks, from /proc/PID/stat (fields counted after the command name).
cpu_ticks() { local pid total=0; for pid in "$@"; do total=$((total + $(sed 's/.*) //' "/proc/$pid/stat" | awk '{ print $12 + $13 }'))); done; echo "$total"; }
# Server CPU per request of a run's JSON, µs, one decimal ("n/a" when it was not measured).
cpu() { /usr/bin/python3 -c 'import json,sys; c=json.load(open(sys.argv[1])).get("server_cpu")
print("%.1f" % c["us_per_request"] if c else "n/a")' "$1"; }
# Server context switches per request of a run's JSON, "VOLUNTARY/INVOLUNTARY" ("n/a" when not measured).
switches_of() { /usr/bin/python3 -c 'import json,sys; c=json.load(open(sys.argv[1])).get("server_cpu") or {}
s=c.get("context_switches_per_request"); print("%.2f/%.2f" % (s["voluntary"], s["involuntary"]) if s else "n/a")' "$1"; }

# Starts redis-server on a free loopback port in DIR with extra options; sets $redis_port.
start_redis() {
  local dir=$1; shift
  mkdir -p "$dir"
  redis_port=$(free_port)
  redis-server --bind 127.0.0.1 --port "$redis_port" --dir "$dir" --save "" --logfile "$dir/redis.log" "$@" &
  redis_pid=$!
  until [ "$(redis-cli -p "$redis_port" ping 2>/dev/null)" = "PONG" ]; do sleep 0.05; done
}

# Starts `lyceum serve` on free loopback ports (broker, events, snapshots) with its data in DIR,
# so that it never competes with another Lyceum on the default ports; sets $endpoint. Returns
# once the books service answers, and sets $ready_seconds to the time that took.
# Further arguments go to serve (CURVE keys); the probe and `bench` use $client_keys.
start_lyceum() {
  local dir=$1 durability=$2 started events snapshots
  shift 2
  endpoint="tcp://127.0.0.1:$(free_port)"
  events="tcp://127.0.0.1:$(free_port)"
  snapshots="tcp://127.0.0.1:$(free_port)"
  metrics_port=$(free_port)
  started=$(now)
  "$lyceum" serve --endpoint "$endpoint" --events-endpoint "$events" --snapshot-endpoint "$snapshots" --metrics-port "$metrics_port" \
    --data "$dir" --durability "$durability" --log-level warning "$@" >/dev/null 2>>"$work/serve.log" &
  lyceum_pid=$! server_pids=("$!")
  until "$lyceum" call --broker "$endpoint" --timeout 1000 "${client_keys[@]}" books '{"op":"list","learner":"suite-probe"}' >/dev/null 2>&1; do
    kill -0 "$lyceum_pid" 2>/dev/null || { log "lyceum serve exited; see its log:"; cat "$work/serve.log" >&2; exit 1; }
    sleep 0.02
  done
  ready_seconds=$(awk -v a="$started" -v b="$(now)" 'BEGIN { printf "%.3f", b - a }')
}

# lyceum bench with the suite's defaults; NAME picks the output files, the rest are options.
bench() {
  local name=$1; shift
  local pid pids=()
  for pid in "${server_pids[@]}"; do pids+=(--server-pid "$pid"); done
  "$lyceum" bench --endpoint "$endpoint" --connections 4 --warmup "$warmup" --label "$name" --json --progress 5s "${pids[@]}" "${client_keys[@]}" "$@" \
    >"$out/$name.json" 2> >(grep --line-buffered -v '^ts=' >&2) || log "$name: some requests failed (see $out/$name.json)"
}

# redis-benchmark TEST CLIENTS REQUESTS -> its req/s; NAME.json gets the figures, the curve and
# redis-server's CPU per request over the run.
redis_bench() {
  local test=$1 clients=$2 requests=$3 name=$4 line before after voluntary involuntary switches
  before=$(cpu_ticks "$redis_pid")
  read -r voluntary involuntary < <(context_switches "$redis_pid")
  line=$(redis-benchmark -p "$redis_port" -t "$test" -c "$clients" -n "$requests" -d 200 -r 100000 --csv | tail -1 | tr -d '"')
  after=$(cpu_ticks "$redis_pid")
  read -r -a switches < <(context_switches "$redis_pid")
  IFS=, read -r _ rps _ _ p50 p95 p99 max <<<"$line"
  /usr/bin/python3 -c 'import json,sys; n,p50,p95,p99,mx,rps,pid,ticks,hz,requests,vol,invol=sys.argv[1:13]; us=lambda v: int(float(v)*1000)
cpu=int(ticks)*1e6/int(hz)
json.dump({"label": n, "requests_per_second": float(rps), "latency_us": {"p50": us(p50), "p99": us(p99), "max": us(mx)},
  "curve": {"label": n, "points": [[50, us(p50)], [95, us(p95)], [99, us(p99)], [100, us(mx)]]},
  "server_cpu": {"us_per_request": cpu / int(requests), "processes_us": {pid: cpu},
    "context_switches_per_request": {"voluntary": int(vol) / int(requests), "involuntary": int(invol) / int(requests)}}},
  open(sys.argv[13], "w"))' \
    "$name" "$p50" "$p95" "$p99" "$max" "$rps" "$redis_pid" "$((after - before))" "$(getconf CLK_TCK)" "$requests" \
    "$((switches[0] - voluntary))" "$((switches[1] - involuntary))" "$out/$name.json"
  echo "$rps"
}

# Requests for a Redis run of about RUN_SECONDS at the rate Lyceum just did (at least 20000).
redis_count() { [ "$redis_requests" != 0 ] && echo "$redis_requests" || awk -v r="$1" -v s="$run_seconds" 'BEGIN { n = int(r * s); print (n < 20000 ? 20000 : n) }'; }

rows=() goals=() client_keys=()
# row WHAT LYCEUM REFERENCE RATIO [SYSTEM_CALLS CONTEXT_SWITCHES INSTRUCTIONS]: per request, for throughput rows.
row() { rows+=("| $1 | $2 | $3 | $4 | ${5:-} | ${6:-} | ${7:-} |"); }
# goal WHAT FIGURE TARGET VERDICT: VERDICT 1 (met), 0 (missed) or n/a (not measured).
goal() { goals+=("| $1 | $2 | $3 | $(case "$4" in 1) echo met ;; 0) echo "**missed**" ;; *) echo "not measured" ;; esac) |"); }
at_most() { awk -v a="$1" -v b="$2" 'BEGIN { if (a !~ /^[0-9.]+$/ || b !~ /^[0-9.]+$/) print "n/a"; else print (a <= b) ? 1 : 0 }'; }

# Per request, issue 26: system calls (NAME.syscalls, from syscalls_per_request), context switches
# (NAME.json) and instructions (NAME.instructions, from request-cost.sh) of a run; n/a when not measured.
syscalls_of() { [ -s "$out/$1.syscalls" ] && awk '$1 == "all" { print $2 }' "$out/$1.syscalls" || echo n/a; }
instructions_of() { [ -s "$out/$1.instructions" ] && cat "$out/$1.instructions" || echo n/a; }
# throughput_row WHAT RUN REFERENCE_RUN: a row of requests/s of the Lyceum run RUN vs REFERENCE_RUN, with
# both runs' system calls and context switches per request, and RUN's instructions per request.
throughput_row() {
  local lyceum_rps reference_rps
  lyceum_rps=$(json "$out/$2.json" requests_per_second) reference_rps=$(json "$out/$3.json" requests_per_second)
  row "$1" "$(printf %.0f "$lyceum_rps")" "$(printf %.0f "$reference_rps")" "$(divide "$lyceum_rps" "$reference_rps")" \
    "$(syscalls_of "$2") vs $(syscalls_of "$3")" "$(switches_of "$out/$2.json") vs $(switches_of "$out/$3.json")" \
    "$(instructions_of "$2")$([ ! -s "$out/$3.instructions" ] || echo " vs $(instructions_of "$3")")"
}
# measure_syscalls NAME PID RUN…: NAME.syscalls in OUT, from STRACE_REQUESTS requests of `RUN… N`
# less 100 of them; once strace could not attach, no further attempt (a note says so).
syscalls_note="" instructions_note=""
[ -x /usr/bin/strace ] || command -v strace >/dev/null || syscalls_note="**System calls per request not measured: strace is not installed (\`scripts/ensure-deps.sh bench\`).**"
measure_syscalls() {
  local name=$1 pid=$2
  shift 2
  [ -z "$syscalls_note" ] || return 0
  log "system calls per request: $name ($strace_requests requests under strace -c -f)"
  syscalls_per_request "$pid" 100 "$strace_requests" "$out/$name.syscalls" "$@" && return 0
  rm -f "$out/$name.syscalls"
  syscalls_note="**System calls per request not measured from $name on: strace could not attach to the server (ptrace not allowed?) or a run under it failed.**"
  log "${syscalls_note//\*/}"
}
# lyceum_requests SCENARIO N: N requests of SCENARIO to $endpoint, as the throughput runs send them.
lyceum_requests() {
  "$lyceum" bench --endpoint "$endpoint" --connections 4 --scenario "$1" --in-flight "$concurrency" --requests "$2" \
    --warmup 0s --timeout 60s --progress 60s "${client_keys[@]}" >/dev/null 2>>"$work/strace-runs.log"
}
# redis_requests TEST N: N requests of redis-benchmark's TEST to the running redis-server, as redis_bench sends them.
redis_requests() { redis-benchmark -p "$redis_port" -t "$1" -c "$concurrency" -n "$2" -d 200 -r 100000 -q >/dev/null; }
# A row of server CPU per request: WHAT, the Lyceum run's name, the reference's µs, what it is.
cpu_row() { local lyceum_cpu; lyceum_cpu=$(cpu "$out/$2.json"); row "server CPU per $1, µs (lyceum serve) vs $4" "$lyceum_cpu" "$3" "$(divide "$lyceum_cpu" "$3")"; }

load_before=$(cut -d' ' -f1-3 /proc/loadavg)
log "results in $out; load average $load_before"

if [ "$soak" != 0 ]; then
  # Soak: the mix, creates balanced by deletes so that live data stays the same size.
  mix=catalog-read=40,book-read=30,progress-watch=15,quiz-submit=3,book-update=6,book-create=3,book-delete=3
  start_lyceum "$work/soak" always
  bench soak-peak --scenario "$mix" --in-flight "$concurrency" --duration 5s
  rate=$(awk -v r="$(json "$out/soak-peak.json" requests_per_second)" 'BEGIN { printf "%d", r / 2 }')
  log "soak: $soak s of the mix at $rate req/s (50% of its peak), RSS of lyceum serve every 10 s"
  echo "seconds,rss_kib" >"$out/soak-rss.csv"
  "$lyceum" bench --endpoint "$endpoint" --connections 4 --scenario "$mix" --rate "$rate" --duration "${soak}s" \
    --warmup 5s --verify --label "soak $rate req/s" --json --progress 60s >"$out/soak.json" 2> >(grep --line-buffered -v '^ts=' >&2) &
  bench_pid=$!
  started=$(now)
  while kill -0 "$bench_pid" 2>/dev/null; do
    echo "$(awk -v a="$started" -v b="$(now)" 'BEGIN { printf "%.0f", b - a }'),$(rss_kib "$lyceum_pid")" >>"$out/soak-rss.csv"
    for _ in $(seq 1 20); do kill -0 "$bench_pid" 2>/dev/null && sleep 0.5; done
  done
  wait "$bench_pid" || true
  stop_lyceum
  # Flat: the last quarter's RSS is within 5% (+4 MiB) of the RSS after the first quarter (warm-up).
  verdict=$(awk -F, 'NR > 1 { t[n] = $1; r[n++] = $2 } END {
      q = int(n / 4); if (q < 1) q = 1; a = 0; b = 0
      for (i = q; i < 2 * q && i < n; i++) a += r[i]; a /= (2 * q <= n ? q : n - q)
      for (i = n - q; i < n; i++) b += r[i]; b /= q
      printf "%.1f %.1f %d", a / 1024, b / 1024, (b <= a * 1.05 + 4096) ? 1 : 0 }' "$out/soak-rss.csv")
  read -r early late flat <<<"$verdict"
  errors=$(json "$out/soak.json" error_count)
  "$lyceum" bench plot "$out/soak.svg" "$out/soak.json"
  {
    echo "# Lyceum soak, $(date -u '+%F %H:%M UTC')"
    echo
    echo "$soak s of \`$mix\` at $rate req/s (50% of the peak measured first), open loop, verified."
    echo "Machine: $(nproc) cores, $(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo), load average $load_before → $(cut -d' ' -f1-3 /proc/loadavg)."
    echo
    echo "| Check | Figure | Goal | Verdict |"
    echo "|---|---|---|---|"
    echo "| resident memory after warm-up → last quarter | $early → $late MiB | flat (≤ 5% + 4 MiB) | $([ "$flat" = 1 ] && echo met || echo "**missed**") |"
    echo "| errors | $errors of $(json "$out/soak.json" requests) | 0 | $([ "$errors" = 0 ] && echo met || echo "**missed**") |"
    echo "| p99.9 | $(ms "$(json "$out/soak.json" latency_us/p99.9)") ms | ≤ 5 ms | $([ "$(at_most "$(json "$out/soak.json" latency_us/p99.9)" 5000)" = 1 ] && echo met || echo "**missed**") |"
    echo
    echo "RSS samples: [soak-rss.csv](soak-rss.csv); latency: ![soak](soak.svg)"
  } >"$out/soak.md"
  cat "$out/soak.md"
  exit 0
fi

# Parts 1–5 (not indented, so that this block's lines stay as they were).
if [ "$only_nats" = 0 ] && [ "$only_cluster" = 0 ] && [ "$only_pages" = 0 ]; then
# Parts 1 and 1b have no floor (--only-floors leaves them out).
if [ "$only_floors" = 0 ]; then
# 1. ZeroMQ: the Swift wrapper vs C.
log "1/8 ZeroMQ PUSH→PULL, Swift vs C"
zmq=$(ZMQ_THROUGHPUT_BIN=$BIN_DIR/zmq-throughput Benchmarks/zmq-throughput.sh "$zmq_messages" 32 "$zmq_rounds" 2>/dev/null)
zmq_c=$(awk -F'|' '/C libzmq/ { gsub(/ /, "", $3); print $3 }' <<<"$zmq")
zmq_swift=$(awk -F'|' '/reused Message/ { gsub(/ /, "", $3); print $3 }' <<<"$zmq")
row "ZeroMQ PUSH→PULL 32 B, msg/s (Swift wrapper vs C, median of $zmq_rounds)" "$zmq_swift" "$zmq_c" "$(divide "$zmq_swift" "$zmq_c")"

# 1b. Majordomo echo through Lyceum's broker vs the C reference broker and C workers; mdp-bench's
# own lines (its ratios among them) in mdp-bench.txt.
log "1b/8 Majordomo echo, $concurrency in flight: Lyceum's broker vs the C reference broker and workers, tcp and inproc"
MDP_BENCH_BIN=$BIN_DIR/mdp-bench Benchmarks/mdp-bench.sh --seconds "$mdp_seconds" --in-flight "$concurrency" --only tcp,inproc,c-tcp,c-inproc \
  >"$out/mdp-bench.txt" 2>"$work/mdp-bench.log" || { log "mdp-bench failed:"; cat "$work/mdp-bench.log" >&2; exit 1; }
# The req/s of the measurement line that starts with PREFIX and names TRANSPORT workers and $concurrency in flight.
mdp_rps() { awk -v prefix="$1, $concurrency in flight, " -v transport="$2 workers" 'index($0, prefix) == 1 && index($0, transport) && / req\/s / {
  for (i = 2; i <= NF; i++) if ($i == "req/s") print $(i - 1) }' "$out/mdp-bench.txt"; }
for transport in tcp inproc; do
  lyceum_mdp=$(mdp_rps broker "$transport") c_mdp=$(mdp_rps "C broker" "$transport")
  # mdp-bench's own ratio of this run, "N× the C broker and workers of this run, c-TRANSPORT".
  mdp_ratio=$(awk -v key="of this run, c-$transport" -v prefix="broker, $concurrency in flight, " -v transport="$transport workers:" 'index($0, prefix) == 1 && index($0, transport) && index($0, key) {
    for (i = 1; i <= NF; i++) if ($(i + 1) == "the" && $(i + 2) == "C") { sub(/×$/, "", $i); print $i } }' "$out/mdp-bench.txt")
  row "Majordomo echo via Lyceum's broker, $concurrency in flight, $transport workers, req/s vs C broker + C workers (mdp-bench)" \
    "$lyceum_mdp" "$c_mdp" "${mdp_ratio:-n/a}"
  goal "#26 Majordomo through workers ($transport) ≥ 1.0× the C reference broker and workers" "${mdp_ratio:-n/a}×" "≥ 1.0×" "$(at_most 1 "${mdp_ratio:-n/a}")"
done
fi

# 3c, first: instructions per request under callgrind, while nothing else of the suite runs
# (request-cost.sh starts a serve of its own under valgrind; about a minute each at full counts).
if [ "$quick" = 1 ]; then
  instructions_note="**Instructions per request (callgrind, \`Benchmarks/request-cost.sh\`) not measured in --quick: serve under valgrind takes minutes.**"
elif ! command -v callgrind_control >/dev/null; then
  instructions_note="**Instructions per request not measured: valgrind is not installed (\`scripts/ensure-deps.sh bench\`).**"
else
  for scenario in book-create $([ "$only_floors" = 1 ] || echo book-update) book-read $([ "$only_floors" = 1 ] || echo catalog-read); do
    log "3c/8 instructions per request under callgrind: $scenario (2,000 and 6,000 requests)"
    Benchmarks/request-cost.sh "$lyceum" "$scenario" 2000 6000 always 2>>"$work/request-cost.log" | awk '{ print $2 }' >"$out/$scenario.instructions" ||
      { log "request-cost.sh $scenario failed:"; tail -5 "$work/request-cost.log" >&2; rm -f "$out/$scenario.instructions"; }
  done
fi

# 2–3. One server with durability always for reads, the open loop and durable creates.
log "2/8 reads at $concurrency in flight vs Redis GET"
start_lyceum "$work/lyceum" always
# The floors answer the catalog as this serve does, from its replies.
[ "$floors" = 0 ] || catalog_replies "$endpoint" list >"$work/floor-catalog.tsv"
bench catalog-read --scenario catalog-read --in-flight "$concurrency" --duration "${run_seconds}s"
bench book-read --scenario book-read --in-flight "$concurrency" --duration "${run_seconds}s"
# The open loop runs on the state the peak was measured on, before any write grows the journal
# (and starts a compaction) under it.
book_rps=$(json "$out/book-read.json" requests_per_second)
half=$(awk -v r="$book_rps" 'BEGIN { printf "%d", r / 2 }')
if [ "$only_floors" = 0 ]; then
  log "4/8 open loop at 50% of the peak read rate ($half req/s)"
  bench book-read-open --scenario book-read --rate "$half" --duration "${run_seconds}s"
  bench verified-mix --scenario mix --in-flight "$concurrency" --duration "${run_seconds}s" --verify
fi
# System calls after the runs above: a read run under strace creates its books first, and the open
# loop was to run before any write.
for name in catalog-read book-read; do measure_syscalls "$name" "$lyceum_pid" lyceum_requests "$name"; done
start_redis "$work/redis-plain"
redis-benchmark -p "$redis_port" -t set -n 100000 -r 100000 -d 200 -c "$concurrency" -q >/dev/null
catalog_rps=$(json "$out/catalog-read.json" requests_per_second)
redis_get=$(redis_bench get "$concurrency" "$(redis_count "$book_rps")" redis-get)
measure_syscalls redis-get "$redis_pid" redis_requests get
stop_redis
throughput_row "catalog reads (get_course), req/s vs Redis GET, $concurrency in flight" catalog-read redis-get
throughput_row "book reads (get), req/s vs Redis GET, $concurrency in flight" book-read redis-get
redis_get_cpu=$(cpu "$out/redis-get.json")
cpu_row "catalog read" catalog-read "$redis_get_cpu" "redis-server per GET"
cpu_row "book read" book-read "$redis_get_cpu" "redis-server per GET"
for name in catalog-read book-read; do
  p99=$(json "$out/$name.json" latency_us/p99)
  row "$name p99 latency, ms vs Redis GET p99" "$(ms "$p99")" "$(ms "$(json "$out/redis-get.json" latency_us/p99)")" "$(divide "$p99" "$(json "$out/redis-get.json" latency_us/p99)")"
done
for name in book-read catalog-read; do
  rps=$(json "$out/$name.json" requests_per_second) read_cpu=$(divide "$(cpu "$out/$name.json")" "$redis_get_cpu")
  goal "#26 ${name%-read} reads ≥ 1.3× Redis GET ($concurrency in flight)" "$(divide "$rps" "$redis_get")×" "≥ 1.3×" "$(at_most 1.3 "$(divide "$rps" "$redis_get")")"
  goal "#26 server CPU per ${name%-read} read ≤ Redis's per GET" "${read_cpu}×" "≤ 1.0×" "$(at_most "$read_cpu" 1)"
  goal "#19 ${name%-read} reads p99 ≤ 1 ms ($concurrency in flight)" "$(ms "$(json "$out/$name.json" latency_us/p99)") ms" "≤ 1 ms" "$(at_most "$(json "$out/$name.json" latency_us/p99)" 1000)"
done
[ "$only_floors" = 1 ] ||
  goal "verified mix: every reply correct" "$(json "$out/verified-mix.json" error_count) errors in $(json "$out/verified-mix.json" requests)" "0" "$([ "$(json "$out/verified-mix.json" error_count)" = 0 ] && echo 1 || echo 0)"

log "3/8 durable creates, book updates and progress writes vs Redis SET appendfsync always"
# Each write run counted: journal records and fdatasyncs per request from serve's own counters.
for name in book-create book-update progress-watch; do
  counted_bench lyceum_counters "$name" --scenario "$name" --in-flight "$concurrency" --duration "${run_seconds}s"
done
for name in book-create book-update progress-watch; do measure_syscalls "$name" "$lyceum_pid" lyceum_requests "$name"; done
create_rps=$(json "$out/book-create.json" requests_per_second)
start_redis "$work/redis-always" --appendonly yes --appendfsync always
redis_set=$(redis_bench set "$concurrency" "$(redis_count "$create_rps")" redis-set-always)
measure_syscalls redis-set-always "$redis_pid" redis_requests set
stop_redis
redis_set_cpu=$(cpu "$out/redis-set-always.json")
throughput_row "durable book creates (always)$(journal_text book-create), req/s vs Redis SET appendfsync always" book-create redis-set-always
throughput_row "durable book updates (always)$(journal_text book-update), req/s vs Redis SET appendfsync always" book-update redis-set-always
throughput_row "durable progress writes (mark_watched, then mark_unwatched; always)$(journal_text progress-watch), req/s vs Redis SET appendfsync always" progress-watch redis-set-always
cpu_row "durable create" book-create "$redis_set_cpu" "redis-server per SET always"
cpu_row "durable update" book-update "$redis_set_cpu" "redis-server per SET always"
cpu_row "durable progress write" progress-watch "$redis_set_cpu" "redis-server per SET always"
row "durable creates p99, ms vs Redis SET always p99" "$(ms "$(json "$out/book-create.json" latency_us/p99)")" "$(ms "$(json "$out/redis-set-always.json" latency_us/p99)")" "$(divide "$(json "$out/book-create.json" latency_us/p99)" "$(json "$out/redis-set-always.json" latency_us/p99)")"
goal "#26 durable creates ≥ 1.0× Redis SET always" "$(divide "$create_rps" "$redis_set")×" "≥ 1.0×" "$(at_most 1 "$(divide "$create_rps" "$redis_set")")"
create_cpu=$(divide "$(cpu "$out/book-create.json")" "$redis_set_cpu")
goal "#26 server CPU per durable create ≤ Redis's per SET always" "${create_cpu}×" "≤ 1.0×" "$(at_most "$create_cpu" 1)"
# "Within 1.2× of that": at least 1/1.2 of Redis's rate, at most 1.2× its CPU per SET.
for name in book-update progress-watch; do
  what=$([ "$name" = book-update ] && echo "durable updates" || echo "durable progress writes")
  rate=$(divide "$(json "$out/$name.json" requests_per_second)" "$redis_set") write_cpu=$(divide "$(cpu "$out/$name.json")" "$redis_set_cpu")
  goal "#26 $what within 1.2× of Redis SET always" "${rate}×" "≥ 0.83× (1 ÷ 1.2)" "$(at_most 0.8333 "$rate")"
  goal "#26 server CPU per ${what%s} within 1.2× of Redis's per SET always" "${write_cpu}×" "≤ 1.2×" "$(at_most "$write_cpu" 1.2)"
done
goal "#26 instructions per durable create (callgrind)" "$(instructions_of book-create)" "≤ 50000" "$(at_most "$(instructions_of book-create)" 50000)"
goal "#26 instructions per book read (callgrind)" "$(instructions_of book-read)" "≤ 30000" "$(at_most "$(instructions_of book-read)" 30000)"
if [ "$only_floors" = 0 ]; then
p999=$(json "$out/book-read-open.json" latency_us/p99.9)
row "book reads open loop at $half req/s (50% of peak): p99.9 ms, vs closed-loop p99.9" "$(ms "$p999")" "$(ms "$(json "$out/book-read.json" latency_us/p99.9)")" "$(divide "$p999" "$(json "$out/book-read.json" latency_us/p99.9)")"
goal "#26 open loop at 50% of peak: p99.9 ≤ 2 ms" "$(ms "$p999") ms" "≤ 2 ms" "$(at_most "$p999" 2000)"
fi
stop_lyceum

# 3b. CURVE (issue 16): the same reads and durable creates with every connection encrypted and
# authenticated (an `app` key), beside the plaintext runs of parts 2–3 on the same machine.
log "3b/8 book reads and durable creates with CURVE vs plaintext"
mkdir -p "$work/keys/clients"
"$lyceum" keys generate server --dir "$work/keys" --role admin >/dev/null
"$lyceum" keys generate bench --dir "$work/keys/clients" --role app >/dev/null
client_keys=(--curve-secret-key "$work/keys/clients/bench_secret" --curve-server-key "$work/keys/server")
start_lyceum "$work/lyceum-curve" always --curve-secret-key "$work/keys/server_secret" --authorized-keys "$work/keys/clients"
bench curve-book-read --scenario book-read --in-flight "$concurrency" --duration "${run_seconds}s"
counted_bench lyceum_counters curve-book-create --scenario book-create --in-flight "$concurrency" --duration "${run_seconds}s"
stop_lyceum
client_keys=()
for kind in book-read book-create; do
  plain_rps=$(json "$out/$kind.json" requests_per_second) curve_rps=$(json "$out/curve-$kind.json" requests_per_second)
  plain_p50=$(json "$out/$kind.json" latency_us/p50) curve_p50=$(json "$out/curve-$kind.json" latency_us/p50)
  row "$kind with CURVE$(journal_text "curve-$kind"), req/s vs plaintext" "$(printf %.0f "$curve_rps")" "$(printf %.0f "$plain_rps")" "$(divide "$curve_rps" "$plain_rps")"
  row "$kind with CURVE, p50 µs vs plaintext" "$curve_p50" "$plain_p50" "$(divide "$curve_p50" "$plain_p50")"
  row "$kind with CURVE, server CPU per request µs vs plaintext" "$(cpu "$out/curve-$kind.json")" "$(cpu "$out/$kind.json")" "$(divide "$(cpu "$out/curve-$kind.json")" "$(cpu "$out/$kind.json")")"
  goal "#16 $kind: CURVE costs ≤ 10% of throughput" "$(divide "$curve_rps" "$plain_rps")×" "≥ 0.90×" "$(at_most 0.90 "$(divide "$curve_rps" "$plain_rps")")"
  goal "#16 $kind: CURVE adds ≤ 10 µs of p50" "$((curve_p50 - plain_p50)) µs" "≤ 10 µs" "$(at_most "$((curve_p50 - plain_p50))" 10)"
done

if [ "$only_floors" = 0 ]; then
log "5/8 $records books: memory, restart, journal replay"
start_lyceum "$work/million" none
rss_empty=$(rss_kib "$lyceum_pid")
"$lyceum" bench --endpoint "$endpoint" --connections 4 --scenario book-create --in-flight "$concurrency" --warmup 0s \
  --requests "$records" --seed 7 --label "load $records books" --json --progress 10s >"$out/load-books.json" 2> >(grep --line-buffered -v '^ts=' >&2)
rss_full=$(rss_kib "$lyceum_pid")
stop_lyceum
start_lyceum "$work/million" none
restart_seconds=$ready_seconds
rss_replayed=$(rss_kib "$lyceum_pid")
stop_lyceum
journal=$(RECORDS=$records SECTIONS=replay JOURNAL_BENCH_BIN=$BIN_DIR/journal-bench Benchmarks/journal-bench.sh 2>/dev/null)
redis_load=$(awk '/redis AOF load/ { print $(NF-2) }' <<<"$journal")
redis_rss=$(awk '/redis AOF load/ { print $(NF-1) }' <<<"$journal")
journal_seconds=$(awk '/^journal replay/ { print $(NF-2) }' <<<"$journal")
lyceum_mib=$(awk -v k="$rss_replayed" 'BEGIN { printf "%.1f", k / 1024 }')
row "$records books: server restart (replay + first answer), s vs Redis AOF load" "$restart_seconds" "$redis_load" "$(divide "$restart_seconds" "$redis_load")"
row "$records records: journal layer replay alone (journal-bench), s vs Redis AOF load" "$journal_seconds" "$redis_load" "$(divide "$journal_seconds" "$redis_load")"
row "$records books: resident memory after restart, MiB vs Redis RSS ($records keys, 200 B values)" "$lyceum_mib" "$redis_rss" "$(divide "$lyceum_mib" "$redis_rss")"
row "$records books: resident memory while loading, MiB (empty server: $(awk -v k="$rss_empty" 'BEGIN { printf "%.1f", k / 1024 }'))" "$(awk -v k="$rss_full" 'BEGIN { printf "%.1f", k / 1024 }')" "$redis_rss" "$(divide "$(awk -v k="$rss_full" 'BEGIN { print k / 1024 }')" "$redis_rss")"
goal "#26 restart with $records books ≤ 1.0× Redis AOF load (to the first answer)" "$(divide "$restart_seconds" "$redis_load")×" "≤ 1.0×" "$(at_most "$(divide "$restart_seconds" "$redis_load")" 1)"
goal "#19 resident memory with $records books after restart ≤ 1.0× Redis" "$(divide "$lyceum_mib" "$redis_rss")×" "≤ 1.0×" "$(at_most "$(divide "$lyceum_mib" "$redis_rss")" 1)"
loading_memory=$(divide "$(awk -v k="$rss_full" 'BEGIN { print k / 1024 }')" "$redis_rss")
goal "#19 resident memory right after loading $records books ≤ 1.0× Redis" "${loading_memory}×" "≤ 1.0×" "$(at_most "$loading_memory" 1)"
fi

fi

# 5b. One learner's library (issue 40): what a `books list` page costs as that learner's library
# grows, and what one client paging the largest library without pause does to other learners' reads.
pages_ran=0 page_sorts=(title rating created) page_sorts_text="title, rating, created"
if [ "$only_nats" = 0 ] && [ "$only_cluster" = 0 ] && [ "$only_floors" = 0 ]; then
  pages_ran=1
  smallest=${library_sizes[0]} largest=${library_sizes[-1]}
  log "5b/8 one learner's library: list pages at ${library_sizes[*]} books; book reads at $pages_rate/s beside one client paging $largest books"
  # Until issue 40's limits, serve has no limit of books per learner; with them, 10,000 by default,
  # fewer than the largest library. An unknown LYCEUM_ variable stops serve (Configuration refuses it),
  # so the limit is raised by its flag, and only when `serve --help` lists it.
  limit_flags=()
  if "$lyceum" serve --help | grep -e --max-books-per-learner >/dev/null; then limit_flags=(--max-books-per-learner $((largest * 2))); fi
  start_lyceum "$work/pages" none "${limit_flags[@]}"
  # The seed names the learner (bench-SEED-0): bench-SIZE-0 holds SIZE books.
  for size in "${library_sizes[@]}"; do
    bench "library-$size" --scenario book-create --learners 1 --seed "$size" --in-flight "$concurrency" --requests "$size" --warmup 0s --timeout 60s
    [ "$(json "$out/library-$size.json" error_count)" = 0 ] ||
      { log "5b/8 the library of $size books was not created whole (see $out/library-$size.json)"; exit 1; }
  done
  # The first page and page 21 (its cursor followed once in setup), one request at a time.
  for size in "${library_sizes[@]}"; do
    for sort in "${page_sorts[@]}"; do
      for page in 1 21; do
        bench "pages-$size-$sort-$page" --scenario book-list --learners 1 --seed "$size" --list-sort "$sort" --list-page "$page" \
          --connections 1 --in-flight 1 --requests "$page_requests" --warmup 300ms --timeout 60s
      done
    done
  done
  # Book reads of 20 other learners' 200 books at a fixed rate, alone, then beside one connection
  # listing the largest library by title page after page (the first again after the last), one
  # page in flight, until it is stopped (SIGTERM: it answers what it sent and writes its results).
  bench pages-reads-alone --scenario book-read --learners 20 --books 200 --seed 40 --rate "$pages_rate" --duration "${run_seconds}s"
  "$lyceum" bench --endpoint "$endpoint" --scenario book-list --learners 1 --seed "$largest" --list-sort title --connections 1 --in-flight 1 \
    --duration "$((run_seconds * 3 + 60))s" --warmup 0s --timeout 60s --label "lister, $largest books by title" --json --progress 60s \
    >"$out/pages-lister.json" 2>>"$work/pages-lister.log" &
  extra_pids+=("$!")
  bench pages-reads-beside --scenario book-read --learners 20 --books 200 --seed 40 --rate "$pages_rate" --duration "${run_seconds}s"
  stop_extra
  stop_lyceum
  [ -s "$out/pages-lister.json" ] || { log "5b/8 the lister wrote no results:"; cat "$work/pages-lister.log" >&2; exit 1; }

  for page in 1 21; do
    what=$([ "$page" = 1 ] && echo "first page" || echo "page $page")
    worst_ratio=0 worst_sort=""
    for sort in "${page_sorts[@]}"; do
      large=$(json "$out/pages-$largest-$sort-$page.json" latency_us/p50) small=$(json "$out/pages-$smallest-$sort-$page.json" latency_us/p50)
      between=""
      for size in "${library_sizes[@]:1:${#library_sizes[@]}-2}"; do
        between+="${between:+; }$size books: $(ms "$(json "$out/pages-$size-$sort-$page.json" latency_us/p50)") ms"
      done
      ratio=$(divide "$large" "$small")
      row "books list by $sort, $what of 50, p50 ms: one learner with $largest books vs $smallest${between:+ ($between)}" "$(ms "$large")" "$(ms "$small")" "$ratio"
      if [ "$(at_most "$worst_ratio" "$ratio")" = 1 ]; then worst_ratio=$ratio worst_sort=$sort; fi
    done
    goal "#40 books list, $what at $largest books ≤ 3× at $smallest (p50, the slowest sort of $page_sorts_text)" "${worst_ratio}× (by $worst_sort)" "≤ 3×" "$(at_most "$worst_ratio" 3)"
  done
  lister_rate=$(printf %.1f "$(json "$out/pages-lister.json" requests_per_second)")
  # A read unanswered within lyceum bench's timeout (5 s) counts as timed_out, at that latency.
  failed_reads=""
  for run in alone beside; do
    failed=$(json "$out/pages-reads-$run.json" error_count)
    [ "$failed" = 0 ] || failed_reads+="; $failed of $(json "$out/pages-reads-$run.json" requests) reads $run failed, see pages-reads-$run.json"
  done
  for p in p50 p99; do
    alone=$(json "$out/pages-reads-alone.json" latency_us/$p) beside=$(json "$out/pages-reads-beside.json" latency_us/$p)
    row "book reads (get) of other learners at $pages_rate/s (open loop), $p ms: beside one client listing $largest books without pause ($lister_rate pages/s$failed_reads) vs alone" \
      "$(ms "$beside")" "$(ms "$alone")" "$(divide "$beside" "$alone")"
  done
  reads_ratio=$(divide "$(json "$out/pages-reads-beside.json" latency_us/p99)" "$(json "$out/pages-reads-alone.json" latency_us/p99)")
  goal "#40 other learners' book reads, p99 beside one client paging $largest books ≤ 3× alone" "${reads_ratio}×" "≤ 3×" "$(at_most "$reads_ratio" 3)"
fi

# 6. Beside NATS: the same catalog reads through a broker to a worker process, and acked writes.
nats_note=""
nats_missing=()
# Debian installs it in /usr/sbin, which a non-root PATH may lack.
nats_server=${NATS_SERVER:-$(command -v nats-server || echo /usr/sbin/nats-server)}
[ -x "$nats_server" ] || nats_missing+=(nats-server)
command -v go >/dev/null || nats_missing+=(go)
[ -d /usr/share/gocode/src/github.com/nats-io/nats.go ] || nats_missing+=(golang-github-nats-io-go-nats-dev)
nats_ran=0 floors_note=""
if [ "$only_cluster" = 1 ] || [ "$only_pages" = 1 ]; then
  log "6/8 skipped ($([ "$only_pages" = 1 ] && echo --only-pages || echo --only-cluster))"
elif [ ${#nats_missing[@]} -gt 0 ] && [ "$only_floors" = 0 ]; then
  nats_note="**NATS rows skipped: ${nats_missing[*]} not installed (\`scripts/ensure-deps.sh nats\`, which \`make bench\` runs).**"
  log "6/8 ${nats_note//\*/}"
  [ "$only_nats" = 0 ] || exit 1
else
  # --only-floors: the broker + worker run alone, for its floor (part 6b).
  if [ "$only_floors" = 0 ]; then
  nats_ran=1
  log "6/8 beside NATS: building Benchmarks/NATSLoad against Debian's nats.go (no network)"
  # GOPATH mode over Debian's packaged sources; a cache under the run's directory when the
  # environment names none (go refuses to run without one).
  [ -n "${GOCACHE:-}${XDG_CACHE_HOME:-}${HOME:-}" ] || export GOCACHE="$work/go-cache"
  GO111MODULE=off GOPATH=/usr/share/gocode GOPROXY=off GOFLAGS= go build -o "$work/natsload" ./Benchmarks/NATSLoad
  natsload=$work/natsload
  fi

  log "6/8 catalog reads through lyceum broker + lyceum worker --service catalog (separate processes)"
  endpoint="tcp://127.0.0.1:$(free_port)"
  "$lyceum" broker --endpoint "$endpoint" --events-endpoint none --log-level warning 2>>"$work/broker.log" &
  broker_pid=$!
  extra_pids+=("$broker_pid")
  "$lyceum" worker --broker "$endpoint" --service catalog --data "$work/worker" \
    --forwarder-endpoint "tcp://127.0.0.1:$(free_port)" --log-level warning 2>>"$work/worker.log" &
  worker_pid=$!
  extra_pids+=("$worker_pid")
  until "$lyceum" call --broker "$endpoint" --timeout 1000 catalog '{"op":"list_courses"}' >/dev/null 2>&1; do
    kill -0 "$broker_pid" 2>/dev/null && kill -0 "$worker_pid" 2>/dev/null || { log "broker or worker exited:"; cat "$work/broker.log" "$work/worker.log" >&2; exit 1; }
    sleep 0.05
  done
  # The responder answers what this worker answers: every course's get_course reply, byte for byte.
  catalog_replies "$endpoint" >"$work/courses.tsv"
  server_pids=("$broker_pid" "$worker_pid")
  bench worker-catalog-read --scenario catalog-read --in-flight "$concurrency" --duration "${run_seconds}s"
  measure_syscalls worker-catalog-read "$broker_pid,$worker_pid" lyceum_requests catalog-read
  worker_read_ran=1
  stop_extra

  # NATS (not with --only-floors; not indented, so that these lines stay as they were).
  if [ "$only_floors" = 0 ]; then

  nats_port=$(free_port)
  "$nats_server" -a 127.0.0.1 -p "$nats_port" -js -sd "$work/nats" >"$work/nats.log" 2>&1 &
  nats_pid=$!
  extra_pids+=("$nats_pid")
  nats_url="nats://127.0.0.1:$nats_port"
  until grep -q "Server is ready" "$work/nats.log" 2>/dev/null; do
    kill -0 "$nats_pid" 2>/dev/null || { log "nats-server exited:"; cat "$work/nats.log" >&2; exit 1; }
    sleep 0.05
  done
  "$natsload" respond -url "$nats_url" -subject lyceum.catalog -replies "$work/courses.tsv" 2>"$work/responder.log" &
  responder_pid=$!
  extra_pids+=("$responder_pid")
  until grep -q "responding on" "$work/responder.log" 2>/dev/null; do
    kill -0 "$responder_pid" 2>/dev/null || { log "the NATS responder exited:"; cat "$work/responder.log" "$work/nats.log" >&2; exit 1; }
    sleep 0.05
  done
  natsrun() {
    local name=$1; shift
    "$natsload" "$@" -url "$nats_url" -in-flight "$concurrency" -connections 4 -warmup "$warmup" -duration "${run_seconds}s" \
      -label "$name" >"$out/$name.json" || log "$name: some requests failed (see $out/$name.json)"
  }
  # nats_requests MODE OPTIONS… N: N requests of natsload MODE, as natsrun sends them (for measure_syscalls).
  nats_requests() {
    "$natsload" "${@:1:$#-1}" -url "$nats_url" -in-flight "$concurrency" -connections 4 -warmup 0s -duration 60s \
      -requests "${*: -1}" -label syscalls >/dev/null 2>>"$work/strace-runs.log"
  }
  log "6/8 NATS request/reply to a responder process"
  natsrun nats-request request -subject lyceum.catalog -replies "$work/courses.tsv" -server-pid "$nats_pid" -server-pid "$responder_pid"
  measure_syscalls nats-request "$nats_pid,$responder_pid" nats_requests request -subject lyceum.catalog -replies "$work/courses.tsv"
  log "6/8 JetStream file-stream publish+ack, 200 B"
  natsrun nats-jetstream jetstream -subject lyceum.bench -size 200 -server-pid "$nats_pid"
  measure_syscalls nats-jetstream "$nats_pid" nats_requests jetstream -subject lyceum.bench -size 200
  stop_extra

  log "6/8 book creates under --durability interval:60000"
  start_lyceum "$work/interval" interval:60000
  counted_bench lyceum_counters book-create-interval --scenario book-create --in-flight "$concurrency" --duration "${run_seconds}s"
  measure_syscalls book-create-interval "$lyceum_pid" lyceum_requests book-create
  stop_lyceum

  worker_rps=$(json "$out/worker-catalog-read.json" requests_per_second)
  nats_rps=$(json "$out/nats-request.json" requests_per_second)
  # Per request: lyceum broker + worker, nats-server + responder, each pair together.
  throughput_row "catalog reads through broker + worker process, req/s vs NATS request/reply via nats-server to a responder process" \
    worker-catalog-read nats-request
  for p in p50 p99; do
    row "broker + worker catalog-read $p, ms vs NATS request/reply $p" "$(ms "$(json "$out/worker-catalog-read.json" latency_us/$p)")" \
      "$(ms "$(json "$out/nats-request.json" latency_us/$p)")" "$(divide "$(json "$out/worker-catalog-read.json" latency_us/$p)" "$(json "$out/nats-request.json" latency_us/$p)")"
  done
  worker_cpu=$(cpu "$out/worker-catalog-read.json") nats_cpu=$(cpu "$out/nats-request.json")
  row "server CPU per catalog read, µs (lyceum broker + worker) vs per request (nats-server + responder)" "$worker_cpu" "$nats_cpu" "$(divide "$worker_cpu" "$nats_cpu")"
  interval_rps=$(json "$out/book-create-interval.json" requests_per_second)
  js_rps=$(json "$out/nats-jetstream.json" requests_per_second)
  throughput_row "book creates (interval:60000)$(journal_text book-create-interval), req/s vs JetStream file-stream publish+ack, 200 B" book-create-interval nats-jetstream
  row "book creates (interval:60000) p50, ms vs JetStream publish+ack p50" "$(ms "$(json "$out/book-create-interval.json" latency_us/p50)")" \
    "$(ms "$(json "$out/nats-jetstream.json" latency_us/p50)")" "$(divide "$(json "$out/book-create-interval.json" latency_us/p50)" "$(json "$out/nats-jetstream.json" latency_us/p50)")"
  interval_cpu=$(cpu "$out/book-create-interval.json") js_cpu=$(cpu "$out/nats-jetstream.json")
  row "server CPU per create (interval), µs (lyceum serve) vs per JetStream publish (nats-server)" "$interval_cpu" "$js_cpu" "$(divide "$interval_cpu" "$js_cpu")"
  goal "#26 request/reply through worker processes ≥ 1.0× NATS" "$(divide "$worker_rps" "$nats_rps")×" "≥ 1.0×" "$(at_most 1 "$(divide "$worker_rps" "$nats_rps")")"
  goal "#26 server CPU per request/reply ≤ NATS's" "$(divide "$worker_cpu" "$nats_cpu")×" "≤ 1.0×" "$(at_most "$(divide "$worker_cpu" "$nats_cpu")" 1)"
  goal "#26 writes under interval ≥ 1.0× JetStream publish+ack" "$(divide "$interval_rps" "$js_rps")×" "≥ 1.0×" "$(at_most 1 "$(divide "$interval_rps" "$js_rps")")"
  fi
fi

# 6b. The floors (issue 38, Benchmarks/floors.sh): not in --quick unless --only-floors.
if [ "$floors" = 1 ]; then
  log "6b/8 the floors: C servers over libzmq doing the least each request needs"
  run_floors
elif [ "$quick" = 1 ] && [ $((only_nats + only_cluster + only_pages)) = 0 ]; then
  floors_note="**Floors (part 6b) not measured in --quick: \`Benchmarks/suite.sh --quick --only-floors\` measures them.**"
fi

# 7. Scale-out: Benchmarks/cluster-bench.sh writes cluster.md, cluster.json and cluster.svg beside these.
if [ "$only_nats" = 0 ] && [ "$only_pages" = 0 ] && [ "$only_floors" = 0 ] && [ "$no_cluster" = 0 ]; then
  log "7/8 scale-out: writes with 1, 2, 4 partitioned worker processes; one broker's routing ceiling"
  BIN_DIR=$BIN_DIR OUT=$out RUN_SECONDS=$run_seconds CONCURRENCY=$concurrency Benchmarks/cluster-bench.sh \
    $([ "$quick" = 1 ] && echo --quick) >/dev/null
  cluster() { json "$out/cluster.json" "$1"; }
  for index in 1 2; do
    workers=$(cluster "writes/$index/workers")
    row "durable book creates through one broker --partitions 16, writes/s: $workers worker processes vs 1" \
      "$(printf %.0f "$(cluster "writes/$index/requests_per_second")")" "$(printf %.0f "$(cluster writes/0/requests_per_second)")" \
      "$(divide "$(cluster "writes/$index/requests_per_second")" "$(cluster writes/0/requests_per_second)")"
  done
  partitioned_ceiling=$(cluster routing/partitioned/ceiling_requests_per_second)
  unpartitioned_ceiling=$(cluster routing/unpartitioned/ceiling_requests_per_second)
  row "one broker's routing ceiling (1 s ÷ broker CPU per request), req/s: --partitions 16 vs unpartitioned" \
    "$(printf %.0f "$partitioned_ceiling")" "$(printf %.0f "$unpartitioned_ceiling")" "$(divide "$partitioned_ceiling" "$unpartitioned_ceiling")"
fi

# 8. Replication (issue 25, Benchmarks/replication-bench.sh): writes at R = 1 and R = 3 and the
# fail-over of a leader's host over 10 kills, beside NATS JetStream R3; replication.md in OUT. Not in
# --quick: it needs root, etcd, nats-server and a quarter of an hour of kills.
replication_note=""
if [ "$only_nats" = 0 ] && [ "$only_pages" = 0 ] && [ "$only_floors" = 0 ] && [ "$no_cluster" = 0 ] && [ "$quick" = 0 ]; then
  if [ "$(id -u)" -ne 0 ] || [ ${#nats_missing[@]} -gt 0 ] || ! command -v etcd >/dev/null; then
    replication_note="**Replication rows skipped: they need root, etcd and nats-server, go and nats.go (\`scripts/ensure-deps.sh test nats\`).**"
    log "8/8 ${replication_note//\*/}"
  else
    log "8/8 replication: writes at R = 1 and R = 3, fail-over over ${KILLS:-10} kills of a leader's host, beside JetStream R3"
    BIN_DIR=$BIN_DIR OUT=$out RUN_SECONDS=$run_seconds CONCURRENCY=$concurrency Benchmarks/replication-bench.sh >/dev/null
    replication() { json "$out/replication.json" "$1"; }
    lyceum_rate=$(replication lyceum/throughput/3/writes_per_second) js_rate=$(replication jetstream/throughput/publishes_per_second)
    row "durable book creates at R = 3, writes/s vs JetStream R3 publishes/s with acks, $concurrency in flight" \
      "$(printf %.0f "$lyceum_rate")" "$(printf %.0f "$js_rate")" "$(divide "$lyceum_rate" "$js_rate")"
    row "durable book creates, writes/s: R = 3 vs R = 1 (the cost of replication)" \
      "$(printf %.0f "$lyceum_rate")" "$(printf %.0f "$(replication lyceum/throughput/1/writes_per_second)")" \
      "$(divide "$lyceum_rate" "$(replication lyceum/throughput/1/writes_per_second)")"
    lyceum_cpu=$(printf %.1f "$(replication lyceum/throughput/3/server_cpu_us_per_write)") js_cpu=$(printf %.1f "$(replication jetstream/throughput/server_cpu_us_per_publish)")
    row "server CPU per write at R = 3, µs (workers + brokers) vs per JetStream R3 publish (3 nats-servers)" "$lyceum_cpu" "$js_cpu" "$(divide "$lyceum_cpu" "$js_cpu")"
    for figure in p50 max; do
      lyceum_gap=$(printf %.2f "$(replication lyceum/failover/summary/$figure)") js_gap=$(printf %.2f "$(replication jetstream/failover/summary/$figure)")
      row "fail-over $figure, s, kill -9 of the leader's host (longest gap between acknowledgements) vs JetStream R3" "$lyceum_gap" "$js_gap" "$(divide "$lyceum_gap" "$js_gap")"
    done
    row "acknowledged writes lost over the kills vs JetStream R3 (every acknowledged write read back)" \
      "$(replication lyceum/failover/lost) of $(replication lyceum/failover/acknowledged)" "$(replication jetstream/failover/lost) of $(replication jetstream/failover/acknowledged)" ""
  fi
fi

charts=()
if [ "$only_nats" = 0 ] && [ "$only_cluster" = 0 ] && [ "$only_pages" = 0 ] && [ "$only_floors" = 0 ]; then
  "$lyceum" bench plot "$out/reads.svg" "$out/catalog-read.json" "$out/book-read.json" "$out/curve-book-read.json" "$out/book-read-open.json" "$out/redis-get.json"
  "$lyceum" bench plot "$out/writes.svg" "$out/book-create.json" "$out/book-update.json" "$out/progress-watch.json" "$out/curve-book-create.json" "$out/redis-set-always.json"
  charts+=(reads writes)
fi
if [ "$pages_ran" = 1 ]; then
  "$lyceum" bench plot "$out/pages.svg" "$out/pages-reads-alone.json" "$out/pages-reads-beside.json" "$out/pages-lister.json"
  charts+=(pages)
fi
if [ "$nats_ran" = 1 ]; then
  "$lyceum" bench plot "$out/nats.svg" "$out/worker-catalog-read.json" "$out/nats-request.json" "$out/book-create-interval.json" "$out/nats-jetstream.json"
  charts+=(nats)
fi
load_after=$(cut -d' ' -f1-3 /proc/loadavg)

{
  echo "# Lyceum benchmark results, $(date -u '+%F %H:%M UTC')"
  echo
  echo "Machine: $(nproc) cores ($(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo)), $(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo),"
  echo "$(uname -sr), $(redis-server --version | cut -d' ' -f1-3), commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)."
  echo "Load average $load_before at the start, $load_after at the end: clients, server and Redis share the machine."
  echo "$([ "$quick" = 1 ] && echo "**Quick mode: tiny counts, figures are not meaningful.**")"
  [ -z "$nats_note" ] || echo "$nats_note"
  [ "$only_nats" = 0 ] || echo "**Only part 6 (\`--only-nats\`): the NATS rows and the Lyceum rows beside them.**"
  [ "$only_cluster" = 0 ] || echo "**Only part 7 and part 8 (\`--only-cluster\`): the scale-out and replication rows.**"
  [ "$only_pages" = 0 ] || echo "**Only part 5b (\`--only-pages\`): one learner's library.**"
  [ "$only_floors" = 0 ] || echo "**Only the rows with a floor (\`--only-floors\`): parts 2, 3, 3b, 3c for creates and reads, 6's broker + worker, 6b.**"
  [ -z "$floors_note" ] || echo "$floors_note"
  [ -z "$replication_note" ] || echo "$replication_note"
  [ "$no_cluster" = 0 ] || echo "**Without parts 7 and 8 (\`--no-cluster\`): no scale-out or replication rows.**"
  [ -z "$syscalls_note" ] || echo "$syscalls_note"
  [ -z "$instructions_note" ] || echo "$instructions_note"
  [ "$only_nats" = 1 ] || [ "$only_pages" = 1 ] || [ "$only_floors" = 1 ] || [ "$no_cluster" = 1 ] || echo "Scale-out (part 7): one \`lyceum broker --partitions 16\` and partitioned worker processes; every point, its load average and CPU per write in [cluster.md](cluster.md)."
  [ "$only_nats" = 1 ] || [ "$only_pages" = 1 ] || [ "$only_floors" = 1 ] || [ "$no_cluster" = 1 ] || [ "$quick" = 1 ] || [ -n "$replication_note" ] || echo "Replication (part 8): R = 1 vs R = 3 and fail-over beside JetStream R3, every kill and the timeline in [replication.md](replication.md)."
  echo
  echo "Lyceum runs as one \`lyceum serve\` process (the broker answers catalog, books and progress itself; journals under \`always\`), driven by"
  echo "\`lyceum bench\` with 4 connections, ${run_seconds} s per run after a $warmup warm-up; Redis by \`redis-benchmark\` (200-byte values)."
  echo "Beside NATS ($("$nats_server" --version 2>/dev/null || echo "not installed")): \`lyceum broker\` and \`lyceum worker --service catalog\` as separate processes vs"
  echo "nats-server and a responder process (\`Benchmarks/NATSLoad\`, Go, Debian's nats.go, 4 connections, same in flight and times)."
  echo "Server CPU per request: utime+stime of the server processes (\`/proc/PID/stat\`) over the measured interval ÷ measured"
  echo "requests (for Redis, over the whole \`redis-benchmark\` run), so the server's cost shows apart from the load generator's."
  echo "Per request, beside each throughput row, Lyceum vs its reference (issue 26): system calls (\`strace -c -f\` on every thread"
  echo "of the server during a separate run of $strace_requests requests less one of 100, so set-up cancels; strace slows every call,"
  echo "which changes how many requests a wake-up carries: figures to compare between runs measured alike, not exact counts),"
  echo "context switches voluntary/involuntary (every thread's, \`/proc/PID/task/*/status\`, over the"
  echo "throughput run itself; for Redis over the whole \`redis-benchmark\` run; of broker + worker and nats-server + responder together"
  echo "in part 6) and instructions (\`Benchmarks/request-cost.sh\`:"
  echo "\`serve\` under callgrind, 6,000 requests less 2,000)."
  if [ "$floors" = 1 ]; then
    echo "Floors (part 6b, issue 38): \`Benchmarks/floors/floor_server.c\`, one ROUTER in C over libzmq, driven by the same \`lyceum bench\`: it reads the 7/MDP"
    echo "frames, finds the op without parsing the JSON, answers reads at once from memory, and for a write appends a ~400-byte JSON line"
    echo "(CRC-32 of its value) by one \`pwrite\`, then, with \`--sync\` (the floor of \`always\` rows), one \`fdatasync\` for all a wake-up brought"
    echo "(up to 256 messages) before their replies; the hop's floor is \`mdp_reference\` (the C broker and 16 C workers, one process,"
    echo "two libzmq contexts over TCP) answering the catalog from serve's replies. Journal records / fdatasyncs per request: serve's"
    echo "\`lyceum_journal_appends_total\` and \`lyceum_journal_syncs_total\` over \`lyceum_requests_total\`, the floor's own counters, over each run and its warm-up."
  fi
  echo
  echo "| Measurement | Lyceum | Reference | Ratio | System calls / request | Context switches / request | Instructions / request |"
  echo "|---|---:|---:|---:|---:|---:|---:|"
  printf '%s\n' "${rows[@]}"
  echo
  if [ "$pages_ran" = 1 ]; then
    echo "Part 5b (\`serve --durability none\`): \`books list\` pages of 50 of one learner, ms p50 / p99 of $page_requests requests each, one at a time:"
    echo
    echo "| Books of the learner | Sort | First page | Page 21 |"
    echo "|---:|---|---:|---:|"
    for size in "${library_sizes[@]}"; do
      for sort in "${page_sorts[@]}"; do
        cells=()
        for page in 1 21; do
          cells+=("$(ms "$(json "$out/pages-$size-$sort-$page.json" latency_us/p50)") / $(ms "$(json "$out/pages-$size-$sort-$page.json" latency_us/p99)")")
        done
        echo "| $size | $sort | ${cells[0]} | ${cells[1]} |"
      done
    done
    echo
    p50_p99() { echo "$(ms "$(json "$out/$1.json" latency_us/p50)") / $(ms "$(json "$out/$1.json" latency_us/p99)")"; }
    echo "Book reads of other learners at $pages_rate/s, p50 / p99 ms: alone $(p50_p99 pages-reads-alone), beside the lister $(p50_p99 pages-reads-beside)."
    echo "The lister (${library_sizes[-1]} books by title, one page in flight, every page in turn): $(json "$out/pages-lister.json" requests) pages, p50 / p99 $(p50_p99 pages-lister) ms."
    echo
  fi
  syscall_runs=(catalog-read book-read redis-get book-create book-update progress-watch redis-set-always
    worker-catalog-read nats-request book-create-interval nats-jetstream floor-catalog-read floor-book-read floor-book-create
    floor-book-update floor-progress-watch floor-worker-catalog-read)
  if [ -n "$(for run in "${syscall_runs[@]}"; do [ -s "$out/$run.syscalls" ] && echo "$run"; done)" ]; then
    echo "System calls per request by name (those at 0.01 or more, most first):"
    echo
    echo "| Run | All | By name |"
    echo "|---|---:|---|"
    for run in "${syscall_runs[@]}"; do
      [ -s "$out/$run.syscalls" ] || continue
      echo "| $run | $(syscalls_of "$run") | $(awk '$1 != "all" { printf "%s%s %s", sep, $1, $2; sep = ", " }' "$out/$run.syscalls") |"
    done
    echo
  fi
  echo "| Goal | Figure | Target | Verdict |"
  echo "|---|---|---|---|"
  printf '%s\n' "${goals[@]}"
  echo
  for chart in "${charts[@]}"; do echo "![$chart]($chart.svg)"; echo; done
} >"$out/results.md"
cat "$out/results.md"
