#!/usr/bin/env bash
# Installs the Debian packages Lyceum needs, only when they are missing, so that `make run`
# and `make test` work on a fresh machine. Pass extra package groups as arguments:
#   ensure-deps.sh            libzmq, its headers, pkg-config and a C compiler (to build and run,
#                               and for the C references of bench-zmq and bench-mdp)
#   ensure-deps.sh test       + pyzmq and prometheus_client for /usr/bin/python3 (independent
#                               peers and the metrics parser in the tests), venv, setuptools and
#                               wheel (pip-installing clients/python offline), systemd-analyze,
#                               tmux (the real terminal `lyceum watch` is tested in), libczmq4
#                               (zcert, for the certificate interop tests), chromium (the
#                               browser the dashboard is tested in, headless), iproute2 (the
#                               network namespaces of deploy/netns-cluster.sh and ClusterTests),
#                               prometheus (promtool for the alerting rules' unit tests, and the
#                               server the netns cluster's monitoring host runs), curl (which
#                               asks that server, and etcd, whether it is ready), etcd-server and
#                               etcd-client (the coordination service CoordinationTests start),
#                               strace (which kills serve between a batch's write and its sync,
#                               and slows every fdatasync), fiu-utils (libfiu: fdatasync failing
#                               with EIO, DiskFaultTests), gcc (ClockJumpTests' clock shim),
#                               fusepy and libfuse2
#                               (scripts/powerloss_fs.py, the power-loss filesystem of the fault
#                               tests and `make nemesis`)
#   ensure-deps.sh bench      + redis-server, redis-benchmark (reference figures), pyzmq (the
#                               minimal workers of the routing benchmarks), strace and valgrind
#                               (system calls and instructions per request in `make bench`)
#   ensure-deps.sh kubernetes + yamllint, and kubernetes-validate (PyPI, pinned; it bundles the
#                               Kubernetes schemas, so it validates offline) in a virtual
#                               environment of its own, .build/kubernetes-validate (`make
#                               test-kubernetes` checks deploy/kubernetes/ with them)
#   ensure-deps.sh nats       + nats-server, go and Debian's nats.go sources (`make bench`'s NATS
#                               rows and `make bench-cluster`'s JetStream R3 cluster, built offline;
#                               the test suite skips them without these)
set -euo pipefail

# The version of kubernetes-validate whose bundled schemas `make test-kubernetes` checks against.
readonly KUBERNETES_VALIDATE=1.37.0
repository=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
missing=()
validator=0
pkg-config --exists libzmq 2>/dev/null || missing+=(libzmq3-dev pkg-config)
command -v cc >/dev/null || missing+=(gcc libc6-dev)
for group in "$@"; do
  case "$group" in
    test)
      /usr/bin/python3 -c 'import zmq' 2>/dev/null || missing+=(python3-zmq)
      /usr/bin/python3 -c 'import prometheus_client' 2>/dev/null || missing+=(python3-prometheus-client)
      /usr/bin/python3 -c 'import ensurepip, setuptools, wheel' 2>/dev/null || missing+=(python3-venv python3-setuptools python3-wheel)
      command -v systemd-analyze >/dev/null || missing+=(systemd)
      [ -x /usr/bin/tmux ] || missing+=(tmux)
      /sbin/ldconfig -p | grep -q 'libczmq\.so\.4 ' || missing+=(libczmq4)
      command -v chromium >/dev/null || missing+=(chromium)
      [ -x /usr/sbin/ip ] || [ -x /sbin/ip ] || [ -x /usr/bin/ip ] || missing+=(iproute2)
      { command -v promtool >/dev/null && command -v prometheus >/dev/null; } || missing+=(prometheus)
      command -v curl >/dev/null || missing+=(curl)
      [ -x /usr/bin/etcd ] || missing+=(etcd-server)
      [ -x /usr/bin/etcdctl ] || missing+=(etcd-client)
      [ -x /usr/bin/strace ] || missing+=(strace)
      [ -x /usr/bin/fiu-run ] || missing+=(fiu-utils)
      [ -x /usr/bin/cc ] || missing+=(gcc)
      /usr/bin/python3 -c 'import fusepy' 2>/dev/null || missing+=(python3-fusepy fuse) ;;
    bench)
      command -v redis-server >/dev/null || missing+=(redis-server)
      command -v redis-benchmark >/dev/null || missing+=(redis-tools)
      /usr/bin/python3 -c 'import zmq' 2>/dev/null || missing+=(python3-zmq)
      [ -x /usr/bin/strace ] || missing+=(strace)
      command -v callgrind_control >/dev/null || missing+=(valgrind) ;;
    kubernetes)
      command -v yamllint >/dev/null || missing+=(yamllint)
      /usr/bin/python3 -c 'import ensurepip' 2>/dev/null || missing+=(python3-venv)
      validator=1 ;;
    nats)
      [ -x /usr/sbin/nats-server ] || missing+=(nats-server)
      command -v go >/dev/null || missing+=(golang-go)
      [ -d /usr/share/gocode/src/github.com/nats-io/nats.go ] || missing+=(golang-github-nats-io-go-nats-dev) ;;
    *) echo "ensure-deps: unknown group '$group'" >&2; exit 2 ;;
  esac
done

# kubernetes-validate in a virtual environment of the repository's, made once (or again when
# another version is pinned); the Debian packages it needs come first.
install_validator() {
  local venv="$repository/.build/kubernetes-validate"
  [ "$("$venv/bin/kubernetes-validate" --version 2>/dev/null)" = "$KUBERNETES_VALIDATE" ] && return 0
  echo "ensure-deps: installing kubernetes-validate $KUBERNETES_VALIDATE in $venv" >&2
  rm -rf "$venv"
  /usr/bin/python3 -m venv "$venv"
  "$venv/bin/pip" install -q "kubernetes-validate==$KUBERNETES_VALIDATE" >&2
}

if [ ${#missing[@]} -gt 0 ]; then
  echo "ensure-deps: installing ${missing[*]}" >&2
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
fi
[ "$validator" -eq 0 ] || install_validator
