#!/usr/bin/env bash
# A partitioned Lyceum cluster on a real network inside this machine: Linux network namespaces for
# two broker hosts (b1, b2), three worker hosts (w1, w2, w3), three etcd hosts (e1, e2, e3: one
# etcd cluster holding the replicated partitions' leaderships), a client host (c1) and a
# monitoring host (m1, running Debian's prometheus: it scrapes every Lyceum process's /metrics with
# the cluster's metrics token, and etcd's, and evaluates deploy/prometheus/lyceum-alerts.yml), each
# with one veth link to a bridge in a switch namespace (sw) and its own address, CURVE on every
# Lyceum socket. With --replicas 3 every partition is replicated on the three worker hosts;
# with --replicas 1 each worker host holds a third of the partitions, and no etcd runs.
# Every address lives inside namespaces this script creates; nothing is added to the machine's
# own network. Needs root and iproute2.
#
# usage: deploy/netns-cluster.sh VERB [options]
#   up [--foreground]    create the network and keys, start the processes, return once every
#                        partition has an owner (with replicas: a leader) registered with both
#                        brokers (bounded by
#                        --timeout); --foreground then waits, and tears down on Ctrl-C/SIGTERM.
#                        A failure or Ctrl-C while coming up tears down what was made (the state
#                        directory is kept, for its logs).
#   down [--keep-state]  stop every process (TERM, then KILL after a bound), delete the
#                        namespaces and their links, and the state directory unless --keep-state.
#                        Idempotent; safe on a half-made cluster.
#   status               namespaces, addresses, links, processes, etcd's health and leader keys,
#                        and `lyceum status` of each broker
#   env                  shell assignments of what a client needs (eval them): LYCEUM_BROKER,
#                        LYCEUM_CURVE_SECRET_KEY (the admin key), LYCEUM_CURVE_SERVER_KEY and NETNS_*
#   exec HOST CMD...     run CMD in HOST's namespace (e.g. `exec c1 lyceum status`)
#   kill HOST...         kill -9 every process in each HOST's namespace (worker, broker or etcd hosts)
#   start HOST...        start the HOSTs' processes again with the same data and keys, and wait as up
#   restart HOST         stop HOST gracefully (TERM: a worker hands its leaderships over, a broker
#                        sends its clients to the other broker), start it again, and return once
#                        its processes answer /readyz 200 (a worker: caught up on every replica)
#                        and every partition is registered with both brokers: one step of a
#                        rolling restart (workers one at a time, brokers last: docs/cluster.md)
#   wipe HOST            remove a killed worker host's data and make its partitions again, empty
#   link HOST down|up    take HOST's link down or up (its end at the bridge)
#   power-cut [--torn|--partial] HOST...  with --power-loss-fs: the power of each worker HOST
#                        lost at once: kill -9 its processes, then drop what its disk had not synced
#                        (--torn: but part of the last unsynced write; --partial: but a random
#                        prefix of each file's unsynced appends, as written back by the kernel),
#                        printing what was lost; its disk is mounted again by `start`
#   disk HOST full|free  with --power-loss-fs: worker HOST's disk answers writes ENOSPC, or again not
# options (up; the other verbs read them from the state directory):
#   --state DIR          logs, data, keys, pids (default /tmp/lyceum-netns)
#   --prefix P           namespace names P-b1 … (default lyc-; also PREFIX=)
#   --subnet A.B.C       the /24 the hosts live in (default 10.77.0): b1 .11, b2 .12, w1 .21,
#                        w2 .22, w3 .23, c1 .31, m1 .41, e1 .51, e2 .52, e3 .53
#   --partitions N       partitions of books and progress (default 16; 0: one unpartitioned
#                        books+progress worker on w1, no replicas)
#   --replicas N         3 (default): every worker host holds every partition, one leads it
#                        (etcd on e1-e3); 1: each worker host holds a third, no etcd
#   --lease-ttl S        the leaders' etcd lease (default 3; keep-alive S/5, retry 2S/5; cluster.md)
#   --heartbeat MS       heartbeat-interval of every process (default 1000; expiry 3 intervals ≤ lease)
#   --timeout S          how long up and start wait for the cluster (default 90)
#   --scrape-interval S  Prometheus's scrape and rule evaluation interval on m1 (default 15)
#   --durability D       the workers' journal durability: always (default), interval[:MS], none
#   --power-loss-fs      each worker host's data directory on a power-loss filesystem of its own
#                        (scripts/powerloss_fs.py: what was not synced is lost at `power-cut`);
#                        needs /dev/fuse and Debian's python3-fusepy (ensure-deps.sh test)
# LYCEUM=PATH selects the binary; by default the script builds a release one once
# (`swift build -c release --product lyceum`) and uses .build/release/lyceum.
set -euo pipefail

readonly HOSTS=(b1 b2 w1 w2 w3 c1 m1 e1 e2 e3)
readonly BROKER_HOSTS=(b1 b2)
readonly WORKER_HOSTS=(w1 w2 w3)
readonly ETCD_HOSTS=(e1 e2 e3)
readonly PORT=5555 EVENTS_PORT=5556 FORWARDER_PORT=5558
# etcd's client and peer ports on e1-e3; the replication channel's base port on each worker host.
readonly ETCD_CLIENT_PORT=2379 ETCD_PEER_PORT=2380 REPLICATION_PORT=6000
# What TERM is given before KILL: a worker drains for up to 10 s (docs/operations.md, "Signals").
readonly STOP_GRACE=12

repository=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# netns_network_up, netns_pids, netns_kill: shared with Benchmarks/replication-bench.sh.
source "$repository/deploy/netns-network.sh"
state=/tmp/lyceum-netns
prefix=${PREFIX:-lyc-}
# Without a state directory, down removes namespaces by prefix only when told the prefix.
prefix_given=${PREFIX:+1}
# --partitions 0 means --replicas 1 unless --replicas is given (then it is refused).
replicas_given=
subnet=10.77.0
partitions=16
replicas=3
lease_ttl=3
heartbeat=1000
timeout=90
scrape_interval=15
durability=always
power_loss_fs=0
foreground=0
keep_state=0
lyceum=${LYCEUM:-}

fail() { echo "netns-cluster: $*" >&2; exit 1; }
usage_error() { echo "netns-cluster: $*" >&2; echo "usage: deploy/netns-cluster.sh up|down|status|env|exec|kill|start|restart|wipe|link|power-cut|disk [options] (--help)" >&2; exit 2; }
note() { echo "netns-cluster: $*" >&2; }

