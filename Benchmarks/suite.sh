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

# The suite in sections, each a sourced file of functions: Benchmarks/common.sh (free ports, JSON
# members, stopping processes), syscalls.sh and floors.sh (shared with other scripts), then
# Benchmarks/suite/: servers.sh, figures.sh (rows and goals), and one file per group of parts.
source Benchmarks/common.sh
# System calls (strace) and context switches per request of a server process.
source Benchmarks/syscalls.sh
# The floors and the journal counters of write rows (issue 38).
source Benchmarks/floors.sh
for section in servers figures soak single-server pages nats cluster report; do source "Benchmarks/suite/$section.sh"; done

lyceum=$BIN_DIR/lyceum
work=$(mktemp -d "${TMPDIR:-/tmp}/lyceum-suite.XXXXXX")
redis_pid="" lyceum_pid="" server_pids=() extra_pids=() worker_read_ran=0
trap 'stop_strace; stop_lyceum; stop_floor; stop_redis; stop_extra; rm -rf "$work"' EXIT

rows=() goals=() client_keys=()
syscalls_note="" instructions_note=""
[ -x /usr/bin/strace ] || command -v strace >/dev/null || syscalls_note="**System calls per request not measured: strace is not installed (\`scripts/ensure-deps.sh bench\`).**"

load_before=$(cut -d' ' -f1-3 /proc/loadavg)
log "results in $out; load average $load_before"

if [ "$soak" != 0 ]; then
  run_soak
  exit 0
fi

# Parts 1–5.
if [ "$only_nats" = 0 ] && [ "$only_cluster" = 0 ] && [ "$only_pages" = 0 ]; then
  # Parts 1 and 1b have no floor (--only-floors leaves them out).
  if [ "$only_floors" = 0 ]; then
    part_zeromq
    part_majordomo
  fi
  part_instructions
  part_reads_and_writes
  part_curve
  if [ "$only_floors" = 0 ]; then part_memory; fi
fi

pages_ran=0 page_sorts=(title rating created) page_sorts_text="title, rating, created"
if [ "$only_nats" = 0 ] && [ "$only_cluster" = 0 ] && [ "$only_floors" = 0 ]; then
  part_pages
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
  part_beside_nats
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
  part_scale_out
fi

# 8. Replication (issue 25, Benchmarks/replication-bench.sh): writes at R = 1 and R = 3 and the
# fail-over of a leader's host over 10 kills, beside NATS JetStream R3; replication.md in OUT. Not in
# --quick: it needs root, etcd, nats-server and a quarter of an hour of kills.
replication_note=""
if [ "$only_nats" = 0 ] && [ "$only_pages" = 0 ] && [ "$only_floors" = 0 ] && [ "$no_cluster" = 0 ] && [ "$quick" = 0 ]; then
  part_replication
fi

plot_charts
load_after=$(cut -d' ' -f1-3 /proc/loadavg)

write_results
cat "$out/results.md"
