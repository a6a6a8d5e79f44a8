#!/usr/bin/env bash
# The cost of replication and the fail-over of a replicated partition (issue 25), beside NATS
# JetStream R3, in one run:
#   1. Durable writes/s and server CPU per write at R = 1 and R = 3: `lyceum bench --scenario
#      book-create` (durability always, 16 partitions, CONCURRENCY in flight) against three worker
#      hosts and a broker, the CPU of every worker and broker process (utime+stime from
#      /proc/PID/stat over the measured interval) ÷ measured writes.
#   2. Fail-over: WRITERS retrying writers (Benchmarks/failover_writers.py) create books for
#      learners of books.p0, each write retried with its request_id until acknowledged, while the
#      host leading books.p0 is killed (kill -9 of everything on it) KILLS times, restarted after
#      each kill, and the replicas left to converge. The fail-over of a kill is the longest gap
#      between two acknowledgements from the last one before the kill to the first one after the
#      restart (a reply sent just before the kill may arrive after it). Every acknowledged write is
#      read back at the end: the lost ones are counted.
#   3. NATS JetStream R3 the same way: three nats-servers (JetStream, file storage) in namespaces of
#      their own, a file stream of 3 replicas; publishes/s and nats-server CPU per publish with the
#      same in-flight count (Benchmarks/NATSLoad jetstream); then WRITERS publishers publishing with
#      acks and retries (message ids: a retry is de-duplicated), the stream leader's server killed
#      KILLS times, restarted, the stream left to settle; the stream read back, the lost counted.
#   4. Like for like (issue 34): R = 3 again under `interval:INTERVAL_MS` (default 50) and `none`,
#      where a majority has a write in memory rather than on disk (JetStream 2.9's class), each row
#      with fdatasyncs and records appended per write on each replica and records per replication
#      message, from the workers' own counters (Benchmarks/replication_counts.py), beside JetStream.
# Prints a table of both side by side with their ratios; writes OUT/replication.md, .json, the
# fail-over timeline (replication-failover.svg), the kills' times and the JSON of every run (the
# acknowledgement times, megabytes, stay in a temporary directory removed on exit).
#
# Where the Lyceum cluster runs: deploy/netns-cluster.sh, when it takes `--replicas` (R = 1 and
# R = 3 both there, CURVE on); otherwise, for both R, the way the end-to-end test starts replicas:
# one etcd, one `lyceum broker --partitions 16` and three `lyceum worker` processes on loopback
# (the workers stand for the hosts: a kill is kill -9 of one worker process). REPLICATION_CLUSTER=netns
# or loopback chooses.
#
# Usage: Benchmarks/replication-bench.sh [--quick]
#   --quick   2 kills, 3 s per throughput run: a trial of the whole path, figures not meaningful
# Environment: BIN_DIR (lyceum built; else a release build), OUT (default bench-results/<date>),
# KILLS (default 10), RUN_SECONDS (default 10), CONCURRENCY (default 50), WRITERS (default 8),
# LEASE_TTL / LEASE_KEEP_ALIVE / LEASE_RETRY (loopback workers; default: the worker's defaults),
# PREFIX (namespaces, default lycrb-), NATS_SUBNET (default 10.93.0), CLUSTER_SUBNET (10.94.0),
# NATS_SERVER. Needs root (namespaces), etcd, nats-server, go and Debian's nats.go
# (scripts/ensure-deps.sh test nats).
set -euo pipefail
cd "$(dirname "$0")/.."

quick=0
case "${1:-}" in
  --quick) quick=1 ;;
  "") ;;
  *) echo "usage: Benchmarks/replication-bench.sh [--quick]" >&2; exit 2 ;;
esac
if [ "$quick" = 1 ]; then
  kills=${KILLS:-2} run_seconds=${RUN_SECONDS:-3} warmup=1s
else
  kills=${KILLS:-10} run_seconds=${RUN_SECONDS:-10} warmup=2s
