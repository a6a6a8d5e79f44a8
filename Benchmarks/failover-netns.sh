#!/usr/bin/env bash
# Issue 35, item 2 (`make bench-failover`, as root): what a retrying client waits over a fail-over
# in deploy/netns-cluster.sh's replicated cluster, with the script's defaults unless told
# otherwise (arguments go to `up`: `--lease-ttl 5 --heartbeat 2500` measures the old defaults).
# Clients/ledger.py writes on c1 through both brokers (IN_FLIGHT creates at once over 48 learners
# of every partition, each retried with its request_id, 2 s an attempt), and:
#   kill  kill -9 of the worker host leading the most partitions 8 s in; started again after.
#   cut   that host's link down 8 s in for CUT_SECONDS (12), then up again.
# First, with no fault and FULL_IN_FLIGHT (64) creates at once, it counts the leaders that lost
# a lease anyway (a false fail-over: the lease too short for the machine's load).
# Each prints the worst wait of any create (retries included), the acknowledgements, the errors,
# the read-back of every acknowledged create (lost = acknowledged and not read back), and when
# the new leaders were elected and serving (Benchmarks/failover_timeline.py). Its
# own namespaces and state (prefix lfo-, 10.78.0.0/24, /tmp/lyceum-failover); torn down at exit.
set -euo pipefail

repository=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
script="$repository/deploy/netns-cluster.sh"
state=${STATE:-/tmp/lyceum-failover}
in_flight=${IN_FLIGHT:-8}
full_in_flight=${FULL_IN_FLIGHT:-64}
cut_seconds=${CUT_SECONDS:-12}
readonly WRITE_SECONDS=40 FAULT_AT=8
ledger="$repository/Tests/ClusterTests/Clients/ledger.py"

cluster() { "$script" "$1" --state "$state" "${@:2}"; }
trap 'cluster down >/dev/null 2>&1 || true' EXIT

cluster up --prefix lfo- --subnet 10.78.0 "$@" >/dev/null
eval "$(cluster env)"
keys="$state/c1/keys"
on_client() { cluster exec c1 /usr/bin/env PYTHONPATH="$repository/clients/python" "$@"; }
ledger() {
  on_client /usr/bin/python3 "$ledger" "$1" --brokers "$LYCEUM_BROKER" --key "$keys/app_secret" \
    --server-key "$keys/broker" "${@:2}"
}
# The worker host leading the most partitions now, from the leader keys.
busiest() {
  cluster exec c1 etcdctl --endpoints "$NETNS_ETCD" get --prefix --print-value-only lyceum/leader/ \
    | awk 'NF { print $1 }' | sort | uniq -c | sort -rn | awk 'NR == 1 { print $2 }'
}
leaders() {
  cluster exec c1 etcdctl --endpoints "$NETNS_ETCD" get --prefix --print-value-only lyceum/leader/ \
    | awk 'NF { print $1 }' | sort | uniq -c | awk '{ printf "%s %s  ", $2, $1 }'
}
learners=$(seq 0 47 | sed 's/^/fo-/' | paste -sd,)
settings=$(grep -E '^(lease_ttl|heartbeat)=' "$state/cluster.env" | tr '\n' ' ')

# Writes for WRITE_SECONDS while the fault $1 happens FAULT_AT s in, then reads everything back.
measure() {
  local fault=$1 victim led out="$state/$1.jsonl" report fault_at
  sleep 20  # the leadership balance settles (leader-balance-interval 5 s)
  victim=$(busiest)
  led=$(cluster exec c1 etcdctl --endpoints "$NETNS_ETCD" get --prefix lyceum/leader/ | paste - - \
    | awk -v victim="$victim" '$2 == victim { sub("lyceum/leader/", "", $1); print $1 }' | paste -sd,)
  echo "$fault: leaders before: $(leaders)(victim $victim; $settings)"
  ledger write --out "$out" --run "$fault" --learners "$learners" --seconds "$WRITE_SECONDS" --in-flight "$in_flight" \
    --timeout 2 --attempts 20 >"$state/$fault.report" &
  local writer=$!
  sleep "$FAULT_AT"
  fault_at=$(date -u +%FT%T.%3NZ)
  case "$fault" in
    kill) cluster kill "$victim" >/dev/null ;;
    cut) cluster link "$victim" down >/dev/null; sleep "$cut_seconds"; cluster link "$victim" up >/dev/null ;;
  esac
  wait "$writer"
  report=$(cat "$state/$fault.report")
  echo "$fault: $report"
  echo "$fault: read back: $(ledger verify --ledger "$out")"
  echo "$fault: $("$repository/Benchmarks/failover_timeline.py" "$state" "$fault_at" "$led")"
  if [ "$fault" = kill ]; then cluster start "$victim" >/dev/null; fi
}

# How many lines of the workers' logs match $1.
log_lines() { cat "$state"/w*/logs/*.log | grep -cE "$1" || true; }

# A full write load and no fault: no leadership may end.
steady() {
  local lost retried out="$state/steady.jsonl"
  sleep 20
  lost=$(log_lines 'lease lost') retried=$(log_lines 'lease renewal failed')
  ledger write --out "$out" --run steady --learners "$learners" --seconds "$WRITE_SECONDS" --in-flight "$full_in_flight" \
    --timeout 2 --attempts 20 >"$state/steady.report"
  lost=$(($(log_lines 'lease lost') - lost)) retried=$(($(log_lines 'lease renewal failed') - retried))
  echo "steady: $(cat "$state/steady.report") at $full_in_flight in flight; leases lost (false fail-overs): $lost; renewals retried: $retried ($settings)"
}

steady
measure kill
measure cut
