# Benchmarks/suite.sh, sourced: parts 1–5, one `lyceum serve` (or the transport alone) beside its reference.

# 1. ZeroMQ: the Swift wrapper vs C.
part_zeromq() {
  log "1/8 ZeroMQ PUSH→PULL, Swift vs C"
  zmq=$(ZMQ_THROUGHPUT_BIN=$BIN_DIR/zmq-throughput Benchmarks/zmq-throughput.sh "$zmq_messages" 32 "$zmq_rounds" 2>/dev/null)
  zmq_c=$(awk -F'|' '/C libzmq/ { gsub(/ /, "", $3); print $3 }' <<<"$zmq")
  zmq_swift=$(awk -F'|' '/reused Message/ { gsub(/ /, "", $3); print $3 }' <<<"$zmq")
  row "ZeroMQ PUSH→PULL 32 B, msg/s (Swift wrapper vs C, median of $zmq_rounds)" "$zmq_swift" "$zmq_c" "$(divide "$zmq_swift" "$zmq_c")"
}

# 1b. Majordomo echo through Lyceum's broker vs the C reference broker and C workers; mdp-bench's
# own lines (its ratios among them) in mdp-bench.txt.
part_majordomo() {
  log "1b/8 Majordomo echo, $concurrency in flight: Lyceum's broker vs the C reference broker and workers, tcp and inproc"
  MDP_BENCH_BIN=$BIN_DIR/mdp-bench Benchmarks/mdp-bench.sh --seconds "$mdp_seconds" --in-flight "$concurrency" --only tcp,inproc,c-tcp,c-inproc \
    >"$out/mdp-bench.txt" 2>"$work/mdp-bench.log" || { log "mdp-bench failed:"; cat "$work/mdp-bench.log" >&2; exit 1; }
  # The req/s of the measurement line that starts with PREFIX and names TRANSPORT workers and $concurrency in flight.
  mdp_rps() { awk -v prefix="$1, $concurrency in flight, " -v transport="$2 workers" 'index($0, prefix) == 1 && index($0, transport) && / req\/s / {
    for (i = 2; i <= NF; i++) if ($i == "req/s") print $(i - 1) }' "$out/mdp-bench.txt"; }
  for transport in tcp inproc; do
    lyceum_mdp=$(mdp_rps broker "$transport") c_mdp=$(mdp_rps "C broker" "$transport")
    # mdp-bench's own ratio of this run, "N× the C broker and workers of this run, c-TRANSPORT".
    mdp_ratio=$(awk -v key="of this run, c-$transport" -v prefix="broker, $concurrency in flight, " -v transport="$transport workers:" 'index($0, prefix) == 1 && index($0, transport) && index($0, key) {
      for (i = 1; i <= NF; i++) if ($(i + 1) == "the" && $(i + 2) == "C") { sub(/×$/, "", $i); print $i } }' "$out/mdp-bench.txt")
    row "Majordomo echo via Lyceum's broker, $concurrency in flight, $transport workers, req/s vs C broker + C workers (mdp-bench)" \
      "$lyceum_mdp" "$c_mdp" "${mdp_ratio:-n/a}"
    goal "#26 Majordomo through workers ($transport) ≥ 1.0× the C reference broker and workers" "${mdp_ratio:-n/a}×" "≥ 1.0×" "$(at_most 1 "${mdp_ratio:-n/a}")"
  done
}

# 3c, first: instructions per request under callgrind, while nothing else of the suite runs
# (request-cost.sh starts a serve of its own under valgrind; about a minute each at full counts).
part_instructions() {
  if [ "$quick" = 1 ]; then
    instructions_note="**Instructions per request (callgrind, \`Benchmarks/request-cost.sh\`) not measured in --quick: serve under valgrind takes minutes.**"
  elif ! command -v callgrind_control >/dev/null; then
    instructions_note="**Instructions per request not measured: valgrind is not installed (\`scripts/ensure-deps.sh bench\`).**"
  else
    for scenario in book-create $([ "$only_floors" = 1 ] || echo book-update) book-read $([ "$only_floors" = 1 ] || echo catalog-read); do
      log "3c/8 instructions per request under callgrind: $scenario (2,000 and 6,000 requests)"
      Benchmarks/request-cost.sh "$lyceum" "$scenario" 2000 6000 always 2>>"$work/request-cost.log" | awk '{ print $2 }' >"$out/$scenario.instructions" ||
        { log "request-cost.sh $scenario failed:"; tail -5 "$work/request-cost.log" >&2; rm -f "$out/$scenario.instructions"; }
    done
  fi
}

