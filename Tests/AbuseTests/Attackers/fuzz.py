"""A seeded, time-boxed fuzzer for `lyceum serve`: random multipart messages, mutated 7/MDP
and 18/MDP (RFC 18's and majortomo's) client and worker messages carrying mutated requests from protocol/examples, snapshot requests
and subscriptions. The same seed replays the same sequence of messages (what the server does with
them may still interleave differently)."""

import copy
import glob
import json
import os
import random
import time

import zmq

from abuse import MDP_CLIENT, MDP_WORKER, Attack, arguments, log

#: 18/MDP's headers (protocol/majordomo.md, "Three dialects").
MDP_CLIENT_18 = b"MDPC02"
MDP_WORKER_18 = b"MDPW02"

options = arguments(lambda parser: (
    parser.add_argument("--examples", required=True),
    parser.add_argument("--only", help="comma-separated kinds to send: client, worker, random, snapshot (default: all)")))
generator = random.Random(options.seed)
log(f"fuzz seed {options.seed}, {options.seconds:.0f} s")


def example_requests(directory):
    """(service, request) of every exchange in protocol/examples/<service>/*.json."""
    found = []
    for path in sorted(glob.glob(os.path.join(directory, "*", "*.json"))):
        service = os.path.basename(os.path.dirname(path))
        if service not in ("books", "catalog", "progress"):
            continue
        with open(path) as file:
            for exchange in json.load(file).get("exchanges", []):
                found.append((service, exchange["request"]))
    return found


EXAMPLES = example_requests(options.examples)
SERVICES = [b"catalog", b"books", b"progress", b"mmi.service", b"mmi.echo", b"mmi.status", b"fuzz.nobody"]


def random_bytes(limit=64):
    size = generator.choice([0, 1, 2, generator.randrange(limit + 1), generator.randrange(limit + 1)])
    if generator.random() < 0.02:
        size = generator.randrange(4096, 70_000)
    return generator.randbytes(size)


def random_value(depth=0):
    choice = generator.randrange(10)
    if choice == 0:
        return None
    if choice == 1:
        return generator.choice([True, False])
    if choice == 2:
        return generator.choice([0, -1, 2**31, 2**63, -(2**63) - 1, 10**40, 1e308, -0.0, 3.5])
    if choice == 3:
        return "".join(chr(generator.choice([0x41, 0x301, 0x1F600, 0xE9, 0x0, 0x7F, 0x202E])) for _ in range(generator.randrange(300)))
    if choice == 4 and depth < 20:
        return [random_value(depth + 1) for _ in range(generator.randrange(4))]
    if choice == 5 and depth < 20:
        return {generator.choice(["op", "learner", "id", "x", ""]): random_value(depth + 1)}
    if choice == 6:
        return "x" * generator.choice([0, 129, 201, 4001, 65_000])
    return generator.choice(["ada", "create", "list", "get", "title", "", "../", "%s", "\u0000"])


def mutated_request():
    """A request from the examples, changed in one or a few ways; as bytes."""
    service, request = generator.choice(EXAMPLES)
    request = copy.deepcopy(request)
    for _ in range(generator.randrange(1, 4)):
        action = generator.randrange(6)
        keys = list(request)
        if action == 0 and keys:
            del request[generator.choice(keys)]
        elif action == 1 and keys:
            request[generator.choice(keys)] = random_value()
        elif action == 2:
            request[generator.choice(["isbn", "v", "request_id", "limit", "cursor", "sort"])] = random_value()
        elif action == 3:
            request = {"op": request.get("op"), "nested": json.loads("[" * 40 + "]" * 40)}
        elif action == 4:
            request["op"] = random_value()
    body = json.dumps(request, ensure_ascii=generator.random() < 0.5).encode()
    if generator.random() < 0.3 and body:
        body = bytearray(body)
        for _ in range(generator.randrange(1, 5)):
            position = generator.randrange(len(body))
            body[position] = generator.choice([0x00, 0x22, 0x5C, 0x7B, 0xC3, 0xFF, generator.randrange(256)])
        body = bytes(body[: generator.randrange(len(body) + 1)] if generator.random() < 0.2 else body)
    return service.encode(), body


def mutated_frames(frames):
    """Frame-level damage: drop, duplicate, swap, truncate or insert frames."""
    frames = list(frames)
    for _ in range(generator.randrange(0, 3)):
        action = generator.randrange(5)
        index = generator.randrange(len(frames)) if frames else 0
        if action == 0 and frames:
            del frames[index]
        elif action == 1 and frames:
            frames.insert(index, frames[index])
        elif action == 2 and len(frames) > 1:
            other = generator.randrange(len(frames))
            frames[index], frames[other] = frames[other], frames[index]
        elif action == 3 and frames:
            frames[index] = frames[index][: generator.randrange(len(frames[index]) + 1)]
        else:
            frames.insert(index, random_bytes())
    return frames or [b""]


