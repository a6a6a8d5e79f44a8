"""Runs every lyceum container of deploy/kubernetes/ with `--print-settings`, as its pod would
start it: its arguments, its configuration file from its ConfigMap, and its environment (the
ConfigMaps it takes, its `value`s with `$(NAME)` expanded, a stand-in for each Secret and pod
field). lyceum refuses an unknown key or `LYCEUM_…` variable, a bad value or a conflict (exit 2),
which no schema can see.

    kubernetes_settings.py LYCEUM_BINARY MANIFEST…
"""
import os
import re
import subprocess
import sys
import tempfile

import yaml

# What the kubelet would put in place of a pod field or a Secret's key.
FIELDS = {"metadata.name": "lyceum-worker-0", "status.podIP": "10.0.0.10"}
SECRET = "stand-in-token-0123456789"


def environment(container, config_maps):
    """The container's variables, in the order the kubelet sets them."""
    values = {}
    for source in container.get("envFrom", []):
        values.update(config_maps[source["configMapRef"]["name"]])
    for variable in container.get("env", []):
        if "value" in variable:
            values[variable["name"]] = re.sub(r"\$\((\w+)\)", lambda m: values.get(m.group(1), m.group(0)), variable["value"])
        elif "fieldRef" in variable["valueFrom"]:
            values[variable["name"]] = FIELDS[variable["valueFrom"]["fieldRef"]["fieldPath"]]
        else:
            values[variable["name"]] = SECRET
    return values


def main():
    binary, manifests = sys.argv[1], sys.argv[2:]
    documents = [document for path in manifests for document in yaml.safe_load_all(open(path)) if document]
    config_maps = {d["metadata"]["name"]: d.get("data", {}) for d in documents if d["kind"] == "ConfigMap"}
    checked = 0
    with tempfile.TemporaryDirectory() as files:
        for data in config_maps.values():
            for key, text in data.items():
                with open(os.path.join(files, key), "w") as file:
                    file.write(text)
        for document in documents:
            if document["kind"] not in ("Deployment", "StatefulSet"):
                continue
            for container in document["spec"]["template"]["spec"]["containers"]:
                if "/lyceum:" not in container["image"]:
                    continue
                arguments = [argument.replace("/etc/lyceum", files) for argument in container["args"]]
                variables = environment(container, config_maps)
                result = subprocess.run([binary] + arguments + ["--print-settings"], env=variables, capture_output=True, text=True)
                where = f"{document['kind']} {document['metadata']['name']}, container {container['name']}"
                if result.returncode != 0:
                    print(f"kubernetes_settings: {where}: lyceum {' '.join(arguments)} refused its settings:\n{result.stderr}", file=sys.stderr)
                    return 1
                checked += 1
    print(f"deploy/kubernetes: the settings of {checked} lyceum containers are accepted (--print-settings)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