# --- settings -------------------------------------------------------------------------------

octet() {
  case "$1" in b1) echo 11 ;; b2) echo 12 ;; w1) echo 21 ;; w2) echo 22 ;; w3) echo 23 ;; c1) echo 31 ;; m1) echo 41 ;;
    e1) echo 51 ;; e2) echo 52 ;; e3) echo 53 ;;
    *) usage_error "unknown host '$1' (hosts: ${HOSTS[*]})" ;; esac
}
check_host() { case " ${HOSTS[*]} " in *" $1 "*) ;; *) usage_error "unknown host '$1' (hosts: ${HOSTS[*]})" ;; esac; }
address() { echo "$subnet.$(octet "$1")"; }
namespace() { echo "$prefix$1"; }
switch_namespace() { echo "${prefix}sw"; }
endpoint() { echo "tcp://$(address "$1"):$2"; }

# The partitions worker host number $1 (0-based) holds: with replicas, all of them; otherwise a
# contiguous share, as even as the count allows.
owned_range() {
  local index=$1 count=${#WORKER_HOSTS[@]}
  if [ "$replicas" -gt 1 ]; then echo "0-$((partitions - 1))"; return; fi
  local first=$((index * partitions / count)) last=$(((index + 1) * partitions / count - 1))
  if [ "$first" -eq "$last" ]; then echo "$first"; else echo "$first-$last"; fi
}

# The settings `up` chose are kept in the state directory, so later verbs act on that cluster.
save_settings() {
  printf 'prefix=%q\nsubnet=%q\npartitions=%q\nreplicas=%q\nlease_ttl=%q\nheartbeat=%q\ntimeout=%q\nlyceum=%q\nscrape_interval=%q\ndurability=%q\npower_loss_fs=%q\n' \
    "$prefix" "$subnet" "$partitions" "$replicas" "$lease_ttl" "$heartbeat" "$timeout" "$lyceum" "$scrape_interval" "$durability" "$power_loss_fs" >"$state/cluster.env"
}
load_settings() {
  [ -f "$state/cluster.env" ] || return 1
  # A state written before replicas existed is an unreplicated cluster.
  replicas=1
  # shellcheck source=/dev/null
  . "$state/cluster.env"
}

validate_settings() {
  [[ "$prefix" =~ ^[A-Za-z0-9_.-]{1,20}$ ]] || usage_error "--prefix must be 1-20 of A-Z a-z 0-9 _ . -, got '$prefix'"
  [[ "$subnet" =~ ^([0-9]{1,3})\.([0-9]{1,3})\.([0-9]{1,3})$ ]] || usage_error "--subnet takes the first three octets of a /24, e.g. 10.77.0, got '$subnet'"
  local part
  for part in "${BASH_REMATCH[@]:1}"; do [ "$part" -le 255 ] || usage_error "--subnet: $part is not an octet"; done
  [[ "$partitions" =~ ^[0-9]+$ ]] && { [ "$partitions" -eq 0 ] || { [ "$partitions" -ge ${#WORKER_HOSTS[@]} ] && [ "$partitions" -le 4096 ]; }; } \
    || usage_error "--partitions must be 0 or ${#WORKER_HOSTS[@]}-4096, got '$partitions'"
  # Replicas need partitions (each replica set is a partition's), and one host per replica.
  if [ "$partitions" -eq 0 ] && [ -z "$replicas_given" ]; then replicas=1; fi
  [[ "$replicas" =~ ^[13]$ ]] || usage_error "--replicas must be 1 or 3 (one replica on each of the ${#WORKER_HOSTS[@]} worker hosts), got '$replicas'"
  [ "$replicas" -eq 1 ] || [ "$partitions" -gt 0 ] || usage_error "--replicas $replicas needs --partitions above 0"
  [[ "$lease_ttl" =~ ^[1-9][0-9]?$ ]] || usage_error "--lease-ttl must be 1-99 seconds, got '$lease_ttl'"
  [[ "$heartbeat" =~ ^[1-9][0-9]*$ ]] || usage_error "--heartbeat must be a positive number of ms, got '$heartbeat'"
  [[ "$state" =~ ^[A-Za-z0-9_./+-]+$ ]] || usage_error "--state must be a path of A-Z a-z 0-9 _ . / + -, got '$state'"
  [[ "$timeout" =~ ^[1-9][0-9]*$ ]] || usage_error "--timeout must be a positive number of seconds, got '$timeout'"
  [[ "$scrape_interval" =~ ^[1-9][0-9]*$ ]] || usage_error "--scrape-interval must be a positive number of seconds, got '$scrape_interval'"
  [[ "$durability" =~ ^(always|none|interval(:[1-9][0-9]*)?)$ ]] || usage_error "--durability must be always, none, interval or interval:MS, got '$durability'"
}

# --- the network ----------------------------------------------------------------------------

namespace_exists() { [ -e "/var/run/netns/$1" ]; }

make_network() {
  local host hosts=()
  for host in "${HOSTS[@]}"; do
    # The etcd hosts exist only with replicas.
    case "$host" in e*) etcd_hosts_in_use || continue ;; esac
    hosts+=("$host:$(namespace "$host"):$(address "$host")")
  done
  netns_network_up "$(switch_namespace)" "${hosts[@]}"
}

# --- keys -----------------------------------------------------------------------------------

# Each host's directory holds only what that host would: its secret key and the public
# certificates it trusts. The brokers share one key pair (clients see one server key).
make_keys() {
  local scratch="$state/keys" host broker peer
  mkdir -p "$scratch"
  "$lyceum" keys generate broker --dir "$scratch" --role admin >/dev/null
  for host in "${WORKER_HOSTS[@]}"; do "$lyceum" keys generate "$host" --dir "$scratch" --role worker >/dev/null; done
  "$lyceum" keys generate admin --dir "$scratch" --role admin >/dev/null
  "$lyceum" keys generate app --dir "$scratch" --role app >/dev/null
  for host in "${BROKER_HOSTS[@]}"; do
    mkdir -p "$state/$host/keys/authorized"
    cp -p "$scratch/broker" "$scratch/broker_secret" "$state/$host/keys/"
    cp -p "$scratch/admin" "$scratch/app" "$state/$host/keys/authorized/"
  done
  for host in "${WORKER_HOSTS[@]}"; do
    for broker in "${BROKER_HOSTS[@]}"; do cp -p "$scratch/$host" "$state/$broker/keys/authorized/"; done
  done
  for host in "${WORKER_HOSTS[@]}"; do
    # The snapshot endpoint admits the brokers' key (their dashboards) and the admin's; with
    # replicas, the same authorized-keys admits the other worker hosts' keys to the replication
    # links (a worker key only replicates: docs/cluster.md, "Replicated partitions").
    mkdir -p "$state/$host/keys/snapshot-readers"
    cp -p "$scratch/$host" "$scratch/${host}_secret" "$scratch/broker" "$state/$host/keys/"
    cp -p "$scratch/broker" "$scratch/admin" "$state/$host/keys/snapshot-readers/"
    if [ "$replicas" -gt 1 ]; then
      for peer in "${WORKER_HOSTS[@]}"; do cp -p "$scratch/$peer" "$state/$host/keys/snapshot-readers/"; done
    fi
  done
  mkdir -p "$state/c1/keys"
  cp -p "$scratch/broker" "$scratch/admin" "$scratch/admin_secret" "$scratch/app" "$scratch/app_secret" "$state/c1/keys/"
  rm -rf "$scratch"
}

# --- configuration and processes ------------------------------------------------------------

# A configuration file per host, as deploy/broker.conf and worker.conf would be on real hosts.
write_configuration() {
  local host=$1 file="$state/$1/lyceum.conf" broker
  {
    echo "# written by deploy/netns-cluster.sh for $host ($(address "$host"))"
    echo "log-format = logfmt"
    echo "heartbeat-interval = $heartbeat"
    echo "heartbeat-liveness = 3"
    metrics_configuration "$host"
    case "$host" in
      b*)
        echo "endpoint = $(endpoint "$host" $PORT)"
        echo "events-endpoint = $(endpoint "$host" $EVENTS_PORT)"
        echo "forwarder-endpoint = $(endpoint "$host" $FORWARDER_PORT)"
        echo "curve-secret-key = $state/$host/keys/broker_secret"
        echo "authorized-keys = $state/$host/keys/authorized"
        # With replicas, a request for a partition whose leader died is held until another
        # replica leads it (the rest of the lease, then recovery), so that a client sees a delay,
        # not service_unknown.
        if [ "$replicas" -gt 1 ]; then echo "unknown-service-timeout = $(((lease_ttl + 3) * 1000))"; fi ;;
      w*)
        for broker in "${BROKER_HOSTS[@]}"; do
          echo "broker = $(endpoint "$broker" $PORT)"
          echo "forwarder-endpoint = $(endpoint "$broker" $FORWARDER_PORT)"
        done
        echo "curve-secret-key = $state/$host/keys/${host}_secret"
        echo "curve-server-key = $state/$host/keys/broker"
        echo "authorized-keys = $state/$host/keys/snapshot-readers"
        # On the host's address (CURVE, snapshot-readers only), so that a subscriber on another
        # host (lyceum watch on c1, a broker's dashboard) can load and repair from it.
        echo "snapshot-endpoint = tcp://$(address "$host"):*"
        echo "data = $state/$host/data"
        echo "durability = $durability"
        echo "sessions = 4"
        # A host whose link came back reconnects within seconds, not the default 32 s back-off.
        echo "reconnect-initial = 500"
        echo "reconnect-max = 2000"
        replication_configuration "$host" ;;
    esac
  } >"$file"
}

# With replicas, host $1's replication settings: the etcd members, the replication channel on the
# host's own address (its base port: docs/cluster.md, "Replicated partitions", says which ports
# the partitions take), and the lease timings (keep-alive + 2 × retry = ttl, the largest the rule
# allows). `replicas` itself is the partitioned worker's flag: the catalog worker reads this file
# too, and has no partition to replicate (as on real hosts: deploy/shard.env).
replication_configuration() {
  [ "$replicas" -gt 1 ] || return 0
  local member
  for member in "${ETCD_HOSTS[@]}"; do echo "etcd-endpoint = $(etcd_url "$member" $ETCD_CLIENT_PORT)"; done
  echo "replication-endpoint = $(endpoint "$1" $REPLICATION_PORT)"
  echo "lease-ttl = $lease_ttl"
  echo "lease-keep-alive = $((lease_ttl * 200))"
  echo "lease-retry = $((lease_ttl * 400))"
}

# --- power-loss disks (--power-loss-fs) ----------------------------------------------------

# A worker host's data directory is the mount of scripts/powerloss_fs.py over $state/HOST/disk,
# run in the machine's own mount namespace (a host's processes, started later by `ip netns exec`,
# see the mount); its control socket is $state/HOST/disk.sock.
disk_control() { echo "$state/$1/disk.sock"; }
disk_mounted() { mountpoint -q "$state/$1/data"; }

mount_disk() {
  local host=$1 deadline
  [ "$power_loss_fs" -eq 1 ] && ! disk_mounted "$host" || return 0
  [ -e /dev/fuse ] || fail "--power-loss-fs needs /dev/fuse"
  /usr/bin/python3 -c 'import fusepy' 2>/dev/null || fail "--power-loss-fs needs Debian's python3-fusepy (scripts/ensure-deps.sh test installs it)"
  mkdir -p "$state/$host/disk" "$state/$host/data" "$state/$host/logs"
  setsid /usr/bin/python3 "$repository/scripts/powerloss_fs.py" mount "$state/$host/disk" "$state/$host/data" \
    --control "$(disk_control "$host")" </dev/null >>"$state/$host/logs/powerloss-fs.log" 2>&1 &
  echo $! >"$state/$host/powerloss-fs.pid"
  deadline=$((SECONDS + timeout))
  until disk_mounted "$host" && [ -S "$(disk_control "$host")" ]; do
    kill -0 "$(cat "$state/$host/powerloss-fs.pid")" 2>/dev/null || fail "the power-loss filesystem of $host exited: $(tail -n 5 "$state/$host/logs/powerloss-fs.log")"
    [ $SECONDS -lt $deadline ] || fail "the power-loss filesystem of $host did not mount after ${timeout}s"
    sleep 0.1
  done
}

# Waits (bounded) for a host's filesystem process to end after its cut or unmount.
await_disk_exit() {
  local pid deadline=$((SECONDS + 30))
  pid=$(cat "$state/$1/powerloss-fs.pid" 2>/dev/null) || return 0
  while kill -0 "$pid" 2>/dev/null && [ $SECONDS -lt $deadline ]; do sleep 0.1; done
  if kill -0 "$pid" 2>/dev/null; then note "the power-loss filesystem of $1 (pid $pid) did not end; killing it"; kill -KILL "$pid" 2>/dev/null || true; fi
  rm -f "$state/$1/powerloss-fs.pid"
}

# Unmounts a host's disk as it is (no cut: what it holds stays), after its processes stopped, and
# ends its filesystem (TERM: other namespaces' copies of the mount would keep it serving).
unmount_disk() {
  [ -f "$state/$1/powerloss-fs.pid" ] || return 0
  ! disk_mounted "$1" || fusermount -u -z "$state/$1/data" || note "could not unmount $state/$1/data"
  kill -TERM "$(cat "$state/$1/powerloss-fs.pid")" 2>/dev/null || true
  await_disk_exit "$1"
}

# --- etcd (e1-e3, with replicas) -------------------------------------------------------------

etcd_url() { echo "http://$(address "$1"):$2"; }
# The client URLs of every member, comma-separated (etcdctl's --endpoints).
etcd_endpoints() { local member; for member in "${ETCD_HOSTS[@]}"; do etcd_url "$member" $ETCD_CLIENT_PORT; done | paste -sd, -; }
etcd_hosts_in_use() { [ "$replicas" -gt 1 ]; }

# etcdctl from the client host, bounded in time; $1 is the endpoints it asks.
etcdctl_from_client() {
  local endpoints=$1
  shift
  client etcdctl --endpoints "$endpoints" --dial-timeout 1s --command-timeout 2s "$@"
}

# Waits until every etcd member answers healthy (with replicas).
await_etcd() {
  etcd_hosts_in_use || return 0
  local deadline=$((SECONDS + timeout))
  until etcdctl_from_client "$(etcd_endpoints)" endpoint health >/dev/null 2>&1; do
    [ $SECONDS -lt $deadline ] || fail "etcd was not healthy after ${timeout}s: $(etcdctl_from_client "$(etcd_endpoints)" endpoint health 2>&1 | tail -n 3)"
    sleep 0.5
  done
}

# --- monitoring (m1) -------------------------------------------------------------------------

# Each Lyceum process serves /metrics on its host's address, on the port of its role as in
# deploy/ (9464 broker, 9465 partitioned worker, 9466 catalog worker), with the cluster's token.
metrics_port() { case "$1" in broker) echo 9464 ;; node) echo 9465 ;; catalog) echo 9466 ;; esac; }
readonly PROMETHEUS_PORT=9090

