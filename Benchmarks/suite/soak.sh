# Benchmarks/suite.sh, sourced: the soak.

# The soak (--soak SECONDS): the mix at 50% of its peak, RSS sampled; soak.md in OUT.
run_soak() {
    # Soak: the mix, creates balanced by deletes so that live data stays the same size.
    mix=catalog-read=40,book-read=30,progress-watch=15,quiz-submit=3,book-update=6,book-create=3,book-delete=3
    start_lyceum "$work/soak" always
    bench soak-peak --scenario "$mix" --in-flight "$concurrency" --duration 5s
    rate=$(awk -v r="$(json "$out/soak-peak.json" requests_per_second)" 'BEGIN { printf "%d", r / 2 }')
    log "soak: $soak s of the mix at $rate req/s (50% of its peak), RSS of lyceum serve every 10 s"
    echo "seconds,rss_kib" >"$out/soak-rss.csv"
    "$lyceum" bench --endpoint "$endpoint" --connections 4 --scenario "$mix" --rate "$rate" --duration "${soak}s" \
      --warmup 5s --verify --label "soak $rate req/s" --json --progress 60s >"$out/soak.json" 2> >(grep --line-buffered -v '^ts=' >&2) &
    bench_pid=$!
    started=$(now)
    while kill -0 "$bench_pid" 2>/dev/null; do
      echo "$(awk -v a="$started" -v b="$(now)" 'BEGIN { printf "%.0f", b - a }'),$(rss_kib "$lyceum_pid")" >>"$out/soak-rss.csv"
      for _ in $(seq 1 20); do kill -0 "$bench_pid" 2>/dev/null && sleep 0.5; done
    done
    wait "$bench_pid" || true
    stop_lyceum
    # Flat: the last quarter's RSS is within 5% (+4 MiB) of the RSS after the first quarter (warm-up).
    verdict=$(awk -F, 'NR > 1 { t[n] = $1; r[n++] = $2 } END {
        q = int(n / 4); if (q < 1) q = 1; a = 0; b = 0
        for (i = q; i < 2 * q && i < n; i++) a += r[i]; a /= (2 * q <= n ? q : n - q)
        for (i = n - q; i < n; i++) b += r[i]; b /= q
        printf "%.1f %.1f %d", a / 1024, b / 1024, (b <= a * 1.05 + 4096) ? 1 : 0 }' "$out/soak-rss.csv")
    read -r early late flat <<<"$verdict"
    errors=$(json "$out/soak.json" error_count)
    "$lyceum" bench plot "$out/soak.svg" "$out/soak.json"
    {
      echo "# Lyceum soak, $(date -u '+%F %H:%M UTC')"
      echo
      echo "$soak s of \`$mix\` at $rate req/s (50% of the peak measured first), open loop, verified."
      echo "Machine: $(nproc) cores, $(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo), load average $load_before → $(cut -d' ' -f1-3 /proc/loadavg)."
      echo
      echo "| Check | Figure | Goal | Verdict |"
      echo "|---|---|---|---|"
      echo "| resident memory after warm-up → last quarter | $early → $late MiB | flat (≤ 5% + 4 MiB) | $([ "$flat" = 1 ] && echo met || echo "**missed**") |"
      echo "| errors | $errors of $(json "$out/soak.json" requests) | 0 | $([ "$errors" = 0 ] && echo met || echo "**missed**") |"
      echo "| p99.9 | $(ms "$(json "$out/soak.json" latency_us/p99.9)") ms | ≤ 5 ms | $([ "$(at_most "$(json "$out/soak.json" latency_us/p99.9)" 5000)" = 1 ] && echo met || echo "**missed**") |"
      echo
      echo "RSS samples: [soak-rss.csv](soak-rss.csv); latency: ![soak](soak.svg)"
    } >"$out/soak.md"
    cat "$out/soak.md"
}
