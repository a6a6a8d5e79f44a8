#!/usr/bin/env bash
# Starts a Lyceum cluster on this machine, each part its own process: one broker, one worker
# process for the stateful services (books, progress: one journal each, so one process each)
# and N worker processes for the stateless catalog. Logs go to DATA/logs/; a line
# "started NAME pid PID" is printed per process, then "cluster ready". SIGTERM or SIGINT (Ctrl-C)
# stops every process with SIGTERM, which drains them, and waits for them.
#
# The broker hosts the event forwarder: `lyceum watch --connect` its events endpoint sees the
# progress worker's events.
#
# usage: deploy/local-cluster.sh [--lyceum PATH] [--workers N] [--port PORT] [--data DIR]
#                                [--metrics-port BASE] [--events-port BASE] [--config FILE]
#   --lyceum        the lyceum binary (default: .build/debug/lyceum, else lyceum on PATH)
#   --workers       catalog worker processes (default 2)
#   --port          the broker's loopback port (default 5555)
#   --data          journals and logs (default ./lyceum-cluster)
#   --metrics-port  when set, the broker serves metrics on BASE, the stateful worker on BASE+1,
#                   catalog worker i on BASE+1+i
#   --events-port   when set, events are published on BASE and the forwarder takes them in on
#                   BASE+1 (default: lyceum's, 5556 and 5558)
#   --config        a configuration file passed to every process (flags here win over it)
set -euo pipefail

lyceum=""
workers=2
port=5555
data=./lyceum-cluster
metrics=""
events=""
config=()
while [ $# -gt 0 ]; do
  case "$1" in
    --lyceum) lyceum=$2; shift 2 ;;
    --workers) workers=$2; shift 2 ;;
    --port) port=$2; shift 2 ;;
    --data) data=$2; shift 2 ;;
    --metrics-port) metrics=$2; shift 2 ;;
    --config) config=(--config "$2"); shift 2 ;;
    --events-port) events=$2; shift 2 ;;
    -h|--help) sed -n '2,22p' "$0"; exit 0 ;;
    *) echo "local-cluster: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
if [ -z "$lyceum" ]; then
  if [ -x .build/debug/lyceum ]; then lyceum=.build/debug/lyceum; else lyceum=$(command -v lyceum); fi
fi
case "$workers" in ''|*[!0-9]*) echo "local-cluster: --workers needs a number" >&2; exit 2 ;; esac

endpoint="tcp://127.0.0.1:$port"
broker_events=()
worker_events=()
if [ -n "$events" ]; then
  forwarder="tcp://127.0.0.1:$((events + 1))"
  broker_events=(--events-endpoint "tcp://127.0.0.1:$events" --forwarder-endpoint "$forwarder")
  worker_events=(--forwarder-endpoint "$forwarder")
fi
mkdir -p "$data/logs"
pids=()

stop() {
  trap - EXIT INT TERM
  if [ ${#pids[@]} -gt 0 ]; then
    kill -TERM "${pids[@]}" 2>/dev/null || true
    wait "${pids[@]}" 2>/dev/null || true
  fi
  echo "cluster stopped"
}
trap stop EXIT
trap 'exit 0' INT TERM

# start NAME METRICS_OFFSET ARGS...: one process, its stderr in DATA/logs/NAME.log.
start() {
  local name=$1 offset=$2
  shift 2
  local extra=()
  [ -n "$metrics" ] && extra=(--metrics-port $((metrics + offset)))
  "$lyceum" "$@" ${config[@]+"${config[@]}"} ${extra[@]+"${extra[@]}"} 2>"$data/logs/$name.log" &
  pids+=($!)
  echo "started $name pid $!"
}

start broker 0 broker --endpoint "$endpoint" ${broker_events[@]+"${broker_events[@]}"}
start state-worker 1 worker --broker "$endpoint" --service books --service progress --data "$data" ${worker_events[@]+"${worker_events[@]}"}
for i in $(seq 1 "$workers"); do
  start "catalog-worker-$i" $((1 + i)) worker --broker "$endpoint" --service catalog
done
echo "cluster ready: broker $endpoint, logs in $data/logs"
wait