fi
concurrency=${CONCURRENCY:-50}
writers=${WRITERS:-8}
partitions=16
learners=2000
prefix=${PREFIX:-lycrb-}
nats_subnet=${NATS_SUBNET:-10.93.0}
cluster_subnet=${CLUSTER_SUBNET:-10.94.0}
out=${OUT:-bench-results/$(date -u +%F)}
mkdir -p "$out"
[ "$(id -u)" -eq 0 ] || { echo "replication-bench: needs root (network namespaces)" >&2; exit 1; }
nats_server=${NATS_SERVER:-$(command -v nats-server || echo /usr/sbin/nats-server)}
[ -x "$nats_server" ] || { echo "replication-bench: no nats-server (scripts/ensure-deps.sh nats)" >&2; exit 1; }
if [ -z "${BIN_DIR:-}" ]; then
  swift build -c release --product lyceum >&2
  BIN_DIR=$(swift build -c release --show-bin-path)
fi
lyceum=$(cd "$BIN_DIR" && pwd)/lyceum
if [ -z "${REPLICATION_CLUSTER:-}" ]; then
  REPLICATION_CLUSTER=loopback
  if deploy/netns-cluster.sh --help | grep -q -- '--replicas'; then REPLICATION_CLUSTER=netns; fi
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/lyceum-replication.XXXXXX")
log() { echo "replication-bench: $*" >&2; }
source Benchmarks/common.sh

# --- namespaces of this benchmark (NATS; and Lyceum's loopback processes need none) ---------
# The NATS hosts' network: deploy/netns-network.sh's, as the netns Lyceum cluster's.
source deploy/netns-network.sh
ns_made=()
# ns_up NAME SUBNET HOST=OCTET…: a switch namespace and one namespace per host on its bridge.
ns_up() {
  local name=$1 subnet=$2 pair hosts=()
  shift 2
  ns_made+=("${prefix}$name-sw")
  for pair in "$@"; do hosts+=("${pair%=*}:${prefix}$name-${pair%=*}:$subnet.${pair#*=}"); ns_made+=("${prefix}$name-${pair%=*}"); done
  netns_network_up "${prefix}$name-sw" "${hosts[@]}"
}
# kill -9 of every process in namespace $1; returns once none is left.
ns_kill() { netns_kill 0 "$1" >/dev/null; }
ns_down() {
  local ns
  for ns in "${ns_made[@]}"; do ns_kill "$ns"; done
  for ns in "${ns_made[@]}"; do ip netns del "$ns" 2>/dev/null || true; done
  ns_made=()
}

pids=()
lyceum_down() { :; }
cleanup() { stop_processes "${pids[@]}"; lyceum_down; ns_down; rm -rf "$work"; }
trap cleanup EXIT

# --- the fail-over loop, for both systems ------------------------------------------------------
# failover_loop NAME LEADER_FN KILL_FN RESTART_FN SETTLED_FN PROGRESS_FILE: KILLS rounds of: the leader's host
# (LEADER_FN prints it), its kill (time recorded), 3 s after another host leads, its restart
# (time recorded) and settling (SETTLED_FN HOST returns once the replicas have converged); the
# times go to OUT/replication-NAME-kills.csv. Each kill waits until the writers are acknowledged
# again (PROGRESS_FILE, their count of acknowledgements, grows), so that no kill lands in the
# previous one's gap.
acknowledged_again() {
  local before deadline=$((SECONDS + 120))
  before=$(cat "$1" 2>/dev/null || echo 0)
  until [ "$(cat "$1" 2>/dev/null || echo 0)" -gt "$before" ]; do
    [ $SECONDS -lt $deadline ] || { log "no acknowledgement for 120 s; killing anyway"; return 0; }
    sleep 0.2
  done
}
failover_loop() {
  local name=$1 leader_of=$2 kill_host=$3 restart_host=$4 settled=$5 progress=$6 round host killed restarted
  echo "round,host,killed_at,restarted_at" >"$out/replication-$name-kills.csv"
  for ((round = 1; round <= kills; round++)); do
    acknowledged_again "$progress"
    host=$($leader_of)
    killed=$(now)
    $kill_host "$host"
    until [ "$($leader_of)" != "$host" ]; do sleep 0.2; done
    sleep 3
    restarted=$(now)
    $restart_host "$host"
    $settled "$host"
    echo "$round,$host,$killed,$restarted" >>"$out/replication-$name-kills.csv"
    log "$name: kill $round/$kills of $host done"
    sleep 2
  done
}