metrics_configuration() {
  echo "metrics-address = $(address "$1")"
  echo "metrics-token-file = $state/$1/keys/metrics-token"
  case "$1" in b*) echo "metrics-port = $(metrics_port broker)" ;; esac
}

# One token for the cluster, in a 0600 file on each host that serves or scrapes metrics.
make_metrics_token() {
  local token host
  token=$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')
  for host in "${BROKER_HOSTS[@]}" "${WORKER_HOSTS[@]}" m1; do
    mkdir -p "$state/$host/keys"
    (umask 077 && echo "$token" >"$state/$host/keys/metrics-token")
  done
}

# m1's prometheus.yml: deploy/prometheus's jobs over this cluster's addresses, and its rules.
write_prometheus_configuration() {
  local dir="$state/m1" host
  mkdir -p "$dir/tsdb"
  cp "$repository/deploy/prometheus/lyceum-alerts.yml" "$dir/"
  {
    echo "# written by deploy/netns-cluster.sh for m1 ($(address m1))"
    echo "global: {scrape_interval: ${scrape_interval}s, evaluation_interval: ${scrape_interval}s, scrape_timeout: ${scrape_interval}s}"
    echo "rule_files: [$dir/lyceum-alerts.yml]"
    echo "scrape_configs:"
    echo "  - job_name: lyceum-broker"
    echo "    authorization: {credentials_file: $dir/keys/metrics-token}"
    echo "    static_configs: [{targets: [$(for host in "${BROKER_HOSTS[@]}"; do printf '"%s:%s", ' "$(address "$host")" "$(metrics_port broker)"; done | sed 's/, $//')]}]"
    echo "  - job_name: lyceum-worker"
    echo "    authorization: {credentials_file: $dir/keys/metrics-token}"
    echo "    static_configs: [{targets: [$(for host in "${WORKER_HOSTS[@]}"; do printf '"%s:%s", "%s:%s", ' "$(address "$host")" "$(metrics_port node)" "$(address "$host")" "$(metrics_port catalog)"; done | sed 's/, $//')]}]"
    if etcd_hosts_in_use; then
      # etcd serves its own /metrics on its client port, without a token.
      echo "  - job_name: etcd"
      echo "    static_configs: [{targets: [$(for host in "${ETCD_HOSTS[@]}"; do printf '"%s:%s", ' "$(address "$host")" $ETCD_CLIENT_PORT; done | sed 's/, $//')]}]"
    fi
  } >"$dir/prometheus.yml"
}

