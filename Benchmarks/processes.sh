# Sourced by the benchmark scripts that start several server processes (suite.sh, cluster-bench.sh).

# stop_processes PID…: SIGTERM to each (Lyceum's processes drain: requests in hand are answered,
# journals synced), then waits for each, so that none outlives the point that started it.
stop_processes() {
  local pid
  for pid in "$@"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "$@"; do wait "$pid" 2>/dev/null || true; done
}