def client_message():
    service, body = mutated_request()
    if generator.random() < 0.2:
        service = generator.choice(SERVICES)
    frames = [b"", MDP_CLIENT, service, body]
    return mutated_frames(frames) if generator.random() < 0.4 else frames


def worker_message():
    command = bytes([generator.choice([0, 1, 2, 3, 4, 5, 6, 255])])
    # Only made-up services: a fake worker for a real one would take the writer's requests.
    tail = {b"\x01": [b"fuzz." + generator.randbytes(4).hex().encode()],
            b"\x03": [random_bytes(8), b"", random_bytes()]}.get(command, [random_bytes() for _ in range(generator.randrange(3))])
    return mutated_frames([b"", MDP_WORKER, command] + tail)


def client18_message():
    """An 18/MDP request, RFC 18's (no empty frame) or majortomo's, sometimes damaged."""
    service, body = mutated_request()
    if generator.random() < 0.2:
        service = generator.choice(SERVICES)
    head = generator.choice([[MDP_CLIENT_18, b"\x01"], [b"", MDP_CLIENT_18, b"\x02"]])
    frames = head + [service, body]
    return mutated_frames(frames) if generator.random() < 0.4 else frames


def worker18_message():
    """An 18/MDP worker command, RFC 18's or majortomo's framing, damaged like worker_message."""
    command = bytes([generator.choice([0, 1, 2, 3, 4, 5, 6, 7, 255])])
    tail = {b"\x01": [b"fuzz." + generator.randbytes(4).hex().encode()],
            b"\x03": [random_bytes(8), b"", random_bytes()],
            b"\x04": [random_bytes(8), b"", random_bytes()]}.get(command, [random_bytes() for _ in range(generator.randrange(3))])
    head = generator.choice([[MDP_WORKER_18], [b"", MDP_WORKER_18]])
    return mutated_frames(head + [command] + tail)


def random_message():
    return [random_bytes() for _ in range(generator.randrange(1, 13))]


def snapshot_message():
    frames = [b"SNAPSHOT", generator.choice([b"progress/", b"", b"progress/swiftui-essentials/", random_bytes(32)])]
    return mutated_frames(frames) if generator.random() < 0.5 else frames


attack = Attack(options)
context = attack.context


def dealer(endpoint):
    socket = context.socket(zmq.DEALER)
    socket.setsockopt(zmq.LINGER, 0)
    socket.setsockopt(zmq.SNDHWM, 2000)
    socket.connect(endpoint)
    return socket


kinds = [(client_message, options.endpoint), (worker_message, options.endpoint), (random_message, options.endpoint),
         (client_message, options.endpoint), (client18_message, options.endpoint), (worker18_message, options.endpoint)]
if options.snapshot:
    kinds.append((snapshot_message, options.snapshot))
if options.only:
    # To narrow down what a failing seed needs: the same generator, fewer kinds of message.
    wanted = {name + "_message" for name in options.only.split(",")}
    kinds = [(kind, endpoint) for kind, endpoint in kinds if kind.__name__ in wanted]
peers = [(dealer(endpoint), kind, endpoint) for kind, endpoint in kinds]
subscriber = None
if options.events:
    subscriber = context.socket(zmq.XSUB)
    subscriber.setsockopt(zmq.LINGER, 0)
    subscriber.connect(options.events)
sent = received = reconnected = 0
deadline = time.monotonic() + options.seconds
while time.monotonic() < deadline:
    index = generator.randrange(len(peers))
    socket, kind, endpoint = peers[index]
    try:
        socket.send_multipart(kind(), zmq.NOBLOCK)
        sent += 1
    except zmq.Again:
        time.sleep(0.005)
    if subscriber is not None and generator.random() < 0.01:
        subscriber.send(bytes([generator.choice([0, 1, 2])]) + random_bytes(256), zmq.NOBLOCK)
    for peer, _, _ in peers:
        while peer.poll(0):
            peer.recv_multipart()
            received += 1
    if generator.random() < 0.002:
        # Connection churn: a peer goes away with whatever it had in flight.
        socket.close(0)
        peers[index] = (dealer(endpoint), kind, endpoint)
        reconnected += 1
log(f"sent {sent} messages, received {received} replies, {reconnected} reconnections")
attack.finish(seed=options.seed, sent=sent, received=received)
