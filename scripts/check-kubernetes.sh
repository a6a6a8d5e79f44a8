#!/usr/bin/env bash
# Checks deploy/kubernetes/ offline (`make test-kubernetes`, part of `make test`): yamllint with
# deploy/kubernetes/.yamllint, then kubernetes-validate --strict (unknown fields refused) against
# every Kubernetes version below, from the schemas it bundles, then every lyceum container's
# settings as its pod would start it (scripts/kubernetes_settings.py, with the lyceum of $LYCEUM,
# default the debug build). Copies of the workers' manifest with a misspelt field and with a
# misspelt setting must fail, so that a check that passes everything cannot go unnoticed.
# Needs `scripts/ensure-deps.sh kubernetes` and a built lyceum first.
set -euo pipefail

readonly VERSIONS=(1.29.0 1.33.0)
repository=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
manifests="$repository/deploy/kubernetes"
validate="$repository/.build/kubernetes-validate/bin/kubernetes-validate"
python="$repository/.build/kubernetes-validate/bin/python"
lyceum=${LYCEUM:-$repository/.build/debug/lyceum}

yamllint --strict -c "$manifests/.yamllint" "$manifests"
for version in "${VERSIONS[@]}"; do
  "$validate" --strict --quiet -k "$version" "$manifests"/*.yaml
  echo "deploy/kubernetes: every manifest validates against Kubernetes $version (--strict)"
done

settings() { "$python" "$repository/scripts/kubernetes_settings.py" "$lyceum" "$@"; }
settings "$manifests"/*.yaml

misspelt=$(mktemp --suffix=.yaml)
trap 'rm -f "$misspelt"' EXIT
sed 's/readinessProbe:/readinesProbe:/' "$manifests/worker.yaml" >"$misspelt"
if "$validate" --strict --quiet -k "${VERSIONS[0]}" "$misspelt" >/dev/null 2>&1; then
  echo "check-kubernetes: a manifest with 'readinesProbe' passed kubernetes-validate --strict" >&2
  exit 1
fi
sed 's/lease-ttl = /lease-tll = /' "$manifests/worker.yaml" >"$misspelt"
if settings "$manifests/cluster.yaml" "$misspelt" >/dev/null 2>&1; then
  echo "check-kubernetes: a worker.conf with 'lease-tll' was accepted" >&2
  exit 1
fi
echo "deploy/kubernetes: a misspelt field and a misspelt setting are refused"
