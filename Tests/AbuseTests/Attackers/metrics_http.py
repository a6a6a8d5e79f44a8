"""A plain HTTP/1.0 GET of /metrics over a socket, with a deadline for the whole exchange."""

import socket
import time


def scrape(port, timeout=3.0):
    """Returns (whether a 200 with a body arrived within `timeout`, seconds taken)."""
    started = time.monotonic()
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=timeout) as connection:
            connection.sendall(b"GET /metrics HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n")
            response = b""
            while True:
                remaining = timeout - (time.monotonic() - started)
                if remaining <= 0:
                    return False, time.monotonic() - started
                connection.settimeout(remaining)
                chunk = connection.recv(65536)
                if not chunk:
                    break
                response += chunk
    except OSError:
        return False, time.monotonic() - started
    ok = response.startswith(b"HTTP/1.") and b" 200 " in response.split(b"\r\n", 1)[0] and b"lyceum_" in response
    return ok, time.monotonic() - started
