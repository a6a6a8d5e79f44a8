"""Finding 4: a write held behind reads. Titles of one grapheme cluster and 30,000 combining
accents (60 KB), and title-sorted lists of them kept in flight; meanwhile ordinary creates are
timed."""

import json
import time

from abuse import Attack, Client, acknowledged_books, arguments, book, log, pipelined

options = arguments(lambda parser: (parser.add_argument("--books", type=int, default=61),
                                    parser.add_argument("--in-flight", type=int, default=8)))
attack = Attack(options)
setup = Client(attack.context, options.endpoint)
titles = ("e" + "\u0301" * 30000 + chr(0x41 + index % 26) for index in range(options.books))
acknowledged = acknowledged_books("abuse-accents", pipelined(setup, "books", (book("abuse-accents", title) for title in titles)))
log(f"{len(acknowledged)} books with 60 KB one-character titles")

readers = Client(attack.context, options.endpoint)
request = {"op": "list", "learner": "abuse-accents", "sort": "title", "limit": 100}
for _ in range(options.in_flight):
    readers.send("books", request)
writer = Client(attack.context, options.endpoint)
latencies = []
deadline = time.monotonic() + options.seconds
while time.monotonic() < deadline:
    # Keep the reads in flight: one new list for each one answered.
    while readers.receive(0) is not None:
        readers.send("books", request)
    title = f"ordinary {len(latencies)}"
    started = time.monotonic()
    writer.send("books", book("abuse-timed", title))
    reply = None
    while reply is None and time.monotonic() - started < 5:
        reply = writer.receive(0.02)
        while readers.receive(0) is not None:
            readers.send("books", request)
    latencies.append(round((time.monotonic() - started) * 1000, 1))
    if reply is None:
        log("a create got no reply within 5 s")
        break
    parsed = json.loads(reply[0])
    if parsed.get("ok"):
        acknowledged.append({"learner": "abuse-timed", "id": parsed["result"]["book"]["id"], "title": title})
readers.close()
log(f"create latencies (ms) with the reads in flight: {latencies}")
attack.finish(acknowledged=acknowledged, create_latencies_ms=latencies)