# 2–3. One server with durability always for reads, the open loop and durable creates.
part_reads_and_writes() {
  log "2/8 reads at $concurrency in flight vs Redis GET"
  start_lyceum "$work/lyceum" always
  # The floors answer the catalog as this serve does, from its replies.
  [ "$floors" = 0 ] || catalog_replies "$endpoint" list >"$work/floor-catalog.tsv"
  bench catalog-read --scenario catalog-read --in-flight "$concurrency" --duration "${run_seconds}s"
  bench book-read --scenario book-read --in-flight "$concurrency" --duration "${run_seconds}s"
  # The open loop runs on the state the peak was measured on, before any write grows the journal
  # (and starts a compaction) under it.
  book_rps=$(json "$out/book-read.json" requests_per_second)
  half=$(awk -v r="$book_rps" 'BEGIN { printf "%d", r / 2 }')
  if [ "$only_floors" = 0 ]; then
    log "4/8 open loop at 50% of the peak read rate ($half req/s)"
    bench book-read-open --scenario book-read --rate "$half" --duration "${run_seconds}s"
    bench verified-mix --scenario mix --in-flight "$concurrency" --duration "${run_seconds}s" --verify
  fi
  # System calls after the runs above: a read run under strace creates its books first, and the open
  # loop was to run before any write.
  for name in catalog-read book-read; do measure_syscalls "$name" "$lyceum_pid" lyceum_requests "$name"; done
  start_redis "$work/redis-plain"
  redis-benchmark -p "$redis_port" -t set -n 100000 -r 100000 -d 200 -c "$concurrency" -q >/dev/null
  catalog_rps=$(json "$out/catalog-read.json" requests_per_second)
  redis_get=$(redis_bench get "$concurrency" "$(redis_count "$book_rps")" redis-get)
  measure_syscalls redis-get "$redis_pid" redis_requests get
  stop_redis
  throughput_row "catalog reads (get_course), req/s vs Redis GET, $concurrency in flight" catalog-read redis-get
  throughput_row "book reads (get), req/s vs Redis GET, $concurrency in flight" book-read redis-get
  redis_get_cpu=$(cpu "$out/redis-get.json")
  cpu_row "catalog read" catalog-read "$redis_get_cpu" "redis-server per GET"
  cpu_row "book read" book-read "$redis_get_cpu" "redis-server per GET"
  for name in catalog-read book-read; do
    p99=$(json "$out/$name.json" latency_us/p99)
    row "$name p99 latency, ms vs Redis GET p99" "$(ms "$p99")" "$(ms "$(json "$out/redis-get.json" latency_us/p99)")" "$(divide "$p99" "$(json "$out/redis-get.json" latency_us/p99)")"
  done
  for name in book-read catalog-read; do
    rps=$(json "$out/$name.json" requests_per_second) read_cpu=$(divide "$(cpu "$out/$name.json")" "$redis_get_cpu")
    goal "#26 ${name%-read} reads ≥ 1.3× Redis GET ($concurrency in flight)" "$(divide "$rps" "$redis_get")×" "≥ 1.3×" "$(at_most 1.3 "$(divide "$rps" "$redis_get")")"
    goal "#26 server CPU per ${name%-read} read ≤ Redis's per GET" "${read_cpu}×" "≤ 1.0×" "$(at_most "$read_cpu" 1)"
    goal "#19 ${name%-read} reads p99 ≤ 1 ms ($concurrency in flight)" "$(ms "$(json "$out/$name.json" latency_us/p99)") ms" "≤ 1 ms" "$(at_most "$(json "$out/$name.json" latency_us/p99)" 1000)"
  done
  [ "$only_floors" = 1 ] ||
    goal "verified mix: every reply correct" "$(json "$out/verified-mix.json" error_count) errors in $(json "$out/verified-mix.json" requests)" "0" "$([ "$(json "$out/verified-mix.json" error_count)" = 0 ] && echo 1 || echo 0)"

  log "3/8 durable creates, book updates and progress writes vs Redis SET appendfsync always"
  # Each write run counted: journal records and fdatasyncs per request from serve's own counters.
  for name in book-create book-update progress-watch; do
    counted_bench lyceum_counters "$name" --scenario "$name" --in-flight "$concurrency" --duration "${run_seconds}s"
  done
  for name in book-create book-update progress-watch; do measure_syscalls "$name" "$lyceum_pid" lyceum_requests "$name"; done
  create_rps=$(json "$out/book-create.json" requests_per_second)
  start_redis "$work/redis-always" --appendonly yes --appendfsync always
  redis_set=$(redis_bench set "$concurrency" "$(redis_count "$create_rps")" redis-set-always)
  measure_syscalls redis-set-always "$redis_pid" redis_requests set
  stop_redis
  redis_set_cpu=$(cpu "$out/redis-set-always.json")
  throughput_row "durable book creates (always)$(journal_text book-create), req/s vs Redis SET appendfsync always" book-create redis-set-always
  throughput_row "durable book updates (always)$(journal_text book-update), req/s vs Redis SET appendfsync always" book-update redis-set-always
  throughput_row "durable progress writes (mark_watched, then mark_unwatched; always)$(journal_text progress-watch), req/s vs Redis SET appendfsync always" progress-watch redis-set-always
  cpu_row "durable create" book-create "$redis_set_cpu" "redis-server per SET always"
  cpu_row "durable update" book-update "$redis_set_cpu" "redis-server per SET always"
  cpu_row "durable progress write" progress-watch "$redis_set_cpu" "redis-server per SET always"
  row "durable creates p99, ms vs Redis SET always p99" "$(ms "$(json "$out/book-create.json" latency_us/p99)")" "$(ms "$(json "$out/redis-set-always.json" latency_us/p99)")" "$(divide "$(json "$out/book-create.json" latency_us/p99)" "$(json "$out/redis-set-always.json" latency_us/p99)")"
  goal "#26 durable creates ≥ 1.0× Redis SET always" "$(divide "$create_rps" "$redis_set")×" "≥ 1.0×" "$(at_most 1 "$(divide "$create_rps" "$redis_set")")"
  create_cpu=$(divide "$(cpu "$out/book-create.json")" "$redis_set_cpu")
  goal "#26 server CPU per durable create ≤ Redis's per SET always" "${create_cpu}×" "≤ 1.0×" "$(at_most "$create_cpu" 1)"
  # "Within 1.2× of that": at least 1/1.2 of Redis's rate, at most 1.2× its CPU per SET.
  for name in book-update progress-watch; do
    what=$([ "$name" = book-update ] && echo "durable updates" || echo "durable progress writes")
    rate=$(divide "$(json "$out/$name.json" requests_per_second)" "$redis_set") write_cpu=$(divide "$(cpu "$out/$name.json")" "$redis_set_cpu")
    goal "#26 $what within 1.2× of Redis SET always" "${rate}×" "≥ 0.83× (1 ÷ 1.2)" "$(at_most 0.8333 "$rate")"
    goal "#26 server CPU per ${what%s} within 1.2× of Redis's per SET always" "${write_cpu}×" "≤ 1.2×" "$(at_most "$write_cpu" 1.2)"
  done
  goal "#26 instructions per durable create (callgrind)" "$(instructions_of book-create)" "≤ 50000" "$(at_most "$(instructions_of book-create)" 50000)"
  goal "#26 instructions per book read (callgrind)" "$(instructions_of book-read)" "≤ 30000" "$(at_most "$(instructions_of book-read)" 30000)"
  if [ "$only_floors" = 0 ]; then
  p999=$(json "$out/book-read-open.json" latency_us/p99.9)
  row "book reads open loop at $half req/s (50% of peak): p99.9 ms, vs closed-loop p99.9" "$(ms "$p999")" "$(ms "$(json "$out/book-read.json" latency_us/p99.9)")" "$(divide "$p999" "$(json "$out/book-read.json" latency_us/p99.9)")"
  goal "#26 open loop at 50% of peak: p99.9 ≤ 2 ms" "$(ms "$p999") ms" "≤ 2 ms" "$(at_most "$p999" 2000)"
  fi
  stop_lyceum
}

