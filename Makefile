# The two commands a new machine needs: `make run` and `make test`.
SWIFT ?= swift

.PHONY: run test build bench-zmq bench-mdp bench-journal

## Serves catalog, progress and books with the embedded defaults (clients on tcp://127.0.0.1:5555,
## data in ./lyceum-data, the sample catalog) until Ctrl-C; installs libzmq first when missing.
run:
	@scripts/ensure-deps.sh
	$(SWIFT) build -c release --product lyceum
	.build/release/lyceum serve

## Builds and runs the whole test suite, installing what the tests need first.
test:
	@scripts/ensure-deps.sh test bench
	$(SWIFT) build --build-tests
	$(SWIFT) test
	$(MAKE) --no-print-directory test-python
	$(MAKE) --no-print-directory test-alerts
	$(MAKE) --no-print-directory test-kubernetes

## The alerting rules of deploy/prometheus/: they parse, and every one fires (and stays quiet)
## as its unit test says, with Debian's promtool; the scrape configuration parses (its token
## file is the installed host's, hence --syntax-only).
.PHONY: test-alerts
test-alerts:
	@scripts/ensure-deps.sh test
	promtool check rules deploy/prometheus/lyceum-alerts.yml
	promtool test rules deploy/prometheus/lyceum-alerts.test.yml
	cd deploy/prometheus && promtool check config --syntax-only prometheus.yml

## The Kubernetes manifests of deploy/kubernetes/ (docs/kubernetes.md), offline: yamllint, and
## kubernetes-validate --strict (PyPI, in .build/kubernetes-validate; it bundles the schemas)
## against Kubernetes 1.29.0 and 1.33.0, and each lyceum container's settings as its pod would
## start it (the debug `lyceum`, LYCEUM overrides); a misspelt field or setting must be refused.
.PHONY: test-kubernetes
test-kubernetes:
	@scripts/ensure-deps.sh kubernetes
	$(SWIFT) build --product lyceum
	scripts/check-kubernetes.sh

## Randomized fault schedules (issue 36): kills, pauses, link cuts and power cuts of random worker
## hosts of a replicated netns cluster on power-loss filesystems under a retried write load, checked
## by Jepsen's total-queue rules, the replicas' journals compared; each run and a total printed.
## NEMESIS_RUNS (default 10) runs of NEMESIS_SECONDS (default 20) each; NEMESIS_SEED replays a
## schedule; NEMESIS_DURABILITY (default always). Needs root and /dev/fuse. Never part of `make test`.
.PHONY: nemesis
nemesis:
	@scripts/ensure-deps.sh test
	$(SWIFT) build -c release --product lyceum
	/usr/bin/python3 Tests/ClusterTests/Clients/nemesis.py --lyceum .build/release/lyceum --runs $${NEMESIS_RUNS:-10} \
	  --seconds $${NEMESIS_SECONDS:-20} --durability $${NEMESIS_DURABILITY:-always} $${NEMESIS_SEED:+--seed $$NEMESIS_SEED}

## The Python client's tests (clients/python/tests) against the debug `lyceum` (LYCEUM_BIN overrides).
.PHONY: test-python
test-python:
	@scripts/ensure-deps.sh test
	$(SWIFT) build --product lyceum
	/usr/bin/python3 -m unittest discover -s clients/python/tests -t clients/python

build:
	@scripts/ensure-deps.sh
	$(SWIFT) build

## Swift wrapper vs C libzmq, PUSH→PULL throughput (issue: Foundation).
bench-zmq:
	@scripts/ensure-deps.sh
	Benchmarks/zmq-throughput.sh

## An 18/MDP client beside a 7/MDP client through one serve: round trips per second, each alone and
## both at once, and the ratio 18:7 (issue 37). BENCH_SECONDS sets each run's length (default 5).
.PHONY: bench-mdp18
bench-mdp18:
	@scripts/ensure-deps.sh bench
	$(SWIFT) build -c release --product lyceum
	/usr/bin/python3 Benchmarks/mdp18_beside_7.py .build/release/lyceum $${BENCH_SECONDS:-5}

## Journal: appends/s per durability policy (1 and 64 writers; 50 in flight blocked vs acknowledged by callbacks),
## 1M-record replay and memory, vs Redis.
bench-journal:
	@scripts/ensure-deps.sh bench
	Benchmarks/journal-bench.sh

## Backup and restore of 1M books, and a running backup's cost to durable writes, vs Redis BGSAVE (issue 29).
.PHONY: bench-backup
bench-backup:
	@scripts/ensure-deps.sh bench
	Benchmarks/backup-bench.sh

