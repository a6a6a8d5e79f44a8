"""Finding 6: a flood of malformed messages (each a warning today), a 1 MiB service name of
unprintable bytes, and a 60 KB book id: the log and the replies must not grow with them."""

import random
import time

import zmq

from abuse import Attack, Client, arguments, log

options = arguments()
attack = Attack(options)
flooder = attack.context.socket(zmq.DEALER)
flooder.setsockopt(zmq.LINGER, 0)
flooder.setsockopt(zmq.SNDHWM, 100_000)
flooder.connect(options.endpoint)
sent = 0
deadline = time.monotonic() + options.seconds
while time.monotonic() < deadline:
    for _ in range(1000):
        try:
            flooder.send_multipart([b"not", b"majordomo"], zmq.NOBLOCK)
            sent += 1
        except zmq.Again:
            time.sleep(0.001)
            break
flooder.close()
log(f"sent {sent} malformed messages in {options.seconds} s")

client = Client(attack.context, options.endpoint)
generator = random.Random(options.seed)
name = bytes(generator.choice([*range(1, 32), 127]) for _ in range(1 << 20))
reply, waited = client.call(name, b'{"op":"get"}', timeout=10)
long_name_reply_bytes = sum(len(frame) for frame in reply) if reply is not None else None
log(f"a 1 MiB unprintable service name: {long_name_reply_bytes} reply bytes after {waited:.1f} s")

long_id = "f" * 60_000
reply, _ = client.call("books", {"op": "get", "learner": "abuse-flood", "id": long_id}, timeout=5)
id_reply = reply[0] if reply else b""
client.close()
attack.finish(malformed_sent=sent, long_name_reply_bytes=long_name_reply_bytes,
              long_id_reply_bytes=len(id_reply), long_id_echoed=long_id.encode() in id_reply)
