"""Finding 6: a flood of malformed messages (each a warning today), in 7/MDP's and both of
18/MDP's dialects (protocol/majordomo.md, "Three dialects"), a 1 MiB service name of unprintable
bytes (from a 7/MDP and from an RFC 18 client), and a 60 KB book id: the log and the replies must
not grow with them."""

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
#: Malformed in every dialect: none, RFC 18's client (majortomo's REQUEST byte, no body, an empty
#: service), majortomo's (RFC 18's REQUEST byte, a two-byte command), and RFC 18's worker
#: commands (no such command, a PARTIAL with no empty frame after the client address).
MALFORMED = [
    [b"not", b"majordomo"],
    [b"MDPC02", b"\x02", b"books", b"{}"],
    [b"MDPC02", b"\x01", b"books"],
    [b"MDPC02", b"\x01", b"", b"{}"],
    [b"", b"MDPC02", b"\x01", b"books", b"{}"],
    [b"", b"MDPC02", b"\x02\x02", b"books", b"{}"],
    [b"MDPW02", b"\x09"],
    [b"MDPW02", b"\x03", b"client", b"x", b"body"],
]
sent = 0
deadline = time.monotonic() + options.seconds
while time.monotonic() < deadline:
    for _ in range(1000):
        try:
            flooder.send_multipart(MALFORMED[sent % len(MALFORMED)], zmq.NOBLOCK)
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

# The same name from a strict RFC 18 client (a DEALER, no empty frame): its reply is bounded too.
eighteen = attack.context.socket(zmq.DEALER)
eighteen.setsockopt(zmq.LINGER, 0)
eighteen.connect(options.endpoint)
eighteen.send_multipart([b"MDPC02", b"\x01", name, b'{"op":"get"}'])
eighteen_reply = eighteen.recv_multipart() if eighteen.poll(10_000) else None
eighteen.close()
long_name_reply_bytes_18 = sum(len(frame) for frame in eighteen_reply) if eighteen_reply is not None else None
log(f"a 1 MiB unprintable service name from an RFC 18 client: {long_name_reply_bytes_18} reply bytes")

long_id = "f" * 60_000
reply, _ = client.call("books", {"op": "get", "learner": "abuse-flood", "id": long_id}, timeout=5)
id_reply = reply[0] if reply else b""
client.close()
attack.finish(malformed_sent=sent, long_name_reply_bytes=long_name_reply_bytes, long_name_reply_bytes_18=long_name_reply_bytes_18,
              long_id_reply_bytes=len(id_reply), long_id_echoed=long_id.encode() in id_reply)
