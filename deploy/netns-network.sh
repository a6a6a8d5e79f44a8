# Sourced by deploy/netns-cluster.sh and Benchmarks/replication-bench.sh: a network of Linux
# network namespaces joined by one bridge, made inside namespaces only (nothing is added to the
# machine's own network), and the processes that run in them. Needs root and iproute2.

# netns_network_up SWITCH HOST:NAMESPACE:ADDRESS…: the namespace SWITCH with a bridge br0 and,
# for each host, the namespace NAMESPACE whose eth0 (ADDRESS/24) is a veth whose other end, named
# HOST, is a port of br0.
netns_network_up() {
  local switch=$1 entry host ns address
  shift
  ip netns add "$switch"
  ip -n "$switch" link set lo up
  ip -n "$switch" link add br0 type bridge
  ip -n "$switch" link set br0 up
  for entry in "$@"; do
    IFS=: read -r host ns address <<<"$entry"
    ip netns add "$ns"
    ip -n "$ns" link set lo up
    # Both ends are created inside namespaces, so no name is taken in the machine's own.
    ip -n "$switch" link add "$host" type veth peer name eth0 netns "$ns"
    ip -n "$switch" link set "$host" master br0 up
    ip -n "$ns" addr add "$address/24" dev eth0
    ip -n "$ns" link set eth0 up
  done
}

# The processes of every namespace given, all on one line (none for a namespace that is gone).
netns_pids() { local ns; for ns in "$@"; do ip netns pids "$ns" 2>/dev/null || true; done | tr '\n' ' '; }

# netns_kill SECONDS NAMESPACE…: kill -9 of every process in the namespaces, then waits until
# none is left, at most SECONDS (0: without a bound). Prints the processes it killed.
netns_kill() {
  local bound=$1 pids deadline
  shift
  pids=$(netns_pids "$@")
  # shellcheck disable=SC2086
  [ -z "${pids// /}" ] || kill -KILL $pids 2>/dev/null || true
  deadline=$((SECONDS + bound))
  while [ -n "$(netns_pids "$@" | tr -d ' ')" ] && { [ "$bound" = 0 ] || [ $SECONDS -lt $deadline ]; }; do sleep 0.05; done
  echo "${pids% }"
}
