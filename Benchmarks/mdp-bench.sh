#!/usr/bin/env bash
# Majordomo echo round trips through Lyceum's broker, beside a C broker and C echo workers
# (Benchmarks/MajordomoEcho/mdp_reference.c, built here with cc -O2) measured in the same run.
# Usage: Benchmarks/mdp-bench.sh [mdp-bench options], e.g. --seconds 3 or --only c-tcp
set -euo pipefail
cd "$(dirname "$0")/.."

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "building: C reference (cc -O2) and mdp-bench (release)…" >&2
cc -std=c11 -O2 -o "$work/mdp_reference" Benchmarks/MajordomoEcho/mdp_reference.c $(pkg-config --cflags --libs libzmq) -lpthread
swift build -c release --product mdp-bench >&2
"$(swift build -c release --show-bin-path)/mdp-bench" --c-reference "$work/mdp_reference" "$@"
