# Benchmarks/suite.sh, sourced: the servers it measures and the load it drives (lyceum serve,
# redis-server, lyceum bench, redis-benchmark), started on free loopback ports and stopped.

stop_lyceum() { [ -z "$lyceum_pid" ] || { kill -TERM "$lyceum_pid" 2>/dev/null || true; wait "$lyceum_pid" 2>/dev/null || true; lyceum_pid=""; }; }
# Processes of part 6 (broker, worker, nats-server, responder): TERM, then wait for each.
stop_extra() { stop_processes "${extra_pids[@]}"; extra_pids=(); }


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
  /usr/bin/python3 "$benchmarks_directory/results.py" redis-run \
    "$name" "$p50" "$p95" "$p99" "$max" "$rps" "$redis_pid" "$((after - before))" "$(getconf CLK_TCK)" "$requests" \
    "$((switches[0] - voluntary))" "$((switches[1] - involuntary))" "$out/$name.json"
  echo "$rps"
}

# Requests for a Redis run of about RUN_SECONDS at the rate Lyceum just did (at least 20000).
redis_count() { [ "$redis_requests" != 0 ] && echo "$redis_requests" || awk -v r="$1" -v s="$run_seconds" 'BEGIN { n = int(r * s); print (n < 20000 ? 20000 : n) }'; }