# --- 1. NATS JetStream R3 ------------------------------------------------------------------------
log "JetStream R3: $("$nats_server" --version) in namespaces ${prefix}js-n1…n3 ($nats_subnet.0/24)"
[ -n "${GOCACHE:-}${XDG_CACHE_HOME:-}${HOME:-}" ] || export GOCACHE="$work/go-cache"
GO111MODULE=off GOPATH=/usr/share/gocode GOPROXY=off GOFLAGS= go build -o "$work/natsload" ./Benchmarks/NATSLoad
natsload=$work/natsload
ns_up js "$nats_subnet" n1=51 n2=52 n3=53 c1=31
nats_hosts=(n1 n2 n3)
nats_address() { case "$1" in n1) echo "$nats_subnet.51" ;; n2) echo "$nats_subnet.52" ;; n3) echo "$nats_subnet.53" ;; esac; }
nats_urls=$(for host in "${nats_hosts[@]}"; do printf 'nats://%s:4222,' "$(nats_address "$host")"; done | sed 's/,$//')
# sync_interval (fsync on every write) exists from nats-server 2.10; 2.9 syncs every 2 minutes.
nats_sync="default (every 2 min: 2.9 has no sync_interval)"
for host in "${nats_hosts[@]}"; do
  mkdir -p "$work/nats/$host"
  {
    echo "server_name: $host"
    echo "listen: $(nats_address "$host"):4222"
    echo "jetstream { store_dir: \"$work/nats/$host/js\" }"
    echo "cluster { name: lycrb, listen: $(nats_address "$host"):6222, routes: [$(for other in "${nats_hosts[@]}"; do
      [ "$other" = "$host" ] || printf 'nats-route://%s:6222, ' "$(nats_address "$other")"; done | sed 's/, $//')] }"
  } >"$work/nats/$host/nats.conf"
done
if printf 'jetstream { store_dir: "%s", sync_interval: always }\n' "$work/nats/probe" >"$work/nats/probe.conf" \
    && "$nats_server" -c "$work/nats/probe.conf" -t >/dev/null 2>&1; then
  nats_sync="always"
  for host in "${nats_hosts[@]}"; do sed -i "s|^jetstream { store_dir: \(.*\) }|jetstream { store_dir: \1, sync_interval: always }|" "$work/nats/$host/nats.conf"; done
fi
nats_start() {
  ip netns exec "${prefix}js-$1" setsid "$nats_server" -c "$work/nats/$1/nats.conf" </dev/null >>"$work/nats/$1/nats.log" 2>&1 &
  echo $! >"$work/nats/$1/pid"
  # Killed with its namespace's other processes (ns_kill), never waited for.
  disown $!
}
nats_client() { ip netns exec "${prefix}js-c1" "$natsload" "$@"; }
nats_leader() { nats_client leader -url "$nats_urls" -stream LYCRB -subject lycrb.writes -timeout 60s; }
nats_kill() { ns_kill "${prefix}js-$1"; }
nats_settled() { nats_client leader -url "$nats_urls" -stream LYCRB -subject lycrb.writes -settled -timeout 120s >/dev/null; }
for host in "${nats_hosts[@]}"; do nats_start "$host"; done
# Ready when JetStream takes a stream of 3 replicas (its meta leader elected).
until nats_client jetstream -url "$nats_urls" -stream LYCRB -subject lycrb.writes -replicas 3 -in-flight 1 -connections 1 \
    -warmup 0s -duration 100ms >/dev/null 2>&1; do
  sleep 0.5
  for host in "${nats_hosts[@]}"; do kill -0 "$(cat "$work/nats/$host/pid")" 2>/dev/null || { log "nats-server on $host exited:"; tail "$work/nats/$host/nats.log" >&2; exit 1; }; done
