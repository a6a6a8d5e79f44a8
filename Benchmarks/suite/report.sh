# Benchmarks/suite.sh, sourced: the charts and results.md.

# The SVG charts of the parts that ran.
plot_charts() {
  charts=()
  if [ "$only_nats" = 0 ] && [ "$only_cluster" = 0 ] && [ "$only_pages" = 0 ] && [ "$only_floors" = 0 ]; then
    "$lyceum" bench plot "$out/reads.svg" "$out/catalog-read.json" "$out/book-read.json" "$out/curve-book-read.json" "$out/book-read-open.json" "$out/redis-get.json"
    "$lyceum" bench plot "$out/writes.svg" "$out/book-create.json" "$out/book-update.json" "$out/progress-watch.json" "$out/curve-book-create.json" "$out/redis-set-always.json"
    charts+=(reads writes)
  fi
  if [ "$pages_ran" = 1 ]; then
    "$lyceum" bench plot "$out/pages.svg" "$out/pages-reads-alone.json" "$out/pages-reads-beside.json" "$out/pages-lister.json"
    charts+=(pages)
  fi
  if [ "$nats_ran" = 1 ]; then
    "$lyceum" bench plot "$out/nats.svg" "$out/worker-catalog-read.json" "$out/nats-request.json" "$out/book-create-interval.json" "$out/nats-jetstream.json"
    charts+=(nats)
  fi
}

