# Helpers every benchmark script shares; sourced (`source Benchmarks/common.sh` once the script
# is at the repository's root), never run.

# A TCP port on 127.0.0.1 that was free a moment ago, for a server to bind.
free_port() { /usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# The machine's load averages over 1, 5 and 15 minutes, for a report's header.
loadavg() { cut -d' ' -f1-3 /proc/loadavg; }

# A member of a JSON file (a `lyceum bench --json` result): json FILE requests_per_second | latency_us/p99 | list/0/…
json() { /usr/bin/python3 -c 'import json,sys; v=json.load(open(sys.argv[1]))
for k in sys.argv[2].split("/"): v=v[int(k)] if isinstance(v, list) else v[k]
print(v)' "$1" "$2"; }
