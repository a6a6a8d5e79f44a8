#!/usr/bin/env bash
# Prints the path of a release `lyceum` built from REVISION (a tag or commit of this repository),
# building it once: from a detached `git worktree` of that commit, with
# `swift build -c release --product lyceum`, then cached under
# ${LYCEUM_RELEASE_CACHE:-REPO/.build/releases}/COMMIT/lyceum, keyed by the full commit id, so
# that a second run (and a second test) finds it and builds nothing. A lock keeps two runs from
# building the same commit at once. Used by ClusterTests.RollingUpgradeTests (docs/testing.md).
#
# usage: scripts/release-build.sh REVISION     (e.g. release-2026-12-07)
set -euo pipefail

[ $# -eq 1 ] || { echo "usage: scripts/release-build.sh REVISION" >&2; exit 2; }
repository=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
commit=$(git -C "$repository" rev-parse --verify --quiet "$1^{commit}") \
  || { echo "release-build: no commit '$1' in $repository (git fetch --tags?)" >&2; exit 1; }
cache=${LYCEUM_RELEASE_CACHE:-$repository/.build/releases}/$commit
binary=$cache/lyceum
mkdir -p "$cache"
exec 9>"$cache/.lock"
flock 9
# `complete` is written last: a build cut short (or its copy) is made again.
if [ ! -f "$cache/complete" ]; then
  source=$(mktemp -d "${TMPDIR:-/tmp}/lyceum-release-XXXXXX")
  trap 'git -C "$repository" worktree remove --force "$source" >/dev/null 2>&1 || rm -rf "$source"' EXIT
  echo "release-build: building lyceum at $commit in $source (once; cached in $cache)" >&2
  git -C "$repository" worktree add --detach --quiet "$source" "$commit"
  (cd "$source" && swift build -c release --product lyceum >&2)
  # The resource bundles (the sample catalog, the dashboard's page) live beside the executable.
  for bundle in "$source"/.build/release/*.resources; do
    [ -d "$bundle" ] && cp -R "$bundle" "$cache/"
  done
  cp "$source/.build/release/lyceum" "$binary.partial"
  mv "$binary.partial" "$binary"
  touch "$cache/complete"
fi
echo "$binary"
