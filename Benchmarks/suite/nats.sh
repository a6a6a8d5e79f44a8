# Benchmarks/suite.sh, sourced: part 6.

# 6. Beside NATS: the same catalog reads through a broker to a worker process, and acked writes;
# with --only-floors, the broker + worker run alone, for its floor (part 6b).
part_beside_nats() {
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

  # NATS (not with --only-floors).
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
}
