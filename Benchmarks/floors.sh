# Sourced by Benchmarks/suite.sh (issue 38): the floors, small C servers over libzmq doing the least
# that Lyceum's requests need (Benchmarks/floors/), driven by the same `lyceum bench` as Lyceum's rows,
# and the journal counters that say what each write row wrote. Uses the suite's helpers and variables
# ($work, $out, $lyceum, $endpoint, $server_pids, bench, row, goal, …); never run on its own.

# The catalog's replies as ID<TAB>REPLY lines from the catalog at ENDPOINT, every course's get_course
# reply byte for byte (the NATS responder's and the floors' file); with a second argument, also the
# line `list_courses<TAB>REPLY` that `lyceum bench`'s discovery asks for (the floors answer it).
catalog_replies() {
  /usr/bin/python3 - "$lyceum" "$1" "${2:-}" <<'PY'
import json, subprocess, sys
lyceum, broker, listing = sys.argv[1:4]
def call(body):
    return subprocess.run([lyceum, "call", "--broker", broker, "catalog", json.dumps(body)],
                          check=True, capture_output=True, text=True).stdout.strip()
cursor = None
while True:
    page = json.loads(call({"op": "list_courses", **({"cursor": cursor} if cursor else {})}))["result"]
    for course in page["courses"]:
        print(course["id"] + "\t" + call({"op": "get_course", "course": course["id"]}))
    cursor = page.get("next_cursor")
    if not cursor:
        break
if listing:
    # lyceum bench discovers the catalog with pages of 100; the floors answer the first only.
    first = call({"op": "list_courses", "limit": 100})
    if json.loads(first)["result"].get("next_cursor"):
        sys.exit("catalog_replies: more than 100 courses: the floors answer one page of list_courses")
    print("list_courses\t" + first)
PY
}

# Lyceum's journal counters and handled requests so far, "REQUESTS RECORDS SYNCS", summed over every
# service, from the metrics port of the `serve` that start_lyceum started ($metrics_port).
lyceum_counters() {
  /usr/bin/python3 - "$metrics_port" <<'PY'
import sys, urllib.request
sums = {"lyceum_requests_total": 0, "lyceum_journal_appends_total": 0, "lyceum_journal_syncs_total": 0}
for line in urllib.request.urlopen(f"http://127.0.0.1:{sys.argv[1]}/metrics", timeout=10).read().decode().splitlines():
    name = line.split("{")[0].split(" ")[0]
    if name in sums:
        sums[name] += float(line.rsplit(" ", 1)[1])
print("%d %d %d" % tuple(sums.values()))
PY
}

# The floor server's counters so far, "REQUESTS RECORDS SYNCS": it writes them to its log on SIGUSR1.
floor_counters() {
  local lines
  lines=$(grep -c "floor_server: requests" "$work/floor.log" 2>/dev/null || true)
  kill -USR1 "$floor_pid"
  until [ "$(grep -c "floor_server: requests" "$work/floor.log")" -gt "${lines:-0}" ]; do sleep 0.02; done
  grep "floor_server: requests" "$work/floor.log" | tail -1 | awk '{ print $3, $5, $7 }'
}

# counted_bench COUNTERS NAME OPTIONS…: `bench NAME OPTIONS…` with the server's counters (the function
# COUNTERS: lyceum_counters or floor_counters) read before and after it; NAME.journal in OUT gets
# "RECORDS SYNCS", journal records and fdatasyncs per request the server handled over the run, its
# warm-up included (the counters cannot tell it apart; a run writes alike throughout).
counted_bench() {
  local counters=$1 name=$2 before after
  shift
  before=$($counters)
  bench "$@"
  after=$($counters)
  awk -v b="$before" -v a="$after" 'BEGIN { split(b, x, " "); split(a, y, " "); n = y[1] - x[1]
    if (n > 0) printf "%.2f %.3f\n", (y[2] - x[2]) / n, (y[3] - x[3]) / n }' >"$out/$name.journal"
}
# "RECORDS / SYNCS" per request of a counted run, n/a when not counted.
journal_of() { [ -s "$out/$1.journal" ] && awk '{ print $1 " / " $2 }' "$out/$1.journal" || echo n/a; }
# For a write row's name: ", RECORDS journal records and SYNCS fdatasyncs a request" of a counted run.
journal_text() { [ ! -s "$out/$1.journal" ] || awk '{ printf ", %s journal records and %s fdatasyncs a request", $1, $2 }' "$out/$1.journal"; }

