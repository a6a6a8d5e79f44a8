"""Finding 3c: clients that ask for large `books list` pages and never read the replies (the
high-water mark counts messages, not bytes)."""

import json
import time

from abuse import MDP_CLIENT, Attack, Client, RawZMTP, acknowledged_books, arguments, book, log, pipelined

options = arguments(lambda parser: (parser.add_argument("--clients", type=int, default=2),
                                    parser.add_argument("--requests", type=int, default=250)))
attack = Attack(options)
# A library whose full page is about a megabyte: 100 books with 4,000-character reviews.
setup = Client(attack.context, options.endpoint)
acknowledged = acknowledged_books("abuse-hoarder", pipelined(setup, "books", (book("abuse-hoarder", f"heavy {index}", review="\u20ac" * 4000) for index in range(100))))
page, _ = setup.call("books", {"op": "list", "learner": "abuse-hoarder", "limit": 100}, timeout=10)
page_bytes = len(page[0]) if page else None
log(f"{len(acknowledged)} heavy books; one page is {page_bytes} bytes")
# Raw ZMTP with a small receive buffer: a pyzmq socket would read the replies off the wire into
# this process even if the script never asked for them.
request = [b"", MDP_CLIENT, b"books", json.dumps({"op": "list", "learner": "abuse-hoarder", "limit": 100}).encode()]
hoarders = []
for _ in range(options.clients):
    hoarder = RawZMTP(options.endpoint, receive_buffer=4096)
    try:
        for _ in range(options.requests):
            hoarder.send_message(request)
    except OSError as error:
        log(f"the server dropped a hoarding connection: {error}")  # what a byte cap per peer may do
    hoarders.append(hoarder)
time.sleep(options.seconds)
for hoarder in hoarders:
    hoarder.close()
attack.finish(acknowledged=acknowledged, page_bytes=page_bytes, unread_requests=options.clients * options.requests)
