# Helpers every benchmark script shares; sourced (`source Benchmarks/common.sh` once the script
# is at the repository's root), never run.

# This file's directory, for the programs beside it, whatever the sourcing script's directory.
benchmarks_directory=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

# A TCP port on 127.0.0.1 that was free a moment ago, for a server to bind.
free_port() { /usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# The machine's load averages over 1, 5 and 15 minutes, for a report's header.
loadavg() { cut -d' ' -f1-3 /proc/loadavg; }

# A member of a JSON file (a `lyceum bench --json` result): json FILE requests_per_second | latency_us/p99 | list/0/…
json() { /usr/bin/python3 "$benchmarks_directory/results.py" member "$1" "$2"; }

# Seconds since the epoch, with nanoseconds.
now() { date +%s.%N; }

# Starts redis-server on a free loopback port with its files in DIR and extra options; sets
# $redis_port and $redis_pid, and returns once it answers.
start_redis() {
  local dir=$1; shift
  mkdir -p "$dir"
  redis_port=$(free_port)
  redis-server --bind 127.0.0.1 --port "$redis_port" --dir "$dir" --save "" --logfile "$dir/redis.log" "$@" &
  redis_pid=$!
  until [ "$(redis-cli -p "$redis_port" ping 2>/dev/null)" = "PONG" ]; do sleep 0.05; done
}

# Stops the redis-server start_redis started, through its protocol: a parent (such as a test
# runner) may leave SIGTERM blocked.
stop_redis() {
  [ -n "${redis_pid:-}" ] || return 0
  redis-cli -p "$redis_port" shutdown nosave >/dev/null 2>&1 || kill -KILL "$redis_pid" 2>/dev/null || true
  wait "$redis_pid" 2>/dev/null || true
  redis_pid=""
}

# The median of the numbers on standard input, one a line.
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

# stop_processes PID…: SIGTERM to each (Lyceum's processes drain: requests in hand are answered,
# journals synced), then waits for each, so that none outlives the point that started it.
stop_processes() {
  local pid
  for pid in "$@"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "$@"; do wait "$pid" 2>/dev/null || true; done
}
