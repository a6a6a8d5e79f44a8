"""An independent subscriber that knows Lyceum's events only from protocol/events.md.

usage: events_subscriber.py EVENTS_ENDPOINT SNAPSHOT_ENDPOINT

Follows the catch-up rules: subscribes to progress/, books/ and hb/, prints READY once a heartbeat
shows the subscription is live, requests a snapshot, then applies only progress events with a
greater progress_seq, and every book event (a live feed, without snapshots).
A line "UNTIL <seq>" on standard input says which seq to stop after; it then prints one JSON
line: the mirrored progress by topic, the books by topic (null once deleted) and any rule it
found broken.
"""
import json
import sys

import zmq


def escape(identifier):
    return identifier.replace("%", "%25").replace("/", "%2F")


def main():
    events_endpoint, snapshot_endpoint = sys.argv[1], sys.argv[2]
    context = zmq.Context()
    sub = context.socket(zmq.SUB)
    sub.setsockopt(zmq.SUBSCRIBE, b"progress/")
    sub.setsockopt(zmq.SUBSCRIBE, b"books/")
    sub.setsockopt(zmq.SUBSCRIBE, b"hb/")
    sub.setsockopt(zmq.RCVTIMEO, 10000)
    sub.connect(events_endpoint)
    while sub.recv_multipart()[0] != b"hb/":
        pass
    print("READY", flush=True)

    problems = []
    dealer = context.socket(zmq.DEALER)
    dealer.setsockopt(zmq.RCVTIMEO, 5000)
    dealer.connect(snapshot_endpoint)
    # The snapshot comes in pages; the numbers kept are the first page's ("Pages" in events.md).
    snapshot = None
    mirror = {}
    cursor = []
    while True:
        dealer.send_multipart([b"SNAPSHOT", b"progress/"] + cursor)
        command, body = dealer.recv_multipart()
        page = json.loads(body.decode("utf-8"))
        if command != b"SNAPSHOT":
            problems.append("snapshot refused: %s" % page)
            break
        snapshot = snapshot or page
        mirror.update({entry["topic"]: entry for entry in page["entries"]})
        if page.get("next_cursor") is None:
            break
        cursor = [page["next_cursor"].encode("utf-8")]
    last = snapshot["seq"]
    last_progress = snapshot["progress_seq"]
    last_books = None
    books = {}
    applied = 0
    target = None

    poller = zmq.Poller()
    poller.register(sub, zmq.POLLIN)
    poller.register(sys.stdin.fileno(), zmq.POLLIN)
    while target is None or last < target:
        ready = dict(poller.poll(10000))
        if not ready:
            problems.append("silence at seq %d" % last)
            break
        if sys.stdin.fileno() in ready:
            line = sys.stdin.readline().split()
            if line and line[0] == "UNTIL":
                target = int(line[1])
        if sub not in ready:
            continue
        frames = sub.recv_multipart()
        if len(frames) != 2:
            problems.append("frames: %d" % len(frames))
            continue
        topic = frames[0].decode("utf-8")
        event = json.loads(frames[1].decode("utf-8"))
        if topic == "hb/":
            continue
        if topic.startswith("books/"):
            if last_books is not None and event["books_seq"] != last_books + 1:
                problems.append("books_seq %d after %d" % (event["books_seq"], last_books))
            last_books = event["books_seq"]
            last = max(last, event["seq"])
            expected_topic = "books/%s/%s" % (escape(event["learner"]), escape(event["book_id"]))
            if topic != expected_topic:
                problems.append("topic %s for %s" % (topic, expected_topic))
            if (event["book"] is None) != (event["type"] == "book_deleted"):
                problems.append("%s with book %s" % (event["type"], event["book"]))
            books[topic] = event["book"]
            continue
        if event["progress_seq"] <= last_progress:
            continue
        if event["progress_seq"] != last_progress + 1:
            problems.append("progress_seq %d after %d" % (event["progress_seq"], last_progress))
        last_progress = event["progress_seq"]
        last = max(last, event["seq"])
        applied += 1
        expected_topic = "progress/%s/%s" % (escape(event["course"]), escape(event["learner"]))
        if topic != expected_topic:
            problems.append("topic %s for %s" % (topic, expected_topic))
        previous = mirror.get(topic)
        if previous is None or previous["revision"] <= event["revision"]:
            mirror[topic] = {"revision": event["revision"], "progress": event["progress"]}

    print(json.dumps({
        "snapshot_seq": snapshot["seq"],
        "applied": applied,
        "last_seq": last,
        "mirror": {topic: entry["progress"] for topic, entry in mirror.items()},
        "books": books,
        "problems": problems,
    }), flush=True)
    sub.close(0)
    dealer.close(0)
    context.term()


main()
