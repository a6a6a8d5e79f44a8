# Sourced by Benchmarks/replication-bench.sh: the Lyceum cluster it measures, three worker hosts
# w1–w3 with books in $partitions partitions, R replicas of each. REPLICATION_CLUSTER chooses where:
#   netns     deploy/netns-cluster.sh up --replicas R (its namespaces, etcd hosts and CURVE)
#   loopback  one etcd, one `lyceum broker` and three `lyceum worker` processes on loopback, as
#             LyceumServerTests.ReplicatedPartitionEndToEndTests starts them (a "host" is one
#             worker process; R = 1 shares the partitions evenly, R = 3 gives each all of them)
# Every backend defines:
#   lyceum_up R [DURABILITY], lyceum_down   start / stop (idempotent) the cluster, its workers
#                                   under DURABILITY (default always)
#   lyceum_metrics, metrics_token_file   HOST=URL of each worker's /metrics, and the bearer token's
#                                   file when one is needed (scraped where a client runs)
#   lyceum_client CMD…              run CMD where a client of the cluster runs
#   client_prefix                   the words in front of a command run there in the background
#   bench_brokers, bench_keys       lyceum bench's --broker and CURVE options
#   writer_brokers, writer_keys     the same for failover_writers.py
#   lyceum_worker_pids, lyceum_broker_pids   the server processes, for CPU per write
#   lyceum_leader                   the host leading books.p0 now (waits for one)
#   lyceum_kill HOST, lyceum_restart HOST, lyceum_settled HOST   the fail-over loop's steps
#   lyceum_lease                    the lease settings, for the report
# Reads $lyceum, $work, $partitions, $prefix, $cluster_subnet, LEASE_TTL/LEASE_KEEP_ALIVE/LEASE_RETRY.

lyceum_hosts=(w1 w2 w3)
lease_flags=()
[ -z "${LEASE_TTL:-}" ] || lease_flags+=(--lease-ttl "$LEASE_TTL")
[ -z "${LEASE_KEEP_ALIVE:-}" ] || lease_flags+=(--lease-keep-alive "$LEASE_KEEP_ALIVE")
[ -z "${LEASE_RETRY:-}" ] || lease_flags+=(--lease-retry "$LEASE_RETRY")
lyceum_lease="ttl ${LEASE_TTL:-5} s, keep-alive ${LEASE_KEEP_ALIVE:-1000} ms, retry ${LEASE_RETRY:-2000} ms"

# The host whose name etcd's leader key of books.p0 holds ("w2 tcp://…" → w2); nothing when
# there is none. etcd_leader ENDPOINT… (tried in turn), run where etcd is reachable.
etcd_leader_script='import base64, json, sys, urllib.request
key = base64.b64encode(b"lyceum/leader/books.p0").decode()
for endpoint in sys.argv[1:]:
    try:
        request = urllib.request.Request(endpoint + "/v3/kv/range", data=json.dumps({"key": key}).encode(), method="POST")
        kvs = json.load(urllib.request.urlopen(request, timeout=2)).get("kvs") or []
    except OSError:
        continue
    if kvs:
        print(base64.b64decode(kvs[0]["value"]).decode().split(" ")[0])
    break'

# Bytes of books.p0's journal files under DIR (a worker's data directory).
partition_bytes() { find "$1" -path '*books*' -path '*/p0/*' -type f -printf '%s\n' 2>/dev/null | awk '{ s += $1 } END { print s + 0 }'; }

# settle_bytes HOST DIR_OF: waits (up to 120 s) until HOST's copy of books.p0 is within 64 KiB of
# the leader's (writes go on meanwhile, so the copies are never exactly equal for long).
settle_bytes() {
  local host=$1 dir_of=$2 deadline=$((SECONDS + 120)) leader mine theirs
  while [ $SECONDS -lt $deadline ]; do
    leader=$(lyceum_leader)
    [ "$leader" != "$host" ] || return 0
    mine=$(partition_bytes "$($dir_of "$host")") theirs=$(partition_bytes "$($dir_of "$leader")")
    [ $((theirs - mine)) -gt 65536 ] || return 0
    sleep 0.5
  done
  log "$host had not caught up with books.p0's leader after 120 s ($mine of $theirs bytes)"
}