# Builds the floors (cc, -lzmq) into $work: floor_server, and mdp_reference for the hop.
build_floors() {
  local zmq_flags
  zmq_flags=$(pkg-config --cflags --libs libzmq 2>/dev/null || echo -lzmq)
  cc -std=c11 -O2 -o "$work/floor_server" Benchmarks/floors/floor_server.c $zmq_flags
  cc -std=c11 -O2 -o "$work/mdp_reference" Benchmarks/MajordomoEcho/mdp_reference.c $zmq_flags -lpthread
}

# Starts floor_server on a free loopback port with its journal in DIR and OPTIONS (--sync,
# --catalog, --curve-secret); sets $endpoint, $floor_pid and server_pids. Returns once it answers.
floor_pid=""
start_floor() {
  local dir=$1
  shift
  mkdir -p "$dir"
  endpoint="tcp://127.0.0.1:$(free_port)"
  "$work/floor_server" --endpoint "$endpoint" --journal "$dir/journal.jsonl" "$@" 2>>"$work/floor.log" &
  floor_pid=$! server_pids=("$!")
  until "$lyceum" call --broker "$endpoint" --timeout 1000 "${client_keys[@]}" books '{"op":"list","learner":"suite-probe"}' >/dev/null 2>&1; do
    kill -0 "$floor_pid" 2>/dev/null || { log "floor_server exited; its log:"; cat "$work/floor.log" >&2; exit 1; }
    sleep 0.02
  done
}
stop_floor() { [ -z "$floor_pid" ] || { kill -TERM "$floor_pid" 2>/dev/null || true; wait "$floor_pid" 2>/dev/null || true; floor_pid=""; }; }

# floor_row WHAT RUN FLOOR_RUN: RUN's requests/s as a ratio to its floor's, with both runs' system
# calls, context switches and instructions per request (for writes, journal records and fdatasyncs
# per request of both in the row's name), then their server CPU per request.
floor_row() {
  local written=""
  [ ! -s "$out/$2.journal" ] || written="; journal records / fdatasyncs a request $(journal_of "$2") vs $(journal_of "$3")"
  throughput_row "$1, req/s vs its C floor$written" "$2" "$3"
  local lyceum_cpu floor_cpu
  lyceum_cpu=$(cpu "$out/$2.json") floor_cpu=$(cpu "$out/$3.json")
  row "server CPU per request of $2, µs vs its C floor's" "$lyceum_cpu" "$floor_cpu" "$(divide "$lyceum_cpu" "$floor_cpu")"
}

