#!/usr/bin/env bash
# LyceumClient's overhead over raw MDP against a real `lyceum serve` (release builds of both),
# on loopback ports chosen by the kernel, its data in a temporary directory.
# Usage: Benchmarks/client-overhead.sh [seconds per row]
set -euo pipefail
cd "$(dirname "$0")/.."

work=$(mktemp -d)
swift build -c release --product lyceum >&2
swift build -c release --product client-overhead >&2
bin=$(swift build -c release --show-bin-path)
ports=$(/usr/bin/python3 -c 'import socket
s=[socket.socket() for _ in range(3)]
[x.bind(("127.0.0.1",0)) for x in s]
print(" ".join(str(x.getsockname()[1]) for x in s))')
read -r broker events snapshots <<<"$ports"
"$bin/lyceum" serve --endpoint "tcp://127.0.0.1:$broker" --events-endpoint "tcp://127.0.0.1:$events" \
    --snapshot-endpoint "tcp://127.0.0.1:$snapshots" --data "$work" --log-level warning 2>"$work/serve.log" &
serve=$!
trap 'kill $serve 2>/dev/null; wait $serve 2>/dev/null; rm -rf "$work"' EXIT
sleep 1
"$bin/client-overhead" "tcp://127.0.0.1:$broker" "${1:-2}"