# results.md in OUT: the machine, how each part was measured, the rows and the goals.
write_results() {
  {
    echo "# Lyceum benchmark results, $(date -u '+%F %H:%M UTC')"
    echo
    echo "Machine: $(nproc) cores ($(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo)), $(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo),"
    echo "$(uname -sr), $(redis-server --version | cut -d' ' -f1-3), commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)."
    echo "Load average $load_before at the start, $load_after at the end: clients, server and Redis share the machine."
    echo "$([ "$quick" = 1 ] && echo "**Quick mode: tiny counts, figures are not meaningful.**")"
    [ -z "$nats_note" ] || echo "$nats_note"
    [ "$only_nats" = 0 ] || echo "**Only part 6 (\`--only-nats\`): the NATS rows and the Lyceum rows beside them.**"
    [ "$only_cluster" = 0 ] || echo "**Only part 7 and part 8 (\`--only-cluster\`): the scale-out and replication rows.**"
    [ "$only_pages" = 0 ] || echo "**Only part 5b (\`--only-pages\`): one learner's library.**"
    [ "$only_floors" = 0 ] || echo "**Only the rows with a floor (\`--only-floors\`): parts 2, 3, 3b, 3c for creates and reads, 6's broker + worker, 6b.**"
    [ -z "$floors_note" ] || echo "$floors_note"
    [ -z "$replication_note" ] || echo "$replication_note"
    [ "$no_cluster" = 0 ] || echo "**Without parts 7 and 8 (\`--no-cluster\`): no scale-out or replication rows.**"
    [ -z "$syscalls_note" ] || echo "$syscalls_note"
    [ -z "$instructions_note" ] || echo "$instructions_note"
    [ "$only_nats" = 1 ] || [ "$only_pages" = 1 ] || [ "$only_floors" = 1 ] || [ "$no_cluster" = 1 ] || echo "Scale-out (part 7): one \`lyceum broker --partitions 16\` and partitioned worker processes; every point, its load average and CPU per write in [cluster.md](cluster.md)."
    [ "$only_nats" = 1 ] || [ "$only_pages" = 1 ] || [ "$only_floors" = 1 ] || [ "$no_cluster" = 1 ] || [ "$quick" = 1 ] || [ -n "$replication_note" ] || echo "Replication (part 8): R = 1 vs R = 3 and fail-over beside JetStream R3, every kill and the timeline in [replication.md](replication.md)."
    echo
    echo "Lyceum runs as one \`lyceum serve\` process (the broker answers catalog, books and progress itself; journals under \`always\`), driven by"
    echo "\`lyceum bench\` with 4 connections, ${run_seconds} s per run after a $warmup warm-up; Redis by \`redis-benchmark\` (200-byte values)."
    echo "Beside NATS ($("$nats_server" --version 2>/dev/null || echo "not installed")): \`lyceum broker\` and \`lyceum worker --service catalog\` as separate processes vs"
    echo "nats-server and a responder process (\`Benchmarks/NATSLoad\`, Go, Debian's nats.go, 4 connections, same in flight and times)."
    echo "Server CPU per request: utime+stime of the server processes (\`/proc/PID/stat\`) over the measured interval ÷ measured"
    echo "requests (for Redis, over the whole \`redis-benchmark\` run), so the server's cost shows apart from the load generator's."
    echo "Per request, beside each throughput row, Lyceum vs its reference (issue 26): system calls (\`strace -c -f\` on every thread"
    echo "of the server during a separate run of $strace_requests requests less one of 100, so set-up cancels; strace slows every call,"
    echo "which changes how many requests a wake-up carries: figures to compare between runs measured alike, not exact counts),"
    echo "context switches voluntary/involuntary (every thread's, \`/proc/PID/task/*/status\`, over the"
    echo "throughput run itself; for Redis over the whole \`redis-benchmark\` run; of broker + worker and nats-server + responder together"
    echo "in part 6) and instructions (\`Benchmarks/request-cost.sh\`:"
    echo "\`serve\` under callgrind, 6,000 requests less 2,000)."
    if [ "$floors" = 1 ]; then
      echo "Floors (part 6b, issue 38): \`Benchmarks/floors/floor_server.c\`, one ROUTER in C over libzmq, driven by the same \`lyceum bench\`: it reads the 7/MDP"
      echo "frames, finds the op without parsing the JSON, answers reads at once from memory, and for a write appends a ~400-byte JSON line"
      echo "(CRC-32 of its value) by one \`pwrite\`, then, with \`--sync\` (the floor of \`always\` rows), one \`fdatasync\` for all a wake-up brought"
      echo "(up to 256 messages) before their replies; the hop's floor is \`mdp_reference\` (the C broker and 16 C workers, one process,"
      echo "two libzmq contexts over TCP) answering the catalog from serve's replies. Journal records / fdatasyncs per request: serve's"
      echo "\`lyceum_journal_appends_total\` and \`lyceum_journal_syncs_total\` over \`lyceum_requests_total\`, the floor's own counters, over each run and its warm-up."
    fi
    echo
    echo "| Measurement | Lyceum | Reference | Ratio | System calls / request | Context switches / request | Instructions / request |"
    echo "|---|---:|---:|---:|---:|---:|---:|"
    printf '%s\n' "${rows[@]}"
    echo
    if [ "$pages_ran" = 1 ]; then
      echo "Part 5b (\`serve --durability none\`): \`books list\` pages of 50 of one learner, ms p50 / p99 of $page_requests requests each, one at a time:"
      echo
      echo "| Books of the learner | Sort | First page | Page 21 |"
      echo "|---:|---|---:|---:|"
      for size in "${library_sizes[@]}"; do
        for sort in "${page_sorts[@]}"; do
          cells=()
          for page in 1 21; do
            cells+=("$(ms "$(json "$out/pages-$size-$sort-$page.json" latency_us/p50)") / $(ms "$(json "$out/pages-$size-$sort-$page.json" latency_us/p99)")")
          done
          echo "| $size | $sort | ${cells[0]} | ${cells[1]} |"
        done
      done
      echo
      p50_p99() { echo "$(ms "$(json "$out/$1.json" latency_us/p50)") / $(ms "$(json "$out/$1.json" latency_us/p99)")"; }
      echo "Book reads of other learners at $pages_rate/s, p50 / p99 ms: alone $(p50_p99 pages-reads-alone), beside the lister $(p50_p99 pages-reads-beside)."
      echo "The lister (${library_sizes[-1]} books by title, one page in flight, every page in turn): $(json "$out/pages-lister.json" requests) pages, p50 / p99 $(p50_p99 pages-lister) ms."
      echo
    fi
    syscall_runs=(catalog-read book-read redis-get book-create book-update progress-watch redis-set-always
      worker-catalog-read nats-request book-create-interval nats-jetstream floor-catalog-read floor-book-read floor-book-create
      floor-book-update floor-progress-watch floor-worker-catalog-read)
    if [ -n "$(for run in "${syscall_runs[@]}"; do [ -s "$out/$run.syscalls" ] && echo "$run"; done)" ]; then
      echo "System calls per request by name (those at 0.01 or more, most first):"
      echo
      echo "| Run | All | By name |"
      echo "|---|---:|---|"
      for run in "${syscall_runs[@]}"; do
        [ -s "$out/$run.syscalls" ] || continue
        echo "| $run | $(syscalls_of "$run") | $(awk '$1 != "all" { printf "%s%s %s", sep, $1, $2; sep = ", " }' "$out/$run.syscalls") |"
      done
      echo
    fi
    echo "| Goal | Figure | Target | Verdict |"
    echo "|---|---|---|---|"
    printf '%s\n' "${goals[@]}"
    echo
    for chart in "${charts[@]}"; do echo "![$chart]($chart.svg)"; echo; done
  } >"$out/results.md"
}
