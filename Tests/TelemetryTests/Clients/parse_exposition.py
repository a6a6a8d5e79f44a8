"""Parses a Prometheus text exposition (a file) with prometheus_client's parser: an independent
reader of what Lyceum's Telemetry renders.

Usage: parse_exposition.py FILE
Prints one JSON object: {"families": {name: [type, help]}, "samples": [[name, labels, value], ...]}.
Exits 1 if the exposition does not parse.
"""
import json
import sys

from prometheus_client.parser import text_string_to_metric_families

with open(sys.argv[1], encoding="utf-8") as file:
    text = file.read()

families = {}
samples = []
for family in text_string_to_metric_families(text):
    families[family.name] = [family.type, family.documentation]
    for sample in family.samples:
        samples.append([sample.name, sample.labels, sample.value])
json.dump({"families": families, "samples": samples}, sys.stdout)