## Majordomo echo through Lyceum's broker: sync client and 50 in flight, vs a C broker and C workers
## built and measured in the same run (issue: Majordomo).
bench-mdp:
	@scripts/ensure-deps.sh
	Benchmarks/mdp-bench.sh

## Lyceum beside Redis, NATS and C in one run: ratios, server CPU, system calls, context switches and
## instructions per request, goals, charts in bench-results/<date>/ (issues 7, 19, 26).
## Benchmarks/suite.sh --no-cluster leaves out the scale-out and replication parts.
.PHONY: bench soak
bench:
	@scripts/ensure-deps.sh bench nats
	Benchmarks/suite.sh

## The floors (issue 38): the Lyceum rows that have one (reads, durable writes, CURVE, broker + worker) beside C
## programs over libzmq doing the least each request needs (Benchmarks/floors/), with Redis, system calls, context
## switches, instructions and journal records / fdatasyncs per request; results.md in bench-results/<date>/.
## About 6 minutes on the 2-core VM; RUN_SECONDS (10) shortens it.
.PHONY: bench-floors
bench-floors:
	@scripts/ensure-deps.sh bench
	Benchmarks/suite.sh --only-floors

## One learner's library (issue 40, part 5b of make bench alone): `books list` first page and page 21 of 50
## by title, rating and created at 1,050, 10,000 and 100,000 books of one learner, and other learners' book
## reads at 2,000/s alone and beside one client paging the 100,000 books; results.md and pages.svg in
## bench-results/<date>/ (LIBRARIES, PAGE_REQUESTS, PAGES_RATE: Benchmarks/suite.sh's header).
.PHONY: bench-pages
bench-pages:
	@scripts/ensure-deps.sh bench
	Benchmarks/suite.sh --only-pages

## Scale-out (issue 17): durable writes through one `broker --partitions 16` with 1, 2 and 4 partitioned
## worker processes, and one broker's routing ceiling; cluster.md, .json and .svg in bench-results/<date>/.
## Replication (issue 25, as root): writes/s and CPU per write at R = 1 and R = 3, fail-over over 10 kills
## of a leader's host and acknowledged writes lost, beside NATS JetStream R3; replication.md, .json, .svg.
.PHONY: bench-cluster
bench-cluster:
	@scripts/ensure-deps.sh test bench nats
	Benchmarks/suite.sh --only-cluster

## Fail-over as a client sees it (issue 35, as root): the worst wait of any retried create through
## both brokers of deploy/netns-cluster.sh's replicated cluster (its defaults; ARGS adds `up`
## options) over a kill -9 and a 12 s cut of the busiest leader host, every acknowledgement read back.
.PHONY: bench-failover
bench-failover:
	@scripts/ensure-deps.sh test
	$(SWIFT) build -c release --product lyceum
	LYCEUM=.build/release/lyceum Benchmarks/failover-netns.sh $(ARGS)

## Ten minutes of the mix at 50% of its peak: resident memory sampled, no errors allowed.
soak:
	@scripts/ensure-deps.sh bench
	Benchmarks/suite.sh --soak 600

## LyceumClient's overhead over raw MDP against a real serve (issue 18).
.PHONY: bench-client
bench-client:
	Benchmarks/client-overhead.sh

## Progress events: libzmq alone in C (the floor), then events/s with 100 subscribers, p50/p99 delivery
## latency at 10k/s, cost per write in-process, then what publishing adds to `lyceum serve`'s progress
## writes end to end (issue 6).
.PHONY: bench-events
bench-events:
	@scripts/ensure-deps.sh
	$(SWIFT) build -c release --product events-bench
	$(SWIFT) build -c release --product lyceum
	Benchmarks/events-floor.sh
	.build/release/events-bench
	BIN_DIR=.build/release Benchmarks/events-cost.sh

## Issue 14's abuse suite: one attack per hostile-peer finding plus a few seconds of fuzzing.
.PHONY: abuse fuzz
abuse:
	@scripts/ensure-deps.sh test
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build --filter AbuseTests

## The seeded fuzzer against `lyceum serve` for longer: `make fuzz SECONDS=600 SEED=42` (the seed
## is printed; without SEED a random one is used).
SECONDS ?= 60
SEED ?=
fuzz:
	@scripts/ensure-deps.sh test
	$(SWIFT) build --build-tests
	ABUSE_FUZZ_SECONDS=$(SECONDS) ABUSE_FUZZ_SEED=$(SEED) $(SWIFT) test --skip-build --filter 'HostilePeerTests/fuzz'
