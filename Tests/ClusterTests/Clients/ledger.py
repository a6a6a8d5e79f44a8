"""A client of the netns cluster that keeps a ledger of what the cluster acknowledged, so a test can
check afterwards that nothing acknowledged was lost and nothing was applied twice.

    ledger.py write  --out FILE --learners a,b,… --seconds S [--until FILE] [--in-flight K] [--run NAME] [--unknown FILE]
    ledger.py verify --ledger FILE [FILE…] [--unknown FILE…]
    ledger.py probe  --learners a,b,… [--write]

Every command takes the brokers (``--brokers EP,EP``, tried in order, failing over) and the CURVE
certificates (``--key SECRET --server-key PUBLIC``; neither: plaintext), ``--timeout`` seconds per attempt and
``--attempts``. Each prints one JSON object on stdout:

- ``write`` creates books for the learners in turn, ``--in-flight`` at a time, for ``--seconds``
  (bounded: it stops sending then and waits for what is in flight, at most timeout × attempts
  more), or sooner once the file ``--until`` names exists (a test's steps of unknown length).
  Each create has a unique title and ``request_id``; a reply whose book is not the one
  asked for counts as ``wrong``. Every acknowledged create is appended to ``--out`` as a JSON line
  before the next is sent; with ``--unknown``, every create that failed for good (its outcome
  unknown: it may or may not have been applied) is appended there. Prints ``{"acknowledged",
  "sent", "wrong", "errors": {code: count}, "longest_wait"}``: the longest a create took, retries
  included, in seconds.
- ``verify`` lists each learner's books (every page) and checks that each acknowledged book is
  there with its title, and that no title appears twice. With ``--unknown``, a book whose title
  is neither acknowledged nor unknown (never sent) counts as unexpected. Prints ``{"checked",
  "missing", "duplicates", "unexpected", "unknown_applied", "examples"}`` (Jepsen's total-queue
  rules: acknowledged and not read is lost, read and never sent is unexpected, applied twice is
  duplicated, a create that failed for good is unknown, never counted as either).
- ``probe`` sends one ``list`` per learner at once (with ``--write``, one ``create`` of a new
  book) and prints, per learner, ``{"ok", "code", "seconds"}``: how each was answered and how
  long it took.

Run by the ClusterTests with /usr/bin/python3 inside the client host's namespace, with
clients/python on PYTHONPATH.
"""
from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import sys
import time
from collections import Counter
from typing import Any

from lyceum_client import aio
from lyceum_client.errors import LyceumError


def connect(arguments: argparse.Namespace) -> aio.Client:
    return aio.Client(arguments.brokers.split(","), timeout=arguments.timeout, attempts=arguments.attempts,
                      curve_certificate=arguments.key, server_certificate=arguments.server_key)


async def write(arguments: argparse.Namespace) -> dict[str, Any]:
    learners = arguments.learners.split(",")
    sequence = itertools.count()
    errors: Counter[str] = Counter()
    outcome = {"acknowledged": 0, "wrong": 0}
    longest = 0.0
    stop_at = time.monotonic() + arguments.seconds
    async with connect(arguments) as client:
        with open(arguments.out, "a", encoding="utf-8") as ledger, \
                open(arguments.unknown[0] if arguments.unknown else os.devnull, "a", encoding="utf-8") as unknown:
            async def one_writer() -> None:
                nonlocal longest
                while time.monotonic() < stop_at and not (arguments.until and os.path.exists(arguments.until)):
                    number = next(sequence)
                    learner = learners[number % len(learners)]
                    title = f"{arguments.run}-{number}"
                    body = {"op": "create", "learner": learner, "title": title, "author": "Ledger",
                            "genre": "Mystery", "rating": 3, "request_id": title}
                    started = time.monotonic()
                    try:
                        result = await client.call("books", body)
                    except LyceumError as error:
                        errors[error.code] += 1
                        unknown.write(json.dumps({"learner": learner, "title": title}) + "\n")
                        unknown.flush()
                        continue
                    finally:
                        longest = max(longest, time.monotonic() - started)
                    book = result.get("book", {}) if isinstance(result, dict) else {}
                    if book.get("title") != title or not book.get("id"):
                        outcome["wrong"] += 1
                        continue
                    ledger.write(json.dumps({"learner": learner, "title": title, "id": book["id"]}) + "\n")
                    ledger.flush()
                    outcome["acknowledged"] += 1
            await asyncio.gather(*(one_writer() for _ in range(arguments.in_flight)))
    return {**outcome, "sent": next(sequence), "errors": dict(errors), "longest_wait": round(longest, 3)}


