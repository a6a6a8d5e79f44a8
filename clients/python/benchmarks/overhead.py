"""What lyceum_client adds over raw 7/MDP: round trips of ``catalog get_lesson`` to a running
``lyceum serve``, one at a time and 50 in flight, raw pyzmq against the client. A program, not a
test: run it against a quiet server, e.g. ``make run`` (release build) in another terminal.

    /usr/bin/python3 clients/python/benchmarks/overhead.py [ENDPOINT] [SECONDS]
"""
import asyncio
import json
import sys
import time

import zmq
import zmq.asyncio

import lyceum_client
from lyceum_client import aio

BODY = json.dumps({"op": "get_lesson", "course": "1", "lesson": "2"}).encode()


def measure(name, seconds, run):
    """Runs ``run(deadline)`` (which returns how many requests it completed) and prints a row."""
    run(time.monotonic() + 0.3)  # warm-up
    started = time.monotonic()
    done = run(started + seconds)
    elapsed = time.monotonic() - started
    print(f"| {name} | {done / elapsed:,.0f} | {elapsed / done * 1e6:,.0f} |", flush=True)


def raw_sequential(endpoint):
    socket = zmq.Context.instance().socket(zmq.REQ)
    socket.connect(endpoint)

    def run(deadline):
        done = 0
        while time.monotonic() < deadline:
            socket.send_multipart([b"MDPC01", b"catalog", BODY])
            socket.recv_multipart()
            done += 1
        return done
    return run


def client_sequential(client):
    def run(deadline):
        done = 0
        while time.monotonic() < deadline:
            client.catalog.get_lesson("1", "2")
            done += 1
        return done
    return run


async def raw_in_flight(endpoint, deadline, width=50):
    socket = zmq.asyncio.Context.instance().socket(zmq.DEALER)
    socket.connect(endpoint)
    done, tag = 0, 0
    for tag in range(width):
        await socket.send_multipart([tag.to_bytes(8, "big"), b"", b"MDPC01", b"catalog", BODY])
    while True:
        await socket.recv_multipart()
        done += 1
        if time.monotonic() >= deadline:
            break
        tag += 1
        await socket.send_multipart([tag.to_bytes(8, "big"), b"", b"MDPC01", b"catalog", BODY])
    socket.close(linger=0)
    return done


async def client_in_flight(endpoint, deadline, width=50):
    async with aio.Client(endpoint) as client:
        async def worker():
            done = 0
            while time.monotonic() < deadline:
                await client.catalog.get_lesson("1", "2")
                done += 1
            return done
        return sum(await asyncio.gather(*[worker() for _ in range(width)]))


def main():
    endpoint = sys.argv[1] if len(sys.argv) > 1 else "tcp://127.0.0.1:5555"
    seconds = float(sys.argv[2]) if len(sys.argv) > 2 else 5
    print("| scenario | requests/s | µs per request |\n|---|---:|---:|")
    measure("raw REQ, one at a time", seconds, raw_sequential(endpoint))
    with lyceum_client.Client(endpoint) as client:
        measure("lyceum_client.Client, one at a time", seconds, client_sequential(client))
    measure("raw DEALER, 50 in flight", seconds, lambda deadline: asyncio.run(raw_in_flight(endpoint, deadline)))
    measure("lyceum_client.aio.Client, 50 in flight", seconds,
            lambda deadline: asyncio.run(client_in_flight(endpoint, deadline)))


if __name__ == "__main__":
    main()
