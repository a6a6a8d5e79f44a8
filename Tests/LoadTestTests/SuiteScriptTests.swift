import Foundation
import JSON
import LyceumTestSupport
import Testing

/// `Benchmarks/suite.sh --quick` runs inside the test suite, on the binaries this build made,
/// so that the benchmark suite cannot rot. Its figures are not checked: only that every
/// measurement ran and reported.
@Suite struct SuiteScriptTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let redisInstalled = FileManager.default.isExecutableFile(atPath: "/usr/bin/redis-server")
        && FileManager.default.isExecutableFile(atPath: "/usr/bin/redis-benchmark")
    /// What the NATS rows need (`scripts/ensure-deps.sh nats`, which `make test` does not ask for).
    static let natsInstalled = FileManager.default.isExecutableFile(atPath: "/usr/sbin/nats-server")
        && FileManager.default.isExecutableFile(atPath: "/usr/bin/go")
        && FileManager.default.fileExists(atPath: "/usr/share/gocode/src/github.com/nats-io/nats.go")
    /// What the system-call columns need (`scripts/ensure-deps.sh test` or `bench`).
    static let straceInstalled = FileManager.default.isExecutableFile(atPath: "/usr/bin/strace")

    /// Runs `Benchmarks/suite.sh` with `arguments` on the binaries this build made, writing to `out`.
    static func suite(_ arguments: [String], out: URL, environment: [String: String] = [:]) throws -> BuiltProgram.Outcome {
        try BuiltProgram.run(repository.appendingPathComponent("Benchmarks/suite.sh").path, arguments,
                             environment: ["BIN_DIR": productsDirectory.path, "OUT": out.path].merging(environment) { $1 },
                             currentDirectory: repository)
    }

    /// Parts 1 to 6 with 5b (`--no-cluster`: parts 7 and 8 are `onlyClusterMeasuresEveryPoint`'s).
    @Test(.enabled(if: redisInstalled, "needs redis-server and redis-benchmark: scripts/ensure-deps.sh bench"),
          .timeLimit(.minutes(5)))
    func quickModeMeasuresEverything() throws {
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("lyceum-suite-\(UUID().uuidString)")
        defer { removeTemporary(out) }
        let outcome = try Self.suite(["--quick", "--no-cluster"], out: out)
        #expect(outcome.status == 0, "\(outcome.standardError.suffix(3000))")
        let results = try String(contentsOf: out.appendingPathComponent("results.md"), encoding: .utf8)
        for measurement in ["ZeroMQ PUSH→PULL", "Majordomo echo via Lyceum's broker", "catalog reads", "book reads",
                            "durable book creates", "durable book updates", "durable progress writes", "open loop",
                            "server restart", "journal layer replay", "resident memory",
                            "server CPU per catalog read", "server CPU per book read", "server CPU per durable create",
                            "server CPU per durable update", "server CPU per durable progress write",
                            "books list by title, first page of 50", "books list by created, page 21 of 50",
                            "book reads (get) of other learners", "Part 5b", "| 4200 | rating |"] {
            #expect(results.contains(measurement), "results.md lacks \(measurement)")
        }
        for goal in ["#26 durable creates ≥ 1.0× Redis SET always", "#26 book reads ≥ 1.3× Redis GET",
                     "#26 Majordomo through workers (tcp)", "#26 Majordomo through workers (inproc)",
                     "#26 restart with", "#26 open loop at 50% of peak: p99.9 ≤ 2 ms", "#40 books list, first page at 4200 books",
                     "#40 books list, page 21 at 4200 books", "#40 other learners' book reads, p99 beside"] {
            #expect(results.contains(goal), "results.md lacks the goal \(goal)")
        }
        #expect(results.contains("Without parts 7 and 8") && !results.contains("worker processes vs 1"), "--no-cluster ran part 7")
        // No callgrind in --quick, and a note says so; system calls from a short run under strace.
        #expect(results.contains("Instructions per request (callgrind"), "results.md says nothing of the instructions")
        let lines = results.split(separator: "\n", omittingEmptySubsequences: false)
        // Where strace may not attach (ptrace not allowed), a note says so instead.
        if Self.straceInstalled && !results.contains("System calls per request not measured") {
            let creates = lines.first { $0.hasPrefix("| durable book creates (always)") }.map(String.init) ?? ""
            let cells = creates.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
            // System calls and context switches per request, Lyceum's vs Redis's, both measured.
            #expect(cells.count == 7 && !cells[4].contains("n/a") && cells[4].contains(" vs "), "\(creates)")
            #expect(!cells[5].contains("n/a"), "\(creates)")
            #expect(results.contains("| book-create | "), "no system calls by name for book-create")
        }
        // Beside NATS when it is installed; otherwise a visible note says the rows were skipped.
        if Self.natsInstalled {
            for measurement in ["NATS request/reply via nats-server", "JetStream file-stream publish+ack",
                                "(lyceum broker + worker) vs per request (nats-server + responder)", "per JetStream publish"] {
                #expect(results.contains(measurement), "results.md lacks \(measurement)")
            }
        } else {
            #expect(results.contains("NATS rows skipped"), "results.md says nothing of the NATS rows")
        }
        // Every ratio is a number: no measurement came back empty.
        let measurements = lines.drop { !$0.hasPrefix("| Measurement") }.dropFirst(2).prefix { $0.hasPrefix("| ") }
        #expect(measurements.count >= (Self.natsInstalled ? 30 : 23))
        for row in measurements {
            let ratio = row.split(separator: "|")[3].trimmingCharacters(in: .whitespaces)
            #expect(Double(ratio) != nil, "no ratio in: \(row)")
        }
        let natsRuns = Self.natsInstalled ? ["worker-catalog-read", "nats-request", "nats-jetstream", "book-create-interval"] : []
        for run in ["catalog-read", "book-read", "book-create", "book-update", "progress-watch", "book-read-open", "verified-mix",
                    "redis-get", "redis-set-always", "pages-1050-title-1", "pages-4200-created-21", "pages-reads-alone",
                    "pages-reads-beside", "pages-lister"] + natsRuns {
            let data = try Data(contentsOf: out.appendingPathComponent("\(run).json"))
            #expect(throws: Never.self) { try JSONParser().parse(Array(data)) }
        }
        #expect(FileManager.default.fileExists(atPath: out.appendingPathComponent("reads.svg").path))
    }

    /// `--only-cluster` runs the scale-out part alone: a partitioned broker with 1, 2 and 4 real
    /// worker processes writing durably, the routing ceiling unpartitioned and partitioned, every
    /// point in cluster.json with its load average, and the chart.
    @Test(.enabled(if: redisInstalled, "needs redis-cli for the suite's header: scripts/ensure-deps.sh bench"),
          .timeLimit(.minutes(3)))
    func onlyClusterMeasuresEveryPoint() throws {
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("lyceum-cluster-\(UUID().uuidString)")
        defer { removeTemporary(out) }
        let outcome = try Self.suite(["--quick", "--only-cluster"], out: out)
        #expect(outcome.status == 0, "\(outcome.standardError.suffix(3000))")
        let data = try Data(contentsOf: out.appendingPathComponent("cluster.json"))
        let cluster = try JSONParser().parse(Array(data))
        guard case .array(let writes)? = cluster["writes"] else { Issue.record("cluster.json has no writes"); return }
        #expect(writes.map { $0["workers"] } == [.integer(1), .integer(2), .integer(4)])
        for point in writes {
            guard case .integer(let requests)? = point["requests"] else { Issue.record("no requests in \(point)"); continue }
            #expect(requests > 0)
            #expect(point["errors"] == .integer(0), "\(point)")
            for figure in ["broker_cpu_us_per_request", "workers_cpu_us_per_request"] {
                guard case .double(let cpu)? = point[figure] else { Issue.record("no \(figure) in \(point)"); continue }
                #expect(cpu > 0)
            }
            #expect(point["load_average"]?["before"] != nil)
        }
        for mode in ["unpartitioned", "partitioned"] {
            guard case .double(let ceiling)? = cluster["routing"]?[mode]?["ceiling_requests_per_second"] else {
                Issue.record("no routing ceiling for \(mode)"); continue
            }
            #expect(ceiling > 0)
        }
        let svg = try String(contentsOf: out.appendingPathComponent("cluster.svg"), encoding: .utf8)
        #expect(svg.hasPrefix("<svg") && svg.contains("durable writes/s"))
        let results = try String(contentsOf: out.appendingPathComponent("results.md"), encoding: .utf8)
        #expect(results.contains("4 worker processes vs 1") && results.contains("one broker's routing ceiling") && results.contains("Only part 7"))
        #expect(!results.contains("catalog reads"), "--only-cluster ran other parts")
    }

    /// Without nats-server the NATS rows are skipped with a note saying what to install, not
    /// failed; `--only-nats`, which has nothing else to run, exits 1 before starting anything.
    @Test(.timeLimit(.minutes(3)))
    func natsRowsAreSkippedVisiblyWithoutNATS() throws {
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("lyceum-nats-\(UUID().uuidString)")
        defer { if FileManager.default.fileExists(atPath: out.path) { removeTemporary(out) } }
        let outcome = try Self.suite(["--quick", "--only-nats"], out: out, environment: ["NATS_SERVER": "/nonexistent/nats-server"])
        #expect(outcome.status == 1)
        #expect(outcome.standardError.contains("NATS rows skipped: nats-server"), "\(outcome.standardError.suffix(2000))")
        #expect(outcome.standardError.contains("scripts/ensure-deps.sh nats"))
    }

    @Test(.enabled(if: redisInstalled, "needs redis-server and redis-benchmark: scripts/ensure-deps.sh bench"),
          .timeLimit(.minutes(2)))
    func shortSoakSamplesMemory() throws {
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("lyceum-soak-\(UUID().uuidString)")
        defer { removeTemporary(out) }
        let outcome = try Self.suite(["--soak", "3"], out: out)
        #expect(outcome.status == 0, "\(outcome.standardError.suffix(3000))")
        let samples = try String(contentsOf: out.appendingPathComponent("soak-rss.csv"), encoding: .utf8).split(separator: "\n")
        #expect(samples.count >= 2)
        #expect(try String(contentsOf: out.appendingPathComponent("soak.md"), encoding: .utf8).contains("resident memory"))
    }

    /// `Benchmarks/events-cost.sh` (part of `make bench-events`) in one short round: both arms
    /// ran for both durabilities, and every cell holds numbers.
    @Test(.timeLimit(.minutes(2)))
    func eventsCostScriptComparesBothArms() throws {
        let outcome = try BuiltProgram.run(Self.repository.appendingPathComponent("Benchmarks/events-cost.sh").path, ["1", "1", "500"],
                                           environment: ["BIN_DIR": productsDirectory.path],
                                           currentDirectory: Self.repository)
        #expect(outcome.status == 0, "\(outcome.standardError.suffix(3000))")
        let rows = outcome.standardOutput.split(separator: "\n").filter { $0.hasPrefix("| always") || $0.hasPrefix("| none") }
        #expect(rows.count == 2, "\(outcome.standardOutput)")
        for row in rows {
            // durability, then four "off / on (change)" cells.
            let cells = row.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
            #expect(cells.count == 5 && cells.dropFirst().allSatisfy { $0.contains(" / ") && $0.contains("%") }, "\(row)")
        }
        // The dashboard of the events arm received the writes' events.
        #expect(outcome.standardError.contains("events the dashboard got: "), "\(outcome.standardError.suffix(2000))")
        #expect(!outcome.standardError.contains("events the dashboard got: 0"), "\(outcome.standardError.suffix(2000))")
    }
}
