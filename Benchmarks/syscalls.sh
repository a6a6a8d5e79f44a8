# Sourced by Benchmarks/request-syscalls.sh and Benchmarks/suite.sh (issue 26): the system calls and
# context switches a server process makes per request, counts that a busy machine moves far less
# than throughput.

# context_switches PID: "VOLUNTARY INVOLUNTARY" of every thread of PID so far, summed over
# /proc/PID/task/*/status (/proc/PID/status counts the main thread's only).
context_switches() {
  cat /proc/"$1"/task/*/status 2>/dev/null |
    awk '/^voluntary_ctxt_switches/ { v += $2 } /^nonvoluntary_ctxt_switches/ { n += $2 } END { print v + 0, n + 0 }'
}

# strace_run PIDS TABLE COMMAND…: runs COMMAND while `strace -c -f` is attached to every thread of
# PIDS (one process, or several separated by commas: a broker and its worker), and leaves strace's
# summary table, all of them together, in TABLE. Returns 1, COMMAND not run, when strace cannot
# attach (no ptrace permission); COMMAND's own status otherwise. $strace_pid names the strace
# while it runs, for the caller's EXIT trap.
strace_pid=""
strace_run() {
  local pids=${1//,/ } table=$2 status=0 pid attach=() statuses=()
  shift 2
  for pid in $pids; do attach+=(-p "$pid") statuses+=(/proc/"$pid"/task/*/status); done
  strace -c -f "${attach[@]}" -o "$table" 2>/dev/null &
  strace_pid=$!
  # Attached once every thread names a tracer (a fixed sleep would cost a second a run).
  until awk '/^TracerPid:/ && $2 == 0 { untraced = 1 } END { exit untraced }' "${statuses[@]}" 2>/dev/null; do
    kill -0 "$strace_pid" 2>/dev/null || { wait "$strace_pid" 2>/dev/null || true; strace_pid=""; return 1; }
    sleep 0.02
  done
  "$@" || status=$?
  stop_strace
  return "$status"
}

# stop_strace: detaches the strace of strace_run, if one runs (it writes its table as it ends).
stop_strace() {
  [ -n "$strace_pid" ] || return 0
  kill -INT "$strace_pid" 2>/dev/null || true
  wait "$strace_pid" 2>/dev/null || true
  strace_pid=""
}

# syscalls_per_request PIDS N1 N2 OUT RUN…: the system calls PIDS make per request, by name: `RUN… N1`
# and then `RUN… N2` (RUN sends that many requests) each under strace_run, and (calls in the second
# − calls in the first) ÷ (N2 − N1), so that what every run pays once (connections, the books a read
# run creates first) cancels. OUT gets "NAME PER_REQUEST" lines, those of 0.01 or more, most first,
# then "all TOTAL". strace slows every call, which changes how many requests a wake-up carries:
# figures to compare between runs measured alike, not exact counts. Returns 1
# when strace cannot attach or a run fails.
syscalls_per_request() {
  local pid=$1 n1=$2 n2=$3 out=$4
  shift 4
  strace_run "$pid" "$out.first" "$@" "$n1" || return 1
  strace_run "$pid" "$out.second" "$@" "$n2" || return 1
  # strace -c's table: calls are column 4 (column 5 is errors when present); the name is the last column.
  awk -v n="$((n2 - n1))" '
    FNR == NR && /^ *[0-9.]+ +[0-9.]+ +[0-9]+ +[0-9]+/ { first[$NF] = $4; next }
    FNR != NR && /^ *[0-9.]+ +[0-9.]+ +[0-9]+ +[0-9]+/ && $NF != "total" {
      per = ($4 - first[$NF]) / n; total += per
      if (per >= 0.01) printf "%s %.2f\n", $NF, per
    }
    END { printf "all %.2f\n", total }' "$out.first" "$out.second" |
    sort -k2,2gr | awk '$1 == "all" { all = $0; next } { print } END { print all }' >"$out"
  rm -f "$out.first" "$out.second"
}
