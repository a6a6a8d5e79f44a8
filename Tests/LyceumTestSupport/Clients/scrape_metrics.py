"""Fetches a Prometheus text exposition over HTTP and parses it with prometheus_client's parser.

Usage: scrape_metrics.py URL
Prints one JSON object: {"families": {name: type}, "samples": [[name, labels, value], ...]}.
Exits 1 if the exposition does not parse.
"""
import json
import sys
import urllib.request

from prometheus_client.parser import text_string_to_metric_families

with urllib.request.urlopen(sys.argv[1], timeout=5) as response:
    content_type = response.headers.get("Content-Type", "")
    text = response.read().decode("utf-8")

families = {}
samples = []
for family in text_string_to_metric_families(text):
    families[family.name] = family.type
    for sample in family.samples:
        samples.append([sample.name, sample.labels, sample.value])
json.dump({"content_type": content_type, "families": families, "samples": samples}, sys.stdout)
