"""Lyceum from Python: a book, some progress, an error, and the live event stream.

Run it against `make run` (or set LYCEUM_ENDPOINT / LYCEUM_EVENTS to another server):

    pip install ./clients/python
    python3 clients/python/examples/quickstart.py
"""
import os

import lyceum_client

endpoint = os.environ.get("LYCEUM_ENDPOINT", "tcp://127.0.0.1:5555")
events_endpoint = os.environ.get("LYCEUM_EVENTS", "tcp://127.0.0.1:5556")

with lyceum_client.Client(endpoint) as lyceum:
    # Writes get a request_id automatically: however often the client retries, one book.
    book = lyceum.books.create("ada", "Dune", "Frank Herbert", "Fantasy", 5, review="Spice.")
    print("created", book["title"], "version", book["version"])

    course = lyceum.catalog.get_course("swiftui-essentials")
    for lesson in course["lessons"][:2]:
        progress = lyceum.progress.mark_watched("ada", course["id"], lesson["id"])
    print(f"{course['title']}: {progress['percent']}% watched")

    try:
        lyceum.books.update("ada", book["id"], rating=4, expected_version=99)
    except lyceum_client.Conflict as error:
        print("refused:", error.code)

    # Follow progress live: a snapshot first, then each event; gaps are repaired on their own.
    with lyceum_client.Events(events_endpoint, course=course["id"]) as events:
        for update in events:
            if isinstance(update, lyceum_client.Snapshot):
                print("snapshot of", len(events.progress), "learners")
                # Unwatch then watch: on a second run the first of the two is the change.
                lyceum.progress.mark_unwatched("ada", course["id"], course["lessons"][2]["id"])
                lyceum.progress.mark_watched("ada", course["id"], course["lessons"][2]["id"])
            elif isinstance(update, lyceum_client.ProgressUpdate):
                print("event", update.event["type"], f"{update.event['progress']['percent']}%")
                if update.event["type"] == "lesson_watched":
                    break