prometheus_url() { echo "http://$(address m1):$PROMETHEUS_PORT"; }

# Waits until m1's prometheus answers /-/ready (when it runs).
await_monitoring() {
  local deadline=$((SECONDS + timeout))
  running m1 prometheus || return 0
  until ip netns exec "$(namespace m1)" curl -sf "$(prometheus_url)/-/ready" >/dev/null 2>&1; do
    [ $SECONDS -lt $deadline ] || fail "prometheus on m1 was not ready after ${timeout}s: $(tail -n 5 "$state/m1/logs/prometheus.log")"
    sleep 0.5
  done
}

# The processes of a host, one per line: NAME then the lyceum arguments.
processes_of() {
  local host=$1 conf="$state/$1/lyceum.conf"
  case "$host" in
    b*)
      if [ "$partitions" -gt 0 ]; then echo "broker broker --config $conf --partitions $partitions"
      else echo "broker broker --config $conf"; fi ;;
    w*)
      if [ "$partitions" -gt 0 ]; then
        echo "node worker --config $conf --metrics-port $(metrics_port node) --partitions $partitions --node $host --service books --service progress --replicas $replicas"
      elif [ "$host" = w1 ]; then
        echo "node worker --config $conf --metrics-port $(metrics_port node) --service books --service progress"
      fi
      echo "catalog worker --config $conf --metrics-port $(metrics_port catalog) --service catalog" ;;
    m1)
      # Debian's prometheus, when installed (scripts/ensure-deps.sh installs it).
      if command -v prometheus >/dev/null; then
        echo "prometheus --config.file=$state/m1/prometheus.yml --storage.tsdb.path=$state/m1/tsdb --web.listen-address=$(address m1):$PROMETHEUS_PORT"
      fi ;;
    e*)
      # A member of the cluster's etcd; the initial-cluster flags matter only on the first start
      # (later ones find the membership in the data directory).
      if etcd_hosts_in_use; then
        local member members=""
        for member in "${ETCD_HOSTS[@]}"; do members="$members${members:+,}$member=$(etcd_url "$member" $ETCD_PEER_PORT)"; done
        echo "etcd --name $host --data-dir $state/$host/data --logger zap --log-outputs stderr" \
          "--listen-client-urls $(etcd_url "$host" $ETCD_CLIENT_PORT) --advertise-client-urls $(etcd_url "$host" $ETCD_CLIENT_PORT)" \
          "--listen-peer-urls $(etcd_url "$host" $ETCD_PEER_PORT) --initial-advertise-peer-urls $(etcd_url "$host" $ETCD_PEER_PORT)" \
          "--initial-cluster $members --initial-cluster-state new --initial-cluster-token ${prefix}etcd"
      fi ;;
  esac
}

