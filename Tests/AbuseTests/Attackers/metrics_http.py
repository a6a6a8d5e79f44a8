"""A plain HTTP/1.0 GET of /metrics over a socket, with a deadline for the whole exchange."""

import socket
import time


def scrape(port, timeout=3.0):
    """Returns (whether a 200 with Lyceum's metrics arrived within `timeout`, seconds taken,
    the response's status line or what went wrong)."""
    started = time.monotonic()
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=timeout) as connection:
            connection.sendall(b"GET /metrics HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n")
            response = b""
            while True:
                remaining = timeout - (time.monotonic() - started)
                if remaining <= 0:
                    return False, time.monotonic() - started, "timed out"
                connection.settimeout(remaining)
                chunk = connection.recv(65536)
                if not chunk:
                    break
                response += chunk
    except OSError as error:
        return False, time.monotonic() - started, str(error)
    status = response.split(b"\r\n", 1)[0]
    ok = status.startswith(b"HTTP/1.") and b" 200 " in status and b"lyceum_" in response
    return ok, time.monotonic() - started, status.decode(errors="replace") or "closed without a response"
