"""Lyceum from majortomo (PyPI ``majortomo``, an 18/MDP client), with no Lyceum package installed:
its Client sends one frame of JSON to a service and reads the reply's parts. Run against
``lyceum serve`` (LYCEUM_ENDPOINT, default tcp://127.0.0.1:5555); docs/clients.md shows it, and
clients/python/tests/test_mdp18.py runs it.
"""
import json
import os

from majortomo import Client

endpoint = os.environ.get("LYCEUM_ENDPOINT", "tcp://127.0.0.1:5555")


def call(client, service, request):
    """One request, its reply's parts (PARTIALs, then the FINAL) decoded, each a whole JSON reply."""
    client.send(service, json.dumps(request).encode())
    parts = [json.loads(frame) for frame in client.recv_all_as_list(timeout=5)]
    for part in parts:
        if not part["ok"]:
            raise RuntimeError(part["error"]["code"] + ": " + part["error"]["message"])
    return [part["result"] for part in parts]


with Client(endpoint) as client:
    for title in ["Dune", "Emma", "Ivanhoe"]:
        [created] = call(client, "books", {"op": "create", "learner": "ada", "title": title,
                                           "author": "Anon", "genre": "Fantasy", "rating": 4})
        print("created", created["book"]["title"], "version", created["book"]["version"])
    # A list of many pages comes as one part per page: the books are every part's books.
    pages = call(client, "books", {"op": "list", "learner": "ada", "sort": "title", "limit": 2})
    print(len(pages), "parts:", ", ".join(book["title"] for page in pages for book in page["books"]))