# Creates a worker host's partitions once, at cluster creation; `start` reuses the data.
initialise_partitions() {
  local host=$1 index=$2
  [ "$partitions" -gt 0 ] || return 0
  ip netns exec "$(namespace "$host")" "$lyceum" partitions init --data "$state/$host/data" \
    --partitions "$partitions" --own "$(owned_range "$index")" >>"$state/$host/logs/partitions-init.log" 2>&1 \
    || fail "lyceum partitions init failed on $host: $(tail -n 5 "$state/$host/logs/partitions-init.log")"
}

# Starts a host's processes that are not running; each in its own session (a terminal's Ctrl-C
# reaches only this script, which stops them in order), stdin closed, stderr in logs/NAME.log.
start_processes() {
  local host=$1 ns name arguments pid program
  ns=$(namespace "$host")
  mkdir -p "$state/$host/logs"
  case "$host" in w*) mount_disk "$host" ;; esac
  while read -r name arguments; do
    [ -n "$name" ] || continue
    if running "$host" "$name"; then continue; fi
    case "$name" in
      prometheus) program=$(command -v prometheus) ;;
      etcd) program=$(command -v etcd) || fail "needs Debian's etcd-server (scripts/ensure-deps.sh test installs it)" ;;
      *) program=$lyceum ;;
    esac
    # shellcheck disable=SC2086 # the arguments are words written by processes_of
    ip netns exec "$ns" setsid "$program" $arguments </dev/null >>"$state/$host/logs/$name.log" 2>&1 &
    echo $! >"$state/$host/$name.pid"
    echo "started $host/$name pid $!"
  done < <(processes_of "$host")
}

# TERM every process of the namespaces in $@ at once (they drain in parallel), then KILL
# whatever still runs after STOP_GRACE seconds.
stop_processes_in() {
  local pids deadline
  pids=$(netns_pids "$@")
  [ -n "${pids// /}" ] || return 0
  # shellcheck disable=SC2086
  kill -TERM $pids 2>/dev/null || true
  deadline=$((SECONDS + STOP_GRACE))
  while [ -n "$(netns_pids "$@" | tr -d ' ')" ] && [ $SECONDS -lt $deadline ]; do sleep 0.2; done
  pids=$(netns_pids "$@")
  [ -n "${pids// /}" ] || return 0
  note "killing ${pids% } after ${STOP_GRACE}s"
  # shellcheck disable=SC2086
  kill -KILL $pids 2>/dev/null || true
  deadline=$((SECONDS + 5))
  while [ -n "$(netns_pids "$@" | tr -d ' ')" ] && [ $SECONDS -lt $deadline ]; do sleep 0.1; done
}

# --- readiness ------------------------------------------------------------------------------

client() { ip netns exec "$(namespace c1)" "$@"; }

# The services with at least one worker at broker host $1, one per line ("" when it does not answer).
registered_services() {
  local status
  status=$(client "$lyceum" status --broker "$(endpoint "$1" $PORT)" --timeout 1000 \
    --curve-secret-key "$state/c1/keys/admin_secret" --curve-server-key "$state/c1/keys/broker" 2>/dev/null) || return 0
  grep -oE '"name":"[^"]+","workers":[1-9][0-9]*' <<<"$status" | sed -E 's/^"name":"([^"]+)".*/\1/'
}

# The services every running broker must have a worker for.
expected_services() {
  local service index
  echo catalog
  for service in books progress; do
    if [ "$partitions" -eq 0 ]; then echo "$service"; continue; fi
    for ((index = 0; index < partitions; index++)); do echo "$service.p$index"; done
  done
}

# Whether process $2 of host $1 runs: its recorded pid is alive in that host's namespace (so a
# reused pid is not mistaken for it).
running() {
  local pid
  pid=$(cat "$state/$1/$2.pid" 2>/dev/null) || return 1
  [ "$(ip netns identify "$pid" 2>/dev/null)" = "$(namespace "$1")" ]
}

# What is missing, as "b1: books.p3 progress.p3 …" lines; nothing when the cluster is ready.
missing_registrations() {
  local broker missing
  for broker in "${BROKER_HOSTS[@]}"; do
    running "$broker" broker || continue
    missing=$(comm -23 <(expected_services | sort) <(registered_services "$broker" | sort) | tr '\n' ' ')
    [ -z "$missing" ] || echo "$broker: ${missing% }"
  done
}

await_ready() {
  local deadline=$((SECONDS + timeout)) missing
  while true; do
    missing=$(missing_registrations)
    [ -n "$missing" ] || return 0
    [ $SECONDS -lt $deadline ] || break
    sleep 0.5
  done
  echo "netns-cluster: not every partition had an owner registered with every broker after ${timeout}s; missing:" >&2
  echo "$missing" | cut -c1-400 >&2
  show_log_tails >&2
  return 1
}

