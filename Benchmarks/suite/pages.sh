# Benchmarks/suite.sh, sourced: part 5b.

# 5b. One learner's library (issue 40): what a `books list` page costs as that learner's library
# grows, and what one client paging the largest library without pause does to other learners' reads.
part_pages() {
  pages_ran=1
  smallest=${library_sizes[0]} largest=${library_sizes[-1]}
  log "5b/8 one learner's library: list pages at ${library_sizes[*]} books; book reads at $pages_rate/s beside one client paging $largest books"
  # Until issue 40's limits, serve has no limit of books per learner; with them, 10,000 by default,
  # fewer than the largest library. An unknown LYCEUM_ variable stops serve (Configuration refuses it),
  # so the limit is raised by its flag, and only when `serve --help` lists it.
  limit_flags=()
  if "$lyceum" serve --help | grep -e --max-books-per-learner >/dev/null; then limit_flags=(--max-books-per-learner $((largest * 2))); fi
  start_lyceum "$work/pages" none "${limit_flags[@]}"
  # The seed names the learner (bench-SEED-0): bench-SIZE-0 holds SIZE books.
  for size in "${library_sizes[@]}"; do
    bench "library-$size" --scenario book-create --learners 1 --seed "$size" --in-flight "$concurrency" --requests "$size" --warmup 0s --timeout 60s
    [ "$(json "$out/library-$size.json" error_count)" = 0 ] ||
      { log "5b/8 the library of $size books was not created whole (see $out/library-$size.json)"; exit 1; }
  done
  # The first page and page 21 (its cursor followed once in setup), one request at a time.
  for size in "${library_sizes[@]}"; do
    for sort in "${page_sorts[@]}"; do
      for page in 1 21; do
        bench "pages-$size-$sort-$page" --scenario book-list --learners 1 --seed "$size" --list-sort "$sort" --list-page "$page" \
          --connections 1 --in-flight 1 --requests "$page_requests" --warmup 300ms --timeout 60s
      done
    done
  done
  # Book reads of 20 other learners' 200 books at a fixed rate, alone, then beside one connection
  # listing the largest library by title page after page (the first again after the last), one
  # page in flight, until it is stopped (SIGTERM: it answers what it sent and writes its results).
  bench pages-reads-alone --scenario book-read --learners 20 --books 200 --seed 40 --rate "$pages_rate" --duration "${run_seconds}s"
  "$lyceum" bench --endpoint "$endpoint" --scenario book-list --learners 1 --seed "$largest" --list-sort title --connections 1 --in-flight 1 \
    --duration "$((run_seconds * 3 + 60))s" --warmup 0s --timeout 60s --label "lister, $largest books by title" --json --progress 60s \
    >"$out/pages-lister.json" 2>>"$work/pages-lister.log" &
  extra_pids+=("$!")
  bench pages-reads-beside --scenario book-read --learners 20 --books 200 --seed 40 --rate "$pages_rate" --duration "${run_seconds}s"
  stop_extra
  stop_lyceum
  [ -s "$out/pages-lister.json" ] || { log "5b/8 the lister wrote no results:"; cat "$work/pages-lister.log" >&2; exit 1; }

  for page in 1 21; do
    what=$([ "$page" = 1 ] && echo "first page" || echo "page $page")
    worst_ratio=0 worst_sort=""
    for sort in "${page_sorts[@]}"; do
      large=$(json "$out/pages-$largest-$sort-$page.json" latency_us/p50) small=$(json "$out/pages-$smallest-$sort-$page.json" latency_us/p50)
      between=""
      for size in "${library_sizes[@]:1:${#library_sizes[@]}-2}"; do
        between+="${between:+; }$size books: $(ms "$(json "$out/pages-$size-$sort-$page.json" latency_us/p50)") ms"
      done
      ratio=$(divide "$large" "$small")
      row "books list by $sort, $what of 50, p50 ms: one learner with $largest books vs $smallest${between:+ ($between)}" "$(ms "$large")" "$(ms "$small")" "$ratio"
      if [ "$(at_most "$worst_ratio" "$ratio")" = 1 ]; then worst_ratio=$ratio worst_sort=$sort; fi
    done
    goal "#40 books list, $what at $largest books ≤ 3× at $smallest (p50, the slowest sort of $page_sorts_text)" "${worst_ratio}× (by $worst_sort)" "≤ 3×" "$(at_most "$worst_ratio" 3)"
  done
  lister_rate=$(printf %.1f "$(json "$out/pages-lister.json" requests_per_second)")
  # A read unanswered within lyceum bench's timeout (5 s) counts as timed_out, at that latency.
  failed_reads=""
  for run in alone beside; do
    failed=$(json "$out/pages-reads-$run.json" error_count)
    [ "$failed" = 0 ] || failed_reads+="; $failed of $(json "$out/pages-reads-$run.json" requests) reads $run failed, see pages-reads-$run.json"
  done
  for p in p50 p99; do
    alone=$(json "$out/pages-reads-alone.json" latency_us/$p) beside=$(json "$out/pages-reads-beside.json" latency_us/$p)
    row "book reads (get) of other learners at $pages_rate/s (open loop), $p ms: beside one client listing $largest books without pause ($lister_rate pages/s$failed_reads) vs alone" \
      "$(ms "$beside")" "$(ms "$alone")" "$(divide "$beside" "$alone")"
  done
  reads_ratio=$(divide "$(json "$out/pages-reads-beside.json" latency_us/p99)" "$(json "$out/pages-reads-alone.json" latency_us/p99)")
  goal "#40 other learners' book reads, p99 beside one client paging $largest books ≤ 3× alone" "${reads_ratio}×" "≤ 3×" "$(at_most "$reads_ratio" 3)"
}