# 3b. CURVE (issue 16): the same reads and durable creates with every connection encrypted and
# authenticated (an `app` key), beside the plaintext runs of parts 2–3 on the same machine.
part_curve() {
  log "3b/8 book reads and durable creates with CURVE vs plaintext"
  mkdir -p "$work/keys/clients"
  "$lyceum" keys generate server --dir "$work/keys" --role admin >/dev/null
  "$lyceum" keys generate bench --dir "$work/keys/clients" --role app >/dev/null
  client_keys=(--curve-secret-key "$work/keys/clients/bench_secret" --curve-server-key "$work/keys/server")
  start_lyceum "$work/lyceum-curve" always --curve-secret-key "$work/keys/server_secret" --authorized-keys "$work/keys/clients"
  bench curve-book-read --scenario book-read --in-flight "$concurrency" --duration "${run_seconds}s"
  counted_bench lyceum_counters curve-book-create --scenario book-create --in-flight "$concurrency" --duration "${run_seconds}s"
  stop_lyceum
  client_keys=()
  for kind in book-read book-create; do
    plain_rps=$(json "$out/$kind.json" requests_per_second) curve_rps=$(json "$out/curve-$kind.json" requests_per_second)
    plain_p50=$(json "$out/$kind.json" latency_us/p50) curve_p50=$(json "$out/curve-$kind.json" latency_us/p50)
    row "$kind with CURVE$(journal_text "curve-$kind"), req/s vs plaintext" "$(printf %.0f "$curve_rps")" "$(printf %.0f "$plain_rps")" "$(divide "$curve_rps" "$plain_rps")"
    row "$kind with CURVE, p50 µs vs plaintext" "$curve_p50" "$plain_p50" "$(divide "$curve_p50" "$plain_p50")"
    row "$kind with CURVE, server CPU per request µs vs plaintext" "$(cpu "$out/curve-$kind.json")" "$(cpu "$out/$kind.json")" "$(divide "$(cpu "$out/curve-$kind.json")" "$(cpu "$out/$kind.json")")"
    goal "#16 $kind: CURVE costs ≤ 10% of throughput" "$(divide "$curve_rps" "$plain_rps")×" "≥ 0.90×" "$(at_most 0.90 "$(divide "$curve_rps" "$plain_rps")")"
    goal "#16 $kind: CURVE adds ≤ 10 µs of p50" "$((curve_p50 - plain_p50)) µs" "≤ 10 µs" "$(at_most "$((curve_p50 - plain_p50))" 10)"
  done
}