if [ "$REPLICATION_CLUSTER" = loopback ]; then
  etcd_pid="" broker_pid="" loopback_started=0
  declare -A worker_pid=() worker_arguments=() worker_metrics=()

  client_prefix=()
  lyceum_client() { "$@"; }
  lyceum_worker_pids() { echo "${worker_pid[@]}"; }
  lyceum_broker_pids() { echo "$broker_pid"; }
  metrics_token_file() { :; }
  lyceum_metrics() { local host; for host in "${!worker_metrics[@]}"; do echo "$host=${worker_metrics[$host]}"; done; }
  host_data() { echo "$cluster_root/$1"; }

  # A base port with 2 × partitions free ports from it (the replication link's port rule).
  free_port_range() {
    /usr/bin/python3 - "$1" <<'PY'
import random, socket, sys
count = int(sys.argv[1])
while True:
    base = random.randrange(20000, 60000 - count)
    sockets = []
    try:
        for port in range(base, base + count):
            s = socket.socket(); s.bind(("127.0.0.1", port)); sockets.append(s)
    except OSError:
        continue
    finally:
        for s in sockets: s.close()
    print(base); break
PY
  }

  start_worker() {
    local host=$1
    # shellcheck disable=SC2086 # the arguments were written as words
    "$lyceum" ${worker_arguments[$host]} 2>>"$cluster_root/$host.log" &
    worker_pid[$host]=$!
  }

  lyceum_up() {
    replicas_now=$1
    local durability=${2:-always}
    cluster_root="$work/lyceum-r$1-${durability%%:*}"
    local root=$cluster_root index=0 host own flags client peer metrics_port
    mkdir -p "$root"
    client="http://127.0.0.1:$(free_port)" peer="http://127.0.0.1:$(free_port)"
    etcd_endpoint=$client
    etcd --name rb --data-dir "$root/etcd" --listen-client-urls "$client" --advertise-client-urls "$client" \
      --listen-peer-urls "$peer" --initial-advertise-peer-urls "$peer" --initial-cluster "rb=$peer" \
      --log-outputs stderr --logger zap 2>"$root/etcd.log" &
    etcd_pid=$!
    until curl -sf "$client/health" >/dev/null 2>&1; do kill -0 "$etcd_pid" || { tail "$root/etcd.log" >&2; exit 1; }; sleep 0.2; done
    endpoint="tcp://127.0.0.1:$(free_port)"
    local forwarder="tcp://127.0.0.1:$(free_port)"
    "$lyceum" broker --endpoint "$endpoint" --forwarder-endpoint "$forwarder" --events-endpoint none \
      --partitions "$partitions" --log-level warning 2>"$root/broker.log" &
    broker_pid=$!
    for host in "${lyceum_hosts[@]}"; do
      if [ "$1" = 1 ]; then
        own="$((index * partitions / 3))-$(((index + 1) * partitions / 3 - 1))"
        flags=""
      else
        own="0-$((partitions - 1))"
        flags="--replicas $1 --etcd-endpoint $etcd_endpoint --replication-endpoint tcp://127.0.0.1:$(free_port_range 1) ${lease_flags[*]}"
      fi
      "$lyceum" partitions init --data "$root/$host" --partitions "$partitions" --own "$own" --service books >/dev/null
      metrics_port=$(free_port)
      worker_metrics[$host]="http://127.0.0.1:$metrics_port/metrics"
      worker_arguments[$host]="worker --broker $endpoint --forwarder-endpoint $forwarder --partitions $partitions --node $host \
        --data $root/$host --service books --durability $durability --metrics-port $metrics_port --log-level warning $flags"
      start_worker "$host"
      index=$((index + 1))
    done
    loopback_started=1
    bench_brokers=(--broker "$endpoint") bench_keys=()
    writer_brokers=(--broker "$endpoint") writer_keys=()
    # Ready when every partition of books has a worker registered.
    until [ "$("$lyceum" status --broker "$endpoint" --partitions "$partitions" --timeout 1000 2>/dev/null \
        | grep -oE '"name":"books\.p[0-9]+","workers":[1-9]' | sort -u | wc -l)" -eq "$partitions" ]; do
      kill -0 "$broker_pid" || { tail "$root"/*.log >&2; exit 1; }
      sleep 0.5
    done
  }

  lyceum_leader() {
    local leader=""
    until [ -n "$leader" ] && [ -n "${worker_pid[$leader]:-}" ]; do
      leader=$(/usr/bin/python3 -c "$etcd_leader_script" "$etcd_endpoint")
      [ -n "$leader" ] && [ -n "${worker_pid[$leader]:-}" ] || sleep 0.2
    done
    echo "$leader"
  }
  lyceum_kill() { kill -KILL "${worker_pid[$1]}"; wait "${worker_pid[$1]}" 2>/dev/null || true; unset "worker_pid[$1]"; }
  lyceum_restart() { start_worker "$1"; }
  lyceum_settled() { settle_bytes "$1" host_data; }

  lyceum_down() {
    [ "$loopback_started" = 1 ] || return 0
    stop_processes "${worker_pid[@]}" "$broker_pid" "$etcd_pid"
    worker_pid=() loopback_started=0
  }
else
  netns_state="$work/netns"
  netns_up=0
  netns() { PREFIX="${prefix}ly-" deploy/netns-cluster.sh "$@" --state "$netns_state"; }
  client_prefix=(ip netns exec "${prefix}ly-c1")
  lyceum_client() { "${client_prefix[@]}" "$@"; }
  host_data() { echo "$netns_state/$1/data"; }
  pid_of() { cat "$netns_state/$1/$2.pid" 2>/dev/null || true; }
  lyceum_worker_pids() { local host; for host in "${lyceum_hosts[@]}"; do pid_of "$host" node; done | paste -sd' '; }
  lyceum_broker_pids() { pid_of b1 broker; pid_of b2 broker; }
  lyceum_metrics() { local host; for host in "${lyceum_hosts[@]}"; do echo "$host=http://$cluster_subnet.2${host#w}:9465/metrics"; done; }
  metrics_token_file() { echo "$netns_state/w1/keys/metrics-token"; }

  lyceum_up() {
    replicas_now=$1
    LYCEUM=$lyceum netns up --prefix "${prefix}ly-" --subnet "$cluster_subnet" --partitions "$partitions" --replicas "$1" \
      --durability "${2:-always}" ${LEASE_TTL:+--lease-ttl "$LEASE_TTL"} >/dev/null
    netns_up=1
    local keys="$netns_state/c1/keys"
    bench_brokers=(--broker "tcp://$cluster_subnet.11:5555" --broker "tcp://$cluster_subnet.12:5555")
    bench_keys=(--curve-secret-key "$keys/app_secret" --curve-server-key "$keys/broker")
    writer_brokers=("${bench_brokers[@]}")
    writer_keys=(--curve-certificate "$keys/app_secret" --server-certificate "$keys/broker")
    # The etcd members and lease timings w1's worker runs with, from its command line and its
    # configuration file (whichever the script put them in), kept while w1 is down.
    local arguments
    arguments="$(tr '\0' '\n' <"/proc/$(pid_of w1 node)/cmdline"; sed -nE 's/^([a-z-]+) = (.*)$/--\1\n\2/p' "$netns_state/w1/lyceum.conf")"
    etcd_members=$(awk 'previous == "--etcd-endpoint" { print } { previous = $0 }' <<<"$arguments" | sort -u | paste -sd' ')
    lyceum_lease=$(awk '/^--lease-/ { name = substr($0, 3); next } name { print name " " $0; name = "" }' <<<"$arguments" | paste -sd, | sed 's/,/, /g')
    lyceum_lease=${lyceum_lease:-the worker defaults}
  }
  lyceum_leader() {
    local leader=""
    until [ -n "$leader" ] && [ -n "$(ip netns pids "${prefix}ly-$leader" 2>/dev/null)" ]; do
      # shellcheck disable=SC2086
      leader=$(lyceum_client /usr/bin/python3 -c "$etcd_leader_script" $etcd_members)
      [ -n "$leader" ] && [ -n "$(ip netns pids "${prefix}ly-$leader" 2>/dev/null)" ] || sleep 0.2
    done
    echo "$leader"
  }
  lyceum_kill() { netns kill "$1" >/dev/null; }
  lyceum_restart() { netns start "$1" >/dev/null; }
  lyceum_settled() { settle_bytes "$1" host_data; }
  lyceum_down() { [ "$netns_up" = 0 ] || { netns down >/dev/null; netns_up=0; }; }
fi
