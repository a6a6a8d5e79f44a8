#!/usr/bin/env bash
# Checks deploy/kubernetes/ offline (`make test-kubernetes`, part of `make test`): yamllint with
# deploy/kubernetes/.yamllint, then kubernetes-validate --strict (unknown fields refused) against
# every Kubernetes version below, from the schemas it bundles. A copy of the workers' manifest
# with a misspelt field must fail, so that a check that passes everything cannot go unnoticed.
# Needs `scripts/ensure-deps.sh kubernetes` first.
set -euo pipefail

readonly VERSIONS=(1.29.0 1.33.0)
repository=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
manifests="$repository/deploy/kubernetes"
validate="$repository/.build/kubernetes-validate/bin/kubernetes-validate"

yamllint --strict -c "$manifests/.yamllint" "$manifests"
for version in "${VERSIONS[@]}"; do
  "$validate" --strict --quiet -k "$version" "$manifests"/*.yaml
  echo "deploy/kubernetes: every manifest validates against Kubernetes $version (--strict)"
done

misspelt=$(mktemp --suffix=.yaml)
trap 'rm -f "$misspelt"' EXIT
sed 's/readinessProbe:/readinesProbe:/' "$manifests/worker.yaml" >"$misspelt"
if "$validate" --strict --quiet -k "${VERSIONS[0]}" "$misspelt" >/dev/null 2>&1; then
  echo "check-kubernetes: a manifest with 'readinesProbe' passed kubernetes-validate --strict" >&2
  exit 1
fi
echo "deploy/kubernetes: a misspelt field is refused"