async def verify(arguments: argparse.Namespace) -> dict[str, Any]:
    expected: dict[str, dict[str, str]] = {}
    for path in arguments.ledger:
        with open(path, encoding="utf-8") as ledger:
            for line in ledger:
                entry = json.loads(line)
                expected.setdefault(entry["learner"], {})[entry["id"]] = entry["title"]
    unknown: dict[str, set[str]] = {}
    for path in arguments.unknown or []:
        with open(path, encoding="utf-8") as file:
            for line in file:
                entry = json.loads(line)
                unknown.setdefault(entry["learner"], set()).add(entry["title"])
    missing, duplicates, unexpected, unknown_applied, examples = 0, 0, 0, 0, []
    async with connect(arguments) as client:
        for learner in sorted(set(expected) | set(unknown)):
            books = expected.get(learner, {})
            found: dict[str, str] = {}
            titles: Counter[str] = Counter()
            cursor = None
            while True:
                body: dict[str, Any] = {"op": "list", "learner": learner, "limit": 100}
                if cursor is not None:
                    body["cursor"] = cursor
                page = await client.call("books", body)
                for book in page["books"]:
                    found[book["id"]] = book["title"]
                    titles[book["title"]] += 1
                cursor = page.get("next_cursor")
                if cursor is None:
                    break
            for book_id, title in books.items():
                if found.get(book_id) != title:
                    missing += 1
                    if len(examples) < 10:
                        examples.append(f"{learner}: {title} ({book_id}) missing")
            for title, count in titles.items():
                if count > 1:
                    duplicates += count - 1
                    if len(examples) < 10:
                        examples.append(f"{learner}: {title} applied {count} times")
            if arguments.unknown is not None:
                acknowledged = set(books.values())
                for title in titles:
                    if title in unknown.get(learner, ()):
                        unknown_applied += 1
                    elif title not in acknowledged:
                        unexpected += 1
                        if len(examples) < 10:
                            examples.append(f"{learner}: {title} read but never sent")
    checked = sum(len(books) for books in expected.values())
    return {"checked": checked, "missing": missing, "duplicates": duplicates, "unexpected": unexpected,
            "unknown_applied": unknown_applied, "examples": examples}


async def probe(arguments: argparse.Namespace) -> dict[str, Any]:
    async with connect(arguments) as client:
        async def one(learner: str) -> dict[str, Any]:
            started = time.monotonic()
            if arguments.write:
                title = f"probe-{learner}-{time.time_ns()}"
                body = {"op": "create", "learner": learner, "title": title, "author": "Probe", "genre": "Mystery",
                        "rating": 3, "request_id": title}
            else:
                body = {"op": "list", "learner": learner, "limit": 1}
            try:
                await client.call("books", body)
                outcome: dict[str, Any] = {"ok": True, "code": None}
            except LyceumError as error:
                outcome = {"ok": False, "code": error.code}
            outcome["seconds"] = round(time.monotonic() - started, 3)
            return outcome
        learners = arguments.learners.split(",")
        answers = await asyncio.gather(*(one(learner) for learner in learners))
    return dict(zip(learners, answers))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("command", choices=["write", "verify", "probe"])
    parser.add_argument("--brokers", required=True)
    # Both (CURVE) or neither (plaintext, on loopback).
    parser.add_argument("--key")
    parser.add_argument("--server-key")
    parser.add_argument("--timeout", type=float, default=2.5)
    parser.add_argument("--attempts", type=int, default=3)
    parser.add_argument("--learners")
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--until")
    parser.add_argument("--in-flight", type=int, default=8)
    parser.add_argument("--run", default="w")
    parser.add_argument("--out")
    parser.add_argument("--ledger", nargs="+")
    parser.add_argument("--unknown", nargs="*")
    parser.add_argument("--write", action="store_true")
    arguments = parser.parse_args()
    if (arguments.key is None) != (arguments.server_key is None):
        parser.error("--key and --server-key go together (CURVE), or neither is given (plaintext)")
    needs = {"write": ["out", "learners"], "verify": ["ledger"], "probe": ["learners"]}[arguments.command]
    for name in needs:
        if getattr(arguments, name) is None:
            parser.error(f"{arguments.command} needs --{name}")
    longest = 600 if arguments.until else 120
    if not 0 < arguments.seconds <= longest or not 1 <= arguments.in_flight <= 64:
        parser.error(f"--seconds must be in (0, {longest}] (600 with --until) and --in-flight in 1-64: the load is bounded")
    command = {"write": write, "verify": verify, "probe": probe}[arguments.command]
    print(json.dumps(asyncio.run(command(arguments))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
