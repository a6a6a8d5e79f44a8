# The two commands a new machine needs: `make run` and `make test`.
SWIFT ?= swift

.PHONY: run test build bench-zmq bench-mdp deps

## Runs Lyceum with its embedded defaults, installing libzmq first when it is missing.
run:
	@scripts/ensure-deps.sh
	$(SWIFT) build -c release --product lyceum
	.build/release/lyceum --version

## Builds and runs the whole test suite, installing what the tests need first.
test:
	@scripts/ensure-deps.sh test
	$(SWIFT) build --build-tests
	$(SWIFT) test

build:
	@scripts/ensure-deps.sh
	$(SWIFT) build

## Swift wrapper vs C libzmq, PUSH→PULL throughput (issue: Foundation).
bench-zmq:
	@scripts/ensure-deps.sh
	Benchmarks/zmq-throughput.sh

## Journal: appends/s per durability policy (1 and 64 writers), 1M-record replay and memory, vs Redis.
.PHONY: bench-journal
bench-journal:
	@scripts/ensure-deps.sh bench
	Benchmarks/journal-bench.sh

## Majordomo echo through Lyceum's broker: sync client and 50 in flight (issue: Majordomo).
bench-mdp:
	@scripts/ensure-deps.sh
	$(SWIFT) build -c release --product mdp-bench
	.build/release/mdp-bench

## Progress events: events/s with 100 subscribers, p50/p99 delivery latency at 10k/s, cost per write (issue 6).
.PHONY: bench-events
bench-events:
	@scripts/ensure-deps.sh
	$(SWIFT) build -c release --product events-bench
	.build/release/events-bench