done
nats_pids=()
for host in "${nats_hosts[@]}"; do nats_pids+=(-server-pid "$(cat "$work/nats/$host/pid")"); done
log "JetStream R3: publish+ack of 200 B, $concurrency in flight, ${run_seconds} s"
load_before=$(loadavg)
nats_client jetstream -url "$nats_urls" -stream LYCRB -subject lycrb.writes -replicas 3 -size 200 -in-flight "$concurrency" \
  -connections 4 -warmup "$warmup" -duration "${run_seconds}s" -label "JetStream R3 publish+ack" "${nats_pids[@]}" \
  >"$out/replication-jetstream.json" || log "JetStream R3: some publishes failed (see $out/replication-jetstream.json)"
nats_load="$load_before → $(loadavg)"
log "JetStream R3 fail-over: $writers retrying publishers, $kills kills of the stream leader's server"
ip netns exec "${prefix}js-c1" "$natsload" failover -url "$nats_urls" -stream LYCRB -subject lycrb.writes -replicas 3 -publishers "$writers" -size 200 \
  -acks "$work/jetstream-acks.txt" -progress "$work/jetstream-progress" >"$out/replication-jetstream-failover.json" 2>"$work/nats-failover.log" &
failover_pid=$!
pids+=("$failover_pid")
until grep -q publishing "$work/nats-failover.log" 2>/dev/null; do kill -0 "$failover_pid" || { cat "$work/nats-failover.log" >&2; exit 1; }; sleep 0.2; done
sleep 2
failover_loop jetstream nats_leader nats_kill nats_start nats_settled "$work/jetstream-progress"
kill -TERM "$failover_pid"
wait "$failover_pid" || { log "the JetStream publishers failed: $(tail -n 3 "$work/nats-failover.log")"; exit 1; }
pids=()
ns_down

# --- 2. Lyceum, R = 1 and R = 3 --------------------------------------------------------------------
log "Lyceum cluster: $REPLICATION_CLUSTER"
source Benchmarks/replication-cluster.sh

