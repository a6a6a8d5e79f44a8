# Benchmarks/suite.sh, sourced: figures from a run's JSON and /proc, and results.md's rows and goals.

log() { echo "suite: $*" >&2; }
divide() { awk -v a="$1" -v b="$2" 'BEGIN { if (b == 0 || a !~ /^[0-9.]+$/) print "n/a"; else printf "%.2f", a / b }'; }
rss_kib() { awk '/^VmRSS:/ { print $2 }' "/proc/$1/status"; }
ms() { awk -v us="$1" 'BEGIN { printf "%.3f", us / 1000 }'; }
# utime+stime of PIDs, in clock ticks, from /proc/PID/stat (fields counted after the command name).
cpu_ticks() { local pid total=0; for pid in "$@"; do total=$((total + $(sed 's/.*) //' "/proc/$pid/stat" | awk '{ print $12 + $13 }'))); done; echo "$total"; }
# Server CPU per request of a run's JSON, µs, one decimal ("n/a" when it was not measured).
cpu() { /usr/bin/python3 "$benchmarks_directory/results.py" cpu "$1"; }
# Server context switches per request of a run's JSON, "VOLUNTARY/INVOLUNTARY" ("n/a" when not measured).
switches_of() { /usr/bin/python3 "$benchmarks_directory/results.py" switches "$1"; }
# row WHAT LYCEUM REFERENCE RATIO [SYSTEM_CALLS CONTEXT_SWITCHES INSTRUCTIONS]: per request, for throughput rows.
row() { rows+=("| $1 | $2 | $3 | $4 | ${5:-} | ${6:-} | ${7:-} |"); }
# goal WHAT FIGURE TARGET VERDICT: VERDICT 1 (met), 0 (missed) or n/a (not measured).
goal() { goals+=("| $1 | $2 | $3 | $(case "$4" in 1) echo met ;; 0) echo "**missed**" ;; *) echo "not measured" ;; esac) |"); }
at_most() { awk -v a="$1" -v b="$2" 'BEGIN { if (a !~ /^[0-9.]+$/ || b !~ /^[0-9.]+$/) print "n/a"; else print (a <= b) ? 1 : 0 }'; }

# Per request, issue 26: system calls (NAME.syscalls, from syscalls_per_request), context switches
# (NAME.json) and instructions (NAME.instructions, from request-cost.sh) of a run; n/a when not measured.
syscalls_of() { [ -s "$out/$1.syscalls" ] && awk '$1 == "all" { print $2 }' "$out/$1.syscalls" || echo n/a; }
instructions_of() { [ -s "$out/$1.instructions" ] && cat "$out/$1.instructions" || echo n/a; }
# throughput_row WHAT RUN REFERENCE_RUN: a row of requests/s of the Lyceum run RUN vs REFERENCE_RUN, with
# both runs' system calls and context switches per request, and RUN's instructions per request.
throughput_row() {
  local lyceum_rps reference_rps
  lyceum_rps=$(json "$out/$2.json" requests_per_second) reference_rps=$(json "$out/$3.json" requests_per_second)
  row "$1" "$(printf %.0f "$lyceum_rps")" "$(printf %.0f "$reference_rps")" "$(divide "$lyceum_rps" "$reference_rps")" \
    "$(syscalls_of "$2") vs $(syscalls_of "$3")" "$(switches_of "$out/$2.json") vs $(switches_of "$out/$3.json")" \
    "$(instructions_of "$2")$([ ! -s "$out/$3.instructions" ] || echo " vs $(instructions_of "$3")")"
}
# measure_syscalls NAME PID RUN…: NAME.syscalls in OUT, from STRACE_REQUESTS requests of `RUN… N`
# less 100 of them; once strace could not attach, no further attempt (a note says so).
measure_syscalls() {
  local name=$1 pid=$2
  shift 2
  [ -z "$syscalls_note" ] || return 0
  log "system calls per request: $name ($strace_requests requests under strace -c -f)"
  syscalls_per_request "$pid" 100 "$strace_requests" "$out/$name.syscalls" "$@" && return 0
  rm -f "$out/$name.syscalls"
  syscalls_note="**System calls per request not measured from $name on: strace could not attach to the server (ptrace not allowed?) or a run under it failed.**"
  log "${syscalls_note//\*/}"
}
# lyceum_requests SCENARIO N: N requests of SCENARIO to $endpoint, as the throughput runs send them.
lyceum_requests() {
  "$lyceum" bench --endpoint "$endpoint" --connections 4 --scenario "$1" --in-flight "$concurrency" --requests "$2" \
    --warmup 0s --timeout 60s --progress 60s "${client_keys[@]}" >/dev/null 2>>"$work/strace-runs.log"
}
# redis_requests TEST N: N requests of redis-benchmark's TEST to the running redis-server, as redis_bench sends them.
redis_requests() { redis-benchmark -p "$redis_port" -t "$1" -c "$concurrency" -n "$2" -d 200 -r 100000 -q >/dev/null; }
# A row of server CPU per request: WHAT, the Lyceum run's name, the reference's µs, what it is.
cpu_row() { local lyceum_cpu; lyceum_cpu=$(cpu "$out/$2.json"); row "server CPU per $1, µs (lyceum serve) vs $4" "$lyceum_cpu" "$3" "$(divide "$lyceum_cpu" "$3")"; }
