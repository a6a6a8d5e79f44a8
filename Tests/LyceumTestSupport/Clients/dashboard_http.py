#!/usr/bin/python3
"""Raw HTTP peers of Lyceum's dashboard, standard library only.

    dashboard_http.py get PORT PATH [HEADER ...]     one response, at most 64 KiB of it (a stream's
                                                     first second)
    dashboard_http.py malformed PORT                 one status line per hostile request
    dashboard_http.py streams PORT COUNT             opens COUNT event streams that never read,
                                                     prints "open", holds them until stdin closes
"""
import resource
import socket
import sys
import time


def exchange(port, request, seconds=1.0):
    connection = socket.create_connection(("127.0.0.1", port), timeout=5)
    connection.sendall(request)
    data = b""
    deadline = time.monotonic() + seconds
    try:
        while time.monotonic() < deadline and len(data) < 65536:
            connection.settimeout(max(0.01, deadline - time.monotonic()))
            chunk = connection.recv(4096)
            if not chunk:
                break
            data += chunk
    except socket.timeout:
        pass
    connection.close()
    return data


def get(port, path, headers):
    lines = ["GET %s HTTP/1.1" % path, "Host: 127.0.0.1"] + headers
    # A stream never ends: what it sent within a second. Anything else: until it closes.
    seconds = 1.0 if path.startswith("/events") else 20.0
    print(exchange(port, ("\r\n".join(lines) + "\r\n\r\n").encode(), seconds).decode("utf-8", "replace"))


def malformed(port):
    requests = [
        b"\x00\xff\xfe garbage\r\n\r\n",
        b"GET\r\n\r\n",
        b"POST /events HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello",
        b"GET /../../etc/passwd HTTP/1.1\r\n\r\n",
        b"GET /events HTTP/1.1\r\nX-Big: " + b"a" * 20000 + b"\r\n\r\n",
        b"GET / HTTP/1.1\r\n",  # never finished: answered when the peer closes its side
    ]
    for request in requests:
        connection = socket.create_connection(("127.0.0.1", port), timeout=10)
        try:
            connection.sendall(request)
        except OSError:
            pass
        connection.shutdown(socket.SHUT_WR)
        data = b""
        try:
            while True:
                chunk = connection.recv(65536)
                if not chunk:
                    break
                data += chunk
        except OSError:
            pass
        print(data.split(b"\r\n", 1)[0].decode("utf-8", "replace") or "(closed)", flush=True)
        connection.close()
    # A slow client: one byte a second; the request timeout closes it.
    slow = socket.create_connection(("127.0.0.1", port), timeout=30)
    started = time.monotonic()
    try:
        for byte in b"GET / HTTP/1.1\r\nX-Slow: " + b"a" * 60:
            slow.send(bytes([byte]))
            time.sleep(0.5)
        print("slow client never closed", flush=True)
    except OSError:
        print("slow client closed after %.0f s" % (time.monotonic() - started), flush=True)


def streams(port, count):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    held = []
    for _ in range(count):
        connection = socket.create_connection(("127.0.0.1", port), timeout=10)
        connection.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        connection.sendall(b"GET /events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        held.append(connection)
    print("open", flush=True)
    sys.stdin.read()


if __name__ == "__main__":
    mode, port = sys.argv[1], int(sys.argv[2])
    if mode == "get":
        get(port, sys.argv[3], sys.argv[4:])
    elif mode == "malformed":
        malformed(port)
    else:
        streams(port, int(sys.argv[3]))