show_log_tails() {
  local log
  for log in "$state"/*/logs/*.log; do
    [ -s "$log" ] || continue
    echo "== ${log#"$state"/} (last lines)"
    tail -n 5 "$log"
  done
}

# --- verbs ----------------------------------------------------------------------------------

# Refuses to build over someone else's files: a state directory is reused only when it is ours.
prepare_state() {
  if [ -e "$state" ] && [ -n "$(ls -A "$state" 2>/dev/null)" ]; then
    [ -f "$state/cluster.env" ] || fail "$state exists and is not a netns-cluster state directory; choose another --state"
    rm -rf "$state"
  fi
  mkdir -p "$state"
}

resolve_binary() {
  if [ -z "$lyceum" ]; then
    note "building a release lyceum (LYCEUM=PATH skips this)"
    (cd "$repository" && swift build -c release --product lyceum >&2) || fail "swift build failed"
    lyceum="$repository/.build/release/lyceum"
  fi
  [ -x "$lyceum" ] || fail "no executable lyceum at $lyceum"
  lyceum=$(cd "$(dirname "$lyceum")" && pwd)/$(basename "$lyceum")
}

verb_up() {
  [ "$(id -u)" -eq 0 ] || fail "up needs root (network namespaces)"
  command -v ip >/dev/null || fail "needs iproute2's ip (apt-get install iproute2)"
  validate_settings
  local host
  for host in "${HOSTS[@]}" sw; do
    ! namespace_exists "$(namespace "$host")" || fail "namespace $(namespace "$host") exists: a cluster with prefix '$prefix' is up (down it, or choose another --prefix)"
  done
  resolve_binary
  prepare_state
  save_settings
  # From here on, anything but success tears down what was made.
  trap 'note "interrupted; tearing down"; exit 130' INT TERM
  trap 'status=$?; if [ $status -ne 0 ]; then note "up failed; tearing down (logs kept in $state)"; teardown 1; fi' EXIT
  make_network
  make_keys
  make_metrics_token
  write_prometheus_configuration
  local index=0
  for host in "${HOSTS[@]}"; do mkdir -p "$state/$host/logs"; case "$host" in c1|m1|e*) ;; *) write_configuration "$host" ;; esac; done
  for host in "${ETCD_HOSTS[@]}"; do start_processes "$host"; done
  await_etcd
  for host in "${BROKER_HOSTS[@]}"; do start_processes "$host"; done
  for host in "${WORKER_HOSTS[@]}"; do mount_disk "$host"; initialise_partitions "$host" "$index"; index=$((index + 1)); done
  for host in "${WORKER_HOSTS[@]}"; do start_processes "$host"; done
  start_processes m1
  await_ready
  await_monitoring
  # Everything printed from here is made first: a Ctrl-C right after "cluster ready" must find
  # the script in simple commands, not amid a command substitution.
  local ready environment
  ready="cluster ready: brokers $(endpoint b1 $PORT) $(endpoint b2 $PORT), $partitions partitions, $replicas replica(s), state in $state"
  environment=$(print_environment)
  # The traps change without a gap.
  if [ "$foreground" -eq 1 ]; then
    trap 'teardown "$keep_state"; echo "cluster down"; exit 0' INT TERM
  else
    trap - INT TERM
  fi
  trap - EXIT
  echo "$ready"
  echo "$environment"
  if [ "$foreground" -eq 1 ]; then
    note "up in the foreground; Ctrl-C tears it down"
    while true; do sleep 1 & wait $!; done
  fi
}

# Stops every process and deletes the namespaces; the state too unless $1 is 1.
teardown() {
  local keep=$1 host ns namespaces=()
  for host in "${HOSTS[@]}" sw; do
    if namespace_exists "$(namespace "$host")"; then namespaces+=("$(namespace "$host")"); fi
  done
  if [ ${#namespaces[@]} -gt 0 ]; then stop_processes_in "${namespaces[@]}"; fi
  for host in "${WORKER_HOSTS[@]}"; do unmount_disk "$host"; done
  for ns in ${namespaces[@]+"${namespaces[@]}"}; do
    # Deleting a namespace deletes its end of each veth, and so the whole link.
    ip netns del "$ns" || note "could not delete namespace $ns"
  done
  rm -f "$state"/*/*.pid 2>/dev/null || true
  if [ "$keep" -ne 1 ] && [ -f "$state/cluster.env" ]; then rm -rf "$state"; fi
}

verb_down() {
  if ! load_settings; then
    if [ -z "$prefix_given" ]; then
      note "no cluster state in $state: nothing to do (--prefix P removes the namespaces P* by name)"
      return 0
    fi
    note "no cluster state in $state; removing namespaces with prefix '$prefix'"
  fi
  teardown "$keep_state"
  echo "cluster down"
}

verb_status() {
  load_settings || fail "no cluster state in $state"
  local host ns name pid
  for host in "${HOSTS[@]}"; do
    case "$host" in e*) etcd_hosts_in_use || continue ;; esac
    ns=$(namespace "$host")
    if ! namespace_exists "$ns"; then echo "$host  $ns  (no namespace)"; continue; fi
    echo "$host  $ns  $(ip -n "$ns" -br addr show dev eth0 2>/dev/null | awk '{print $3, $2}')  link $(ip -n "$(switch_namespace)" -br link show dev "$host" 2>/dev/null | awk '{print $2}')"
    for name in broker node catalog prometheus etcd; do
      [ -f "$state/$host/$name.pid" ] || continue
      pid=$(cat "$state/$host/$name.pid")
      if running "$host" "$name"; then echo "    $name pid $pid running"; else echo "    $name pid $pid not running"; fi
    done
  done
  if etcd_hosts_in_use; then
    echo "etcd:"
    etcdctl_from_client "$(etcd_endpoints)" endpoint status -w table 2>&1 | sed 's/^/    /' || true
    etcdctl_from_client "$(etcd_endpoints)" endpoint health 2>&1 | sed 's/^/    /' || true
    echo "leaders (lyceum/leader/SERVICE.pN: node, replication endpoint):"
    etcdctl_from_client "$(etcd_endpoints)" get --prefix lyceum/leader/ 2>&1 | paste - - | awk '{ print $1, $2, $3 }' | sed 's|^lyceum/leader/|    |' || true
  fi
  for host in "${BROKER_HOSTS[@]}"; do
    echo "lyceum status through $host:"
    client "$lyceum" status --broker "$(endpoint "$host" $PORT)" --timeout 2000 \
      --curve-secret-key "$state/c1/keys/admin_secret" --curve-server-key "$state/c1/keys/broker" || true
  done
}