lyceum_points=()
interval_ms=${INTERVAL_MS:-50}
# R = 1 and R = 3 under `always` are the report's main rows (R = 3's fail-over with them); R = 3
# under `interval` and `none` (a majority has a write in memory, not on disk: JetStream 2.9's
# class) are the rows of "like for like".
for run in "1 always" "3 always" "3 interval:$interval_ms" "3 none"; do
  read -r replicas durability <<<"$run"
  name="r$replicas"
  [ "$durability" = always ] || name="r$replicas-${durability%%:*}"
  log "Lyceum R = $replicas, durability $durability: starting the cluster"
  lyceum_up "$replicas" "$durability"
  log "Lyceum R = $replicas, durability $durability: book creates, $concurrency in flight, ${run_seconds} s"
  server=() threads=()
  for pid in $(lyceum_worker_pids) $(lyceum_broker_pids); do server+=(--server-pid "$pid"); done
  for pid in $(lyceum_worker_pids); do threads+=("worker@$pid=$pid"); done
  for pid in $(lyceum_broker_pids); do threads+=("broker@$pid=$pid"); done
  mapfile -t metrics < <(lyceum_metrics)
  counts=("${client_prefix[@]}" env METRICS_TOKEN_FILE="$(metrics_token_file)" /usr/bin/python3 Benchmarks/replication_counts.py)
  # Every thread's switches and CPU, and the workers' journal and replication counters, from the
  # warm-up's end to the run's (Benchmarks/thread_switches.py, Benchmarks/replication_counts.py).
  (sleep "${warmup%s}"; /usr/bin/python3 Benchmarks/thread_switches.py snap "$work/threads-$name-0.json" "${threads[@]}"
   "${counts[@]}" snap "$work/counts-$name-0.json" "${metrics[@]}") &
  snapshot_pid=$!
  load_before=$(loadavg)
  lyceum_client "$lyceum" bench "${bench_brokers[@]}" "${bench_keys[@]}" --connections 4 --in-flight "$concurrency" \
    --duration "${run_seconds}s" --warmup "$warmup" --learners "$learners" --scenario book-create --json \
    --label "Lyceum R=$replicas $durability book-create" "${server[@]}" >"$out/replication-lyceum-$name.json" 2> >(grep --line-buffered -v '^ts=' >&2) \
    || log "R = $replicas ($durability): some writes failed (see $out/replication-lyceum-$name.json)"
  /usr/bin/python3 Benchmarks/thread_switches.py snap "$work/threads-$name-1.json" "${threads[@]}"
  "${counts[@]}" snap "$work/counts-$name-1.json" "${metrics[@]}"
  wait "$snapshot_pid"
  requests=$(/usr/bin/python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["requests"])' "$out/replication-lyceum-$name.json")
  /usr/bin/python3 Benchmarks/thread_switches.py diff "$work/threads-$name-0.json" "$work/threads-$name-1.json" "$requests" \
    >"$out/replication-threads-$name.md"
  /usr/bin/python3 Benchmarks/replication_counts.py diff "$work/counts-$name-0.json" "$work/counts-$name-1.json" "$requests" \
    >"$out/replication-counts-$name.json"
  if [ "$durability" = always ]; then
    lyceum_points+=("{\"replicas\": $replicas, \"file\": \"replication-lyceum-r$replicas.json\", \"workers\": [$(lyceum_worker_pids | tr ' ' '\n' | grep . | paste -sd,)], \"brokers\": [$(lyceum_broker_pids | tr ' ' '\n' | grep . | paste -sd,)], \"load\": \"$load_before → $(loadavg)\"}")
  fi
  if [ "$name" = r3 ]; then
    log "Lyceum R = 3 fail-over: $writers retrying writers on books.p0, $kills kills of its leader's host"
    "${client_prefix[@]}" /usr/bin/python3 Benchmarks/failover_writers.py "${writer_brokers[@]}" "${writer_keys[@]}" --partitions "$partitions" \
      --partition 0 --writers "$writers" --acks "$work/lyceum-acks.txt" --progress "$work/lyceum-progress" >"$out/replication-lyceum-failover.json" 2>"$work/lyceum-failover.log" &
    failover_pid=$!
    pids+=("$failover_pid")
    until grep -q writing "$work/lyceum-failover.log" 2>/dev/null; do kill -0 "$failover_pid" || { cat "$work/lyceum-failover.log" >&2; exit 1; }; sleep 0.2; done
    sleep 2
    failover_loop lyceum lyceum_leader lyceum_kill lyceum_restart lyceum_settled "$work/lyceum-progress"
    kill -TERM "$failover_pid"
    wait "$failover_pid" || { log "the Lyceum writers failed: $(tail -n 3 "$work/lyceum-failover.log")"; exit 1; }
    pids=()
  fi
  lyceum_down
done

