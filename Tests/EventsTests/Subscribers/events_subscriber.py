"""An independent subscriber that knows Lyceum's events only from protocol/events.md.

usage: events_subscriber.py EVENTS_ENDPOINT SNAPSHOT_ENDPOINT

Follows the catch-up rules: subscribes to progress/ and hb/, prints READY once a heartbeat shows
the subscription is live, requests a snapshot, then applies only events with a greater seq.
A line "UNTIL <seq>" on standard input says which seq to stop after; it then prints one JSON
line: the mirrored state by topic and any rule it found broken.
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
    dealer.send_multipart([b"SNAPSHOT", b"progress/"])
    command, body = dealer.recv_multipart()
    snapshot = json.loads(body.decode("utf-8"))
    if command != b"SNAPSHOT":
        problems.append("snapshot refused: %s" % snapshot)
    mirror = {entry["topic"]: entry for entry in snapshot["entries"]}
    last = snapshot["seq"]
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
        if topic == "hb/" or event["seq"] <= last:
            continue
        if event["seq"] != last + 1:
            problems.append("seq %d after %d" % (event["seq"], last))
        last = event["seq"]
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
        "problems": problems,
    }), flush=True)
    sub.close(0)
    dealer.close(0)
    context.term()


main()