# `export NAME='VALUE'` lines, for eval.
print_environment() {
  local host index=0 brokers="" name value
  for host in "${BROKER_HOSTS[@]}"; do brokers="$brokers${brokers:+,}$(endpoint "$host" $PORT)"; done
  set -- LYCEUM_BROKER "$brokers" \
    LYCEUM_CURVE_SECRET_KEY "$state/c1/keys/admin_secret" \
    LYCEUM_CURVE_SERVER_KEY "$state/c1/keys/broker" \
    NETNS_CLIENT "$(namespace c1)" \
    NETNS_APP_KEY "$state/c1/keys/app_secret" \
    NETNS_EVENTS "$(endpoint b1 $EVENTS_PORT),$(endpoint b2 $EVENTS_PORT)" \
    NETNS_LYCEUM "$lyceum" \
    NETNS_PARTITIONS "$partitions" \
    NETNS_REPLICAS "$replicas" \
    NETNS_ETCD "$(etcd_hosts_in_use && etcd_endpoints)" \
    NETNS_PROMETHEUS "$(prometheus_url)"
  for host in "${WORKER_HOSTS[@]}"; do
    if [ "$partitions" -gt 0 ]; then set -- "$@" "NETNS_OWNS_$host" "$(owned_range "$index")"; fi
    index=$((index + 1))
  done
  while [ $# -gt 0 ]; do
    name=$1 value=$2
    shift 2
    printf "export %s='%s'\n" "$name" "${value//\'/\'\\\'\'}"
  done
}

verb_env() {
  load_settings || fail "no cluster state in $state"
  print_environment
}

verb_exec() {
  [ $# -ge 2 ] || usage_error "exec needs a host and a command"
  load_settings || fail "no cluster state in $state"
  check_host "$1"
  local ns
  ns=$(namespace "$1")
  namespace_exists "$ns" || fail "no namespace $ns"
  shift
  # `lyceum` in the command is the cluster's binary.
  PATH="$(dirname "$lyceum"):$PATH" exec ip netns exec "$ns" "$@"
}

# Kills the processes of every host in $@ at once (all of etcd: `kill e1 e2 e3`).
verb_kill() {
  [ $# -ge 1 ] || usage_error "kill needs a host"
  load_settings || fail "no cluster state in $state"
  local host namespaces=() pids
  for host in "$@"; do
    check_host "$host"
    namespace_exists "$(namespace "$host")" || fail "no namespace $(namespace "$host")"
    namespaces+=("$(namespace "$host")")
  done
  pids=$(netns_kill 5 "${namespaces[@]}")
  echo "killed $*: $pids"
}

# Starts the processes of every host in $@ (etcd members together: one alone has no quorum),
# then waits as up does.
verb_start() {
  [ $# -ge 1 ] || usage_error "start needs a host"
  load_settings || fail "no cluster state in $state"
  local host etcd=0
  for host in "$@"; do
    check_host "$host"
    namespace_exists "$(namespace "$host")" || fail "no namespace $(namespace "$host")"
  done
  for host in "$@"; do
    start_processes "$host"
    case "$host" in e*) etcd=1 ;; esac
  done
  [ "$etcd" -eq 0 ] || await_etcd
  await_ready
  await_monitoring
  echo "cluster ready"
}

# The metrics ports of a host's Lyceum processes, where /readyz answers.
readiness_ports() {
  case "$1" in
    b*) metrics_port broker ;;
    w*) if [ "$partitions" -gt 0 ] || [ "$1" = w1 ]; then metrics_port node; fi; metrics_port catalog ;;
  esac
}

# Waits until every Lyceum process of host $1 answers /readyz with 200 (asked from c1).
await_readyz() {
  local host=$1 deadline=$((SECONDS + timeout)) port
  for port in $(readiness_ports "$host"); do
    until client curl -sf -o /dev/null "http://$(address "$host"):$port/readyz"; do
      [ $SECONDS -lt $deadline ] || fail "$host:$port/readyz was not 200 after ${timeout}s: $(client curl -s "http://$(address "$host"):$port/readyz" 2>&1 | head -c 300)"
      sleep 0.2
    done
  done
}

# One step of a rolling restart: TERM the host's processes (they drain: a worker hands its
# leaderships over, a broker refuses new requests and answers those in hand), start them again,
# and wait until they are ready and every partition is registered with both brokers.
verb_restart() {
  [ $# -eq 1 ] || usage_error "restart takes one host"
  load_settings || fail "no cluster state in $state"
  check_host "$1"
  local host=$1 began stopped
  case "$host" in c1) usage_error "restart takes a broker, worker, etcd or monitoring host, got '$host'" ;; esac
  namespace_exists "$(namespace "$host")" || fail "no namespace $(namespace "$host")"
  began=$(date +%s.%N)
  stop_processes_in "$(namespace "$host")"
  stopped=$(date +%s.%N)
  start_processes "$host"
  case "$host" in e*) await_etcd ;; esac
  await_readyz "$host"
  await_ready
  await_monitoring
  echo "restarted $host: stopped in $(awk -v a="$began" -v b="$stopped" 'BEGIN { printf "%.2f", b - a }') s, ready $(awk -v a="$stopped" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }') s later"
}

# Removes a stopped worker host's data and makes its partitions again, empty, as `up` made them:
# a host replaced by a new one. With replicas, `start` then rebuilds it from the leaders.
verb_wipe() {
  [ $# -eq 1 ] || usage_error "wipe needs one host"
  load_settings || fail "no cluster state in $state"
  check_host "$1"
  local host=$1 index=0 candidate
  case "$host" in w*) ;; *) usage_error "wipe takes a worker host (${WORKER_HOSTS[*]}), got '$host'" ;; esac
  [ -z "$(netns_pids "$(namespace "$host")" | tr -d ' ')" ] || fail "$host still runs processes: kill it first"
  for candidate in "${WORKER_HOSTS[@]}"; do [ "$candidate" = "$host" ] && break; index=$((index + 1)); done
  if [ "$power_loss_fs" -eq 1 ]; then
    mount_disk "$host"
    find "$state/$host/data" -mindepth 1 -maxdepth 1 -exec rm -rf {} +
  else
    rm -rf "${state:?}/$host/data"
  fi
  initialise_partitions "$host" "$index"
  echo "wiped $host"
}

verb_link() {
  [ $# -eq 2 ] || usage_error "link needs a host and down or up"
  load_settings || fail "no cluster state in $state"
  check_host "$1"
  case "$2" in down|up) ;; *) usage_error "link: '$2' is neither down nor up" ;; esac
  ip -n "$(switch_namespace)" link set dev "$1" "$2"
  echo "link $1 $2"
}