# run_floors: part 6b, after parts 2–3b and 6 ran (part 2 wrote the catalog's replies to
# $work/floor-catalog.tsv with catalog_replies … list; part 3b the CURVE keys). Each Lyceum row of this run that has a floor, beside it: reads vs floor_server,
# durable writes vs floor_server --sync, CURVE rows vs floor_server with CURVE, broker + worker vs
# mdp_reference's broker and workers answering the catalog; their instructions under callgrind; rows
# and issue 38's goals.
run_floors() {
  local name scenario
  build_floors
  log "6b/8 floors: reads from floor_server (no sync)"
  start_floor "$work/floor-reads" --catalog "$work/floor-catalog.tsv"
  for name in catalog-read book-read; do
    bench "floor-$name" --scenario "$name" --in-flight "$concurrency" --duration "${run_seconds}s"
    measure_syscalls "floor-$name" "$floor_pid" lyceum_requests "$name"
  done
  stop_floor
  log "6b/8 floors: durable writes to floor_server --sync (one fdatasync per wake-up)"
  start_floor "$work/floor-writes" --sync --catalog "$work/floor-catalog.tsv"
  for name in book-create book-update progress-watch; do
    counted_bench floor_counters "floor-$name" --scenario "$name" --in-flight "$concurrency" --duration "${run_seconds}s"
    measure_syscalls "floor-$name" "$floor_pid" lyceum_requests "$name"
  done
  stop_floor
  log "6b/8 floors: CURVE reads and durable creates"
  client_keys=(--curve-secret-key "$work/keys/clients/bench_secret" --curve-server-key "$work/keys/server")
  start_floor "$work/floor-curve" --sync --curve-secret "$work/keys/server_secret"
  bench floor-curve-book-read --scenario book-read --in-flight "$concurrency" --duration "${run_seconds}s"
  counted_bench floor_counters floor-curve-book-create --scenario book-create --in-flight "$concurrency" --duration "${run_seconds}s"
  stop_floor
  client_keys=()
  local hop=0
  [ "$worker_read_ran" = 1 ] || floors_note="**No floor for broker + worker: part 6's run of them did not happen (NATS missing: \`scripts/ensure-deps.sh nats\`).**"
  if [ "$worker_read_ran" = 1 ]; then
    hop=1
    log "6b/8 floors: catalog reads through the C broker to 16 C workers (mdp_reference, tcp)"
    mkfifo "$work/hold-mdp"
    "$work/mdp_reference" tcp 16 "$work/floor-catalog.tsv" <"$work/hold-mdp" >"$work/mdp.endpoint" 2>>"$work/floor.log" &
    local mdp_pid=$!
    extra_pids+=("$mdp_pid")
    exec {hold_mdp}>"$work/hold-mdp"
    until [ -s "$work/mdp.endpoint" ]; do kill -0 "$mdp_pid" || { log "mdp_reference exited"; cat "$work/floor.log" >&2; exit 1; }; sleep 0.02; done
    endpoint=$(head -1 "$work/mdp.endpoint") server_pids=("$mdp_pid")
    until "$lyceum" call --broker "$endpoint" --timeout 1000 catalog '{"op":"list_courses"}' >/dev/null 2>&1; do sleep 0.05; done
    bench floor-worker-catalog-read --scenario catalog-read --in-flight "$concurrency" --duration "${run_seconds}s"
    measure_syscalls floor-worker-catalog-read "$mdp_pid" lyceum_requests catalog-read
    exec {hold_mdp}>&-
    stop_extra
  fi
  if [ "$quick" = 1 ]; then
    instructions_note+=" **Floors' instructions not measured in --quick.**"
  elif command -v callgrind_control >/dev/null; then
    for scenario in book-create book-read; do
      log "6b/8 floors: instructions per request under callgrind: $scenario"
      FLOOR="$work/floor_server" Benchmarks/request-cost.sh "$lyceum" "$scenario" 2000 6000 always 2>>"$work/request-cost.log" |
        awk '{ print $2 }' >"$out/floor-$scenario.instructions" || rm -f "$out/floor-$scenario.instructions"
    done
  fi

  floor_row "catalog reads (get_course), lyceum serve" catalog-read floor-catalog-read
  floor_row "book reads (get), lyceum serve" book-read floor-book-read
  floor_row "durable book creates (always)" book-create floor-book-create
  floor_row "durable book updates (always)" book-update floor-book-update
  floor_row "durable progress writes (mark_watched, mark_unwatched; always)" progress-watch floor-progress-watch
  floor_row "book reads with CURVE" curve-book-read floor-curve-book-read
  floor_row "durable book creates with CURVE" curve-book-create floor-curve-book-create
  [ "$hop" = 0 ] || floor_row "catalog reads through lyceum broker + lyceum worker (16 sessions)" worker-catalog-read floor-worker-catalog-read
  local ratio
  for name in book-create book-read catalog-read; do
    ratio=$(divide "$(json "$out/$name.json" requests_per_second)" "$(json "$out/floor-$name.json" requests_per_second)")
    goal "#38 $name ≥ 0.9× its C floor" "${ratio}×" "≥ 0.9×" "$(at_most 0.9 "$ratio")"
    ratio=$(divide "$(cpu "$out/$name.json")" "$(cpu "$out/floor-$name.json")")
    goal "#38 server CPU per $name ≤ 1.2× its C floor's" "${ratio}×" "≤ 1.2×" "$(at_most "$ratio" 1.2)"
  done
  if [ "$hop" = 1 ]; then
    ratio=$(divide "$(json "$out/worker-catalog-read.json" requests_per_second)" "$(json "$out/floor-worker-catalog-read.json" requests_per_second)")
    goal "#38 broker + worker ≥ 0.9× the C broker + C workers" "${ratio}×" "≥ 0.9×" "$(at_most 0.9 "$ratio")"
    ratio=$(divide "$(cpu "$out/worker-catalog-read.json")" "$(cpu "$out/floor-worker-catalog-read.json")")
    goal "#38 server CPU per request through broker + worker ≤ 1.2× the C pair's" "${ratio}×" "≤ 1.2×" "$(at_most "$ratio" 1.2)"
  fi
  if [ -s "$out/nats-request.json" ] && [ "$nats_ran" = 1 ]; then
    ratio=$(divide "$(json "$out/worker-catalog-read.json" requests_per_second)" "$(json "$out/nats-request.json" requests_per_second)")
    goal "#38 broker + worker ≥ 0.8× NATS request/reply" "${ratio}×" "≥ 0.8×" "$(at_most 0.8 "$ratio")"
  fi
  goal "#38 instructions per durable create (callgrind)" "$(instructions_of book-create)" "≤ 40000" "$(at_most "$(instructions_of book-create)" 40000)"
}
