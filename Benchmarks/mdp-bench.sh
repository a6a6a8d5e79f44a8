#!/usr/bin/env bash
# Majordomo echo round trips through Lyceum's broker, beside a C broker and C echo workers
# (Benchmarks/MajordomoEcho/mdp_reference.c, built here with cc -O2) measured in the same run.
# Usage: Benchmarks/mdp-bench.sh [mdp-bench options], e.g. --seconds 3 or --only tcp,c-tcp
# MDP_BENCH_BIN: an mdp-bench already built (Benchmarks/suite.sh's), else it is built here (release).
set -euo pipefail
cd "$(dirname "$0")/.."

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "building: C reference (cc -O2)$([ -n "${MDP_BENCH_BIN:-}" ] || echo " and mdp-bench (release)")…" >&2
cc -std=c11 -O2 -o "$work/mdp_reference" Benchmarks/MajordomoEcho/mdp_reference.c $(pkg-config --cflags --libs libzmq) -lpthread
mdp_bench=${MDP_BENCH_BIN:-}
if [ -z "$mdp_bench" ]; then
  swift build -c release --product mdp-bench >&2
  mdp_bench=$(swift build -c release --show-bin-path)/mdp-bench
fi
"$mdp_bench" --c-reference "$work/mdp_reference" "$@"