# 5. RECORDS books: resident memory, restart (replay) and the journal layer alone, vs Redis.
part_memory() {
  log "5/8 $records books: memory, restart, journal replay"
  start_lyceum "$work/million" none
  rss_empty=$(rss_kib "$lyceum_pid")
  "$lyceum" bench --endpoint "$endpoint" --connections 4 --scenario book-create --in-flight "$concurrency" --warmup 0s \
    --requests "$records" --seed 7 --label "load $records books" --json --progress 10s >"$out/load-books.json" 2> >(grep --line-buffered -v '^ts=' >&2)
  rss_full=$(rss_kib "$lyceum_pid")
  stop_lyceum
  start_lyceum "$work/million" none
  restart_seconds=$ready_seconds
  rss_replayed=$(rss_kib "$lyceum_pid")
  stop_lyceum
  journal=$(RECORDS=$records SECTIONS=replay JOURNAL_BENCH_BIN=$BIN_DIR/journal-bench Benchmarks/journal-bench.sh 2>/dev/null)
  redis_load=$(awk '/redis AOF load/ { print $(NF-2) }' <<<"$journal")
  redis_rss=$(awk '/redis AOF load/ { print $(NF-1) }' <<<"$journal")
  journal_seconds=$(awk '/^journal replay/ { print $(NF-2) }' <<<"$journal")
  lyceum_mib=$(awk -v k="$rss_replayed" 'BEGIN { printf "%.1f", k / 1024 }')
  row "$records books: server restart (replay + first answer), s vs Redis AOF load" "$restart_seconds" "$redis_load" "$(divide "$restart_seconds" "$redis_load")"
  row "$records records: journal layer replay alone (journal-bench), s vs Redis AOF load" "$journal_seconds" "$redis_load" "$(divide "$journal_seconds" "$redis_load")"
  row "$records books: resident memory after restart, MiB vs Redis RSS ($records keys, 200 B values)" "$lyceum_mib" "$redis_rss" "$(divide "$lyceum_mib" "$redis_rss")"
  row "$records books: resident memory while loading, MiB (empty server: $(awk -v k="$rss_empty" 'BEGIN { printf "%.1f", k / 1024 }'))" "$(awk -v k="$rss_full" 'BEGIN { printf "%.1f", k / 1024 }')" "$redis_rss" "$(divide "$(awk -v k="$rss_full" 'BEGIN { print k / 1024 }')" "$redis_rss")"
  goal "#26 restart with $records books ≤ 1.0× Redis AOF load (to the first answer)" "$(divide "$restart_seconds" "$redis_load")×" "≤ 1.0×" "$(at_most "$(divide "$restart_seconds" "$redis_load")" 1)"
  goal "#19 resident memory with $records books after restart ≤ 1.0× Redis" "$(divide "$lyceum_mib" "$redis_rss")×" "≤ 1.0×" "$(at_most "$(divide "$lyceum_mib" "$redis_rss")" 1)"
  loading_memory=$(divide "$(awk -v k="$rss_full" 'BEGIN { print k / 1024 }')" "$redis_rss")
  goal "#19 resident memory right after loading $records books ≤ 1.0× Redis" "${loading_memory}×" "≤ 1.0×" "$(at_most "$loading_memory" 1)"
}
