"""Request/reply rate of an 18/MDP client beside a 7/MDP client through the same broker (issue 37):
one `lyceum serve`, one synchronous client per dialect in its own process, each sending
`catalog list_categories` and waiting for its reply, for SECONDS; first each alone, then both at
once. Prints round trips per second and the ratio 18/MDP : 7/MDP in the same run.

    Benchmarks/mdp18_beside_7.py [LYCEUM_BIN] [SECONDS]     (make bench-mdp18)
"""
import json
import multiprocessing
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time

import zmq

REQUEST = json.dumps({"op": "list_categories"}).encode()
FRAMES = {
    "7/MDP": (zmq.REQ, [b"MDPC01", b"catalog", REQUEST]),
    "18/MDP": (zmq.DEALER, [b"MDPC02", b"\x01", b"catalog", REQUEST]),
}


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def client(dialect, endpoint, seconds, start, results):
    """Round trips of one synchronous client of `dialect` in `seconds`, from `start` on."""
    kind, frames = FRAMES[dialect]
    sock = zmq.Context().socket(kind)
    sock.setsockopt(zmq.LINGER, 0)
    sock.connect(endpoint)
    sock.send_multipart(frames)  # the connection and the first reply, outside the measure
    sock.recv_multipart()
    while time.time() < start:
        time.sleep(0.001)
    count, end = 0, start + seconds
    while time.time() < end:
        sock.send_multipart(frames)
        reply = sock.recv_multipart()
        if b'"ok":true' not in reply[-1]:
            raise SystemExit(f"{dialect}: unexpected reply {reply}")
        count += 1
    results[dialect] = count / seconds
    sock.close()


def run(dialects, endpoint, seconds):
    manager = multiprocessing.Manager()
    results = manager.dict()
    start = time.time() + 0.5
    processes = [multiprocessing.Process(target=client, args=(d, endpoint, seconds, start, results)) for d in dialects]
    for process in processes:
        process.start()
    for process in processes:
        process.join()
    return dict(results)


def main():
    binary = sys.argv[1] if len(sys.argv) > 1 else ".build/release/lyceum"
    seconds = float(sys.argv[2]) if len(sys.argv) > 2 else 5
    endpoint = f"tcp://127.0.0.1:{free_port()}"
    with tempfile.TemporaryDirectory(prefix="lyceum-mdp18-bench-") as directory:
        serve = subprocess.Popen([binary, "serve", "--endpoint", endpoint, "--data", directory, "--events-endpoint", "none",
                                  "--log-level", "warning"], stdin=subprocess.DEVNULL)
        try:
            time.sleep(1.5)
            alone = {**run(["7/MDP"], endpoint, seconds), **run(["18/MDP"], endpoint, seconds)}
            beside = run(["7/MDP", "18/MDP"], endpoint, seconds)
        finally:
            serve.send_signal(signal.SIGTERM)
            serve.wait(30)
    print(f"{os.path.basename(binary)} serve, catalog list_categories, one synchronous client per dialect, {seconds:g} s each")
    for label, figures in (("alone", alone), ("beside each other", beside)):
        seven, eighteen = figures["7/MDP"], figures["18/MDP"]
        print(f"  {label:18} 7/MDP {seven:8.0f} req/s   18/MDP {eighteen:8.0f} req/s   18:7 = {eighteen / seven:.2f}")


if __name__ == "__main__":
    main()
