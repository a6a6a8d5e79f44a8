# Benchmarks/suite.sh, sourced: parts 7 and 8.

# 7. Scale-out: Benchmarks/cluster-bench.sh writes cluster.md, cluster.json and cluster.svg beside these.
part_scale_out() {
  log "7/8 scale-out: writes with 1, 2, 4 partitioned worker processes; one broker's routing ceiling"
  BIN_DIR=$BIN_DIR OUT=$out RUN_SECONDS=$run_seconds CONCURRENCY=$concurrency Benchmarks/cluster-bench.sh \
    $([ "$quick" = 1 ] && echo --quick) >/dev/null
  cluster() { json "$out/cluster.json" "$1"; }
  for index in 1 2; do
    workers=$(cluster "writes/$index/workers")
    row "durable book creates through one broker --partitions 16, writes/s: $workers worker processes vs 1" \
      "$(printf %.0f "$(cluster "writes/$index/requests_per_second")")" "$(printf %.0f "$(cluster writes/0/requests_per_second)")" \
      "$(divide "$(cluster "writes/$index/requests_per_second")" "$(cluster writes/0/requests_per_second)")"
  done
  partitioned_ceiling=$(cluster routing/partitioned/ceiling_requests_per_second)
  unpartitioned_ceiling=$(cluster routing/unpartitioned/ceiling_requests_per_second)
  row "one broker's routing ceiling (1 s ÷ broker CPU per request), req/s: --partitions 16 vs unpartitioned" \
    "$(printf %.0f "$partitioned_ceiling")" "$(printf %.0f "$unpartitioned_ceiling")" "$(divide "$partitioned_ceiling" "$unpartitioned_ceiling")"
}

# 8. Replication (issue 25, Benchmarks/replication-bench.sh): writes at R = 1 and R = 3 and the
# fail-over of a leader's host over 10 kills, beside NATS JetStream R3; replication.md in OUT.
part_replication() {
  if [ "$(id -u)" -ne 0 ] || [ ${#nats_missing[@]} -gt 0 ] || ! command -v etcd >/dev/null; then
    replication_note="**Replication rows skipped: they need root, etcd and nats-server, go and nats.go (\`scripts/ensure-deps.sh test nats\`).**"
    log "8/8 ${replication_note//\*/}"
  else
    log "8/8 replication: writes at R = 1 and R = 3, fail-over over ${KILLS:-10} kills of a leader's host, beside JetStream R3"
    BIN_DIR=$BIN_DIR OUT=$out RUN_SECONDS=$run_seconds CONCURRENCY=$concurrency Benchmarks/replication-bench.sh >/dev/null
    replication() { json "$out/replication.json" "$1"; }
    lyceum_rate=$(replication lyceum/throughput/3/writes_per_second) js_rate=$(replication jetstream/throughput/publishes_per_second)
    row "durable book creates at R = 3, writes/s vs JetStream R3 publishes/s with acks, $concurrency in flight" \
      "$(printf %.0f "$lyceum_rate")" "$(printf %.0f "$js_rate")" "$(divide "$lyceum_rate" "$js_rate")"
    row "durable book creates, writes/s: R = 3 vs R = 1 (the cost of replication)" \
      "$(printf %.0f "$lyceum_rate")" "$(printf %.0f "$(replication lyceum/throughput/1/writes_per_second)")" \
      "$(divide "$lyceum_rate" "$(replication lyceum/throughput/1/writes_per_second)")"
    lyceum_cpu=$(printf %.1f "$(replication lyceum/throughput/3/server_cpu_us_per_write)") js_cpu=$(printf %.1f "$(replication jetstream/throughput/server_cpu_us_per_publish)")
    row "server CPU per write at R = 3, µs (workers + brokers) vs per JetStream R3 publish (3 nats-servers)" "$lyceum_cpu" "$js_cpu" "$(divide "$lyceum_cpu" "$js_cpu")"
    for figure in p50 max; do
      lyceum_gap=$(printf %.2f "$(replication lyceum/failover/summary/$figure)") js_gap=$(printf %.2f "$(replication jetstream/failover/summary/$figure)")
      row "fail-over $figure, s, kill -9 of the leader's host (longest gap between acknowledgements) vs JetStream R3" "$lyceum_gap" "$js_gap" "$(divide "$lyceum_gap" "$js_gap")"
    done
    row "acknowledged writes lost over the kills vs JetStream R3 (every acknowledged write read back)" \
      "$(replication lyceum/failover/lost) of $(replication lyceum/failover/acknowledged)" "$(replication jetstream/failover/lost) of $(replication jetstream/failover/acknowledged)" ""
  fi
}