(IFS=,; cat >"$work/facts.json" <<JSON
{"machine": {"cores": $(nproc), "cpu": "$(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo)", "kernel": "$(uname -sr)",
  "commit": "$(git rev-parse --short HEAD 2>/dev/null || echo unknown)"},
 "settings": {"partitions": $partitions, "in_flight": $concurrency, "connections": 4, "seconds": $run_seconds, "warmup": "$warmup",
  "learners": $learners, "writers": $writers, "kills": $kills, "quick": $([ "$quick" = 1 ] && echo true || echo false),
  "lyceum_cluster": "$REPLICATION_CLUSTER", "lyceum_lease": "$lyceum_lease",
  "nats_server": "$("$nats_server" --version)", "nats_sync": "$nats_sync", "nats_load": "$nats_load"},
 "lyceum": [${lyceum_points[*]}],
 "jetstream": {"file": "replication-jetstream.json"},
 "acknowledgements": {"lyceum": "$work/lyceum-acks.txt", "jetstream": "$work/jetstream-acks.txt"}}
JSON
)
table=$(/usr/bin/python3 Benchmarks/replication_report.py "$work/facts.json" "$out")
{
  echo "# Lyceum replication beside NATS JetStream R3, $(date -u '+%F %H:%M UTC')"
  echo
  echo "Machine: $(nproc) cores ($(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo)), $(uname -sr), commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)."
  echo "Every process (servers, load generators, etcd) shares these cores; the load average is beside the figures."
  [ "$quick" = 0 ] || echo "**Quick mode ($kills kills, ${run_seconds} s runs): a trial of the path, figures not meaningful.**"
  echo
  if [ "$REPLICATION_CLUSTER" = netns ]; then
    echo "Lyceum: \`deploy/netns-cluster.sh up --replicas R\` (brokers b1, b2; worker hosts w1–w3; etcd hosts; CURVE on every socket),"
    echo "$partitions partitions of books, durability \`always\`; leases: $lyceum_lease."
  else
    echo "Lyceum: on loopback, as the end-to-end test starts replicas (the replicated netns cluster was not available):"
    echo "one etcd, one \`lyceum broker --partitions $partitions\`, three \`lyceum worker --service books\` processes standing for"
    echo "hosts w1–w3 (R = 1: the partitions shared; R = 3: each holds all), durability \`always\`, plaintext; leases: $lyceum_lease."
  fi
  echo "JetStream: $("$nats_server" --version), three servers in namespaces of their own (n1–n3), JetStream file storage,"
  echo "a file stream of 3 replicas; fsync: $nats_sync."
  echo
  echo "Throughput: \`lyceum bench --scenario book-create\` ($learners learners) and \`natsload jetstream\` (200-byte messages), 4 connections,"
  echo "$concurrency in flight, ${run_seconds} s after a $warmup warm-up. Server CPU per write: utime+stime (\`/proc/PID/stat\`) of every worker"
  echo "and broker process (Lyceum) or of the three nats-servers over the measured interval ÷ measured writes."
  echo "Fail-over: $writers retrying writers (one write in flight each, 2 s per attempt, 50 ms apart; Lyceum: request_id, books.p0;"
  echo "JetStream: message ids), $kills kills (kill -9 of everything on the leader's host), each followed by the host's restart"
  echo "and the replicas' convergence; a kill's fail-over is the longest gap between acknowledgements from the last one"
  echo "before the kill to the first one after the restart. Every acknowledged write is read back at the end."
  echo
  echo "$table"
  echo
  echo "![fail-over timeline](replication-failover.svg)"
  echo
  echo "### Like for like: R = 3 by durability, beside JetStream R3 (same run)"
  echo
  echo "\`always\`: a write is acknowledged once a majority has it fdatasync'ed; \`interval:$interval_ms\` and \`none\`: once a majority"
  echo "has it written (in the page cache), synced every $interval_ms ms or never by Lyceum: JetStream 2.9's class (it syncs every 2 min)."
  echo "Counts from the workers' own counters over the measured interval (Benchmarks/replication_counts.py)."
  echo
  /usr/bin/python3 Benchmarks/replication_counts.py table "$out" r1 r3 r3-interval r3-none
  for name in r1 r3 r3-interval r3-none; do
    echo
    echo "### Where the switches go, $name (every thread of every worker and broker, from the warm-up's end to the run's, per write)"
    echo
    cat "$out/replication-threads-$name.md"
  done
} >"$out/replication.md"
cat "$out/replication.md"