# The power of every worker host in $@ lost at once: their processes killed (SIGKILL, one kill for
# all), then each disk's unsynced writes and entries dropped (in parallel) and the disk unmounted.
verb_power_cut() {
  local how="" hosts=() host
  for host in "$@"; do
    case "$host" in --torn|--partial) how=$host; continue ;; esac
    hosts+=("$host")
  done
  [ ${#hosts[@]} -ge 1 ] || usage_error "power-cut needs a worker host"
  load_settings || fail "no cluster state in $state"
  [ "$power_loss_fs" -eq 1 ] || fail "power-cut needs a cluster made with up --power-loss-fs"
  for host in "${hosts[@]}"; do
    case "$host" in w*) check_host "$host" ;; *) usage_error "power-cut takes worker hosts (${WORKER_HOSTS[*]}), got '$host'" ;; esac
    disk_mounted "$host" || fail "$host's disk is not mounted (its power is already off: start it)"
  done
  verb_kill "${hosts[@]}"
  local pids=()
  for host in "${hosts[@]}"; do
    /usr/bin/python3 "$repository/scripts/powerloss_fs.py" cut "$(disk_control "$host")" ${how:+"$how"} >"$state/$host/logs/power-cut.out" 2>&1 &
    pids+=($!)
  done
  local failed=0 index=0
  for host in "${hosts[@]}"; do
    wait "${pids[$index]}" || failed=1
    index=$((index + 1))
    echo "power cut $host: $(cat "$state/$host/logs/power-cut.out")"
    cat "$state/$host/logs/power-cut.out" >>"$state/$host/logs/powerloss-fs.log"
    await_disk_exit "$host"
  done
  [ "$failed" -eq 0 ] || fail "a disk could not be cut (see above)"
}

verb_disk() {
  [ $# -eq 2 ] || usage_error "disk needs a worker host and full or free"
  load_settings || fail "no cluster state in $state"
  [ "$power_loss_fs" -eq 1 ] || fail "disk needs a cluster made with up --power-loss-fs"
  case "$1" in w*) check_host "$1" ;; *) usage_error "disk takes a worker host (${WORKER_HOSTS[*]}), got '$1'" ;; esac
  case "$2" in full) set -- "$1" on ;; free) set -- "$1" off ;; *) usage_error "disk: '$2' is neither full nor free" ;; esac
  /usr/bin/python3 "$repository/scripts/powerloss_fs.py" enospc "$(disk_control "$1")" "$2" >/dev/null || fail "$1's disk did not answer"
  echo "disk $1 $([ "$2" = on ] && echo full || echo free)"
}

# --- command line ---------------------------------------------------------------------------

[ $# -gt 0 ] || usage_error "no verb"
verb=$1
shift
case "$verb" in -h|--help) sed -n '2,/^set -euo pipefail/{/^set -euo/!p}' "$0"; exit 0 ;; esac
arguments=()
while [ $# -gt 0 ]; do
  case "$1" in
    --state) [ $# -ge 2 ] || usage_error "--state needs a directory"; state=$2; shift 2 ;;
    --prefix) [ $# -ge 2 ] || usage_error "--prefix needs a value"; prefix=$2; prefix_given=1; shift 2 ;;
    --subnet) [ $# -ge 2 ] || usage_error "--subnet needs a value"; subnet=$2; shift 2 ;;
    --partitions) [ $# -ge 2 ] || usage_error "--partitions needs a value"; partitions=$2; shift 2 ;;
    --replicas) [ $# -ge 2 ] || usage_error "--replicas needs a value"; replicas=$2; replicas_given=1; shift 2 ;;
    --lease-ttl) [ $# -ge 2 ] || usage_error "--lease-ttl needs a value"; lease_ttl=$2; shift 2 ;;
    --heartbeat) [ $# -ge 2 ] || usage_error "--heartbeat needs a value"; heartbeat=$2; shift 2 ;;
    --timeout) [ $# -ge 2 ] || usage_error "--timeout needs a value"; timeout=$2; shift 2 ;;
    --scrape-interval) [ $# -ge 2 ] || usage_error "--scrape-interval needs a value"; scrape_interval=$2; shift 2 ;;
    --durability) [ $# -ge 2 ] || usage_error "--durability needs a value"; durability=$2; shift 2 ;;
    --power-loss-fs) power_loss_fs=1; shift ;;
    --torn|--partial) arguments+=("$1"); shift ;;
    --foreground) foreground=1; shift ;;
    --keep-state) keep_state=1; shift ;;
    -h|--help) sed -n '2,/^set -euo pipefail/{/^set -euo/!p}' "$0"; exit 0 ;;
    --*) usage_error "unknown option '$1'" ;;
    *) arguments+=("$1"); shift
       # After exec's host comes the command, with options of its own.
       if [ "$verb" = exec ]; then arguments+=("$@"); break; fi ;;
  esac
done

# The processes this script starts take their settings from the cluster's files and flags only,
# never from the caller's LYCEUM_* (nor ETCD_*) variables (after `eval "$(… env)"` those are the client's:
# its admin key would make every broker DISCONNECT the workers). `exec` keeps them: there the
# caller's command is meant to use them.
if [ "$verb" != exec ]; then
  while read -r variable; do unset "$variable"; done < <(compgen -e | grep -E '^(LYCEUM|ETCD|ETCDCTL)_' || true)
fi

case "$verb" in
  up) [ ${#arguments[@]} -eq 0 ] || usage_error "up takes no arguments"; verb_up ;;
  down) verb_down ;;
  status) verb_status ;;
  env) verb_env ;;
  exec) verb_exec ${arguments[@]+"${arguments[@]}"} ;;
  kill) verb_kill ${arguments[@]+"${arguments[@]}"} ;;
  start) verb_start ${arguments[@]+"${arguments[@]}"} ;;
  restart) verb_restart ${arguments[@]+"${arguments[@]}"} ;;
  wipe) verb_wipe ${arguments[@]+"${arguments[@]}"} ;;
  link) verb_link ${arguments[@]+"${arguments[@]}"} ;;
  power-cut) verb_power_cut ${arguments[@]+"${arguments[@]}"} ;;
  disk) verb_disk ${arguments[@]+"${arguments[@]}"} ;;
  *) usage_error "unknown verb '$verb'" ;;
esac
