"""Finding 3c: clients that ask for large `books list` pages and never read the replies (the
high-water mark counts messages, not bytes)."""

import json
import time

from abuse import Attack, Client, book, arguments, log

options = arguments(lambda parser: (parser.add_argument("--clients", type=int, default=2),
                                    parser.add_argument("--requests", type=int, default=250)))
attack = Attack(options)
# A library whose full page is about a megabyte: 100 books with 4,000-character reviews.
setup = Client(attack.context, options.endpoint)
for index in range(100):
    setup.send("books", book("abuse-hoarder", f"heavy {index}", review="\u20ac" * 4000))
acknowledged = []
for _ in range(100):
    reply = setup.receive(30)
    if reply is None:
        break
    parsed = json.loads(reply[0])
    if parsed.get("ok"):
        acknowledged.append({"learner": "abuse-hoarder", "id": parsed["result"]["book"]["id"],
                             "title": parsed["result"]["book"]["title"]})
page, _ = setup.call("books", {"op": "list", "learner": "abuse-hoarder", "limit": 100}, timeout=10)
page_bytes = len(page[0]) if page else None
log(f"{len(acknowledged)} heavy books; one page is {page_bytes} bytes")
hoarders = []
for _ in range(options.clients):
    hoarder = Client(attack.context, options.endpoint)
    for _ in range(options.requests):
        hoarder.send("books", {"op": "list", "learner": "abuse-hoarder", "limit": 100})
    hoarders.append(hoarder)
time.sleep(options.seconds)
for hoarder in hoarders:
    hoarder.close()
attack.finish(acknowledged=acknowledged, page_bytes=page_bytes, unread_requests=options.clients * options.requests)
