import Foundation
import LearningServices
import LearningServicesTestSupport
import LyceumTestSupport
import Majordomo
import Synchronization
import Testing
import ZeroMQ

/// Issue 40, "no request holds the loop", against a real `lyceum serve`: one client keeps many
/// searches of a big catalog in flight without pause (each scores every course) while another
/// client's `get_course` requests are answered. Before, every search ran on the broker's thread
/// and the other client waited for them (a release build with the 64 MiB catalog on the 2-core VM:
/// p50 0.23–0.26 ms alone, 332–571 ms beside two clients searching back to back); now they are
/// ranked on the catalog's search thread (p50 0.21–0.24 ms beside them).
/// The latencies are printed, not asserted: tests bound hangs only.
@Suite(.serialized)
struct CatalogSearchFloodTests {
    /// Courses of the generated catalog: enough that a debug build's search takes tens of milliseconds.
    static let courses = 4_000
    /// Searches the flooding client keeps in flight: more than the search queue holds, so that
    /// some find it full.
    static let searchesInFlight = 2 * CatalogService.maxQueuedSearches
    static let reads = 200

    @Test func anotherClientIsAnsweredWhileOneSearchesABigCatalogWithoutPause() throws {
        let data = try TemporaryDirectory()
        defer { data.remove() }
        let file = (data.path as NSString).appendingPathComponent("big-catalog.json")
        try #require(FileManager.default.createFile(atPath: file, contents: Data(BigCatalog.file(courses: Self.courses))))
        let metricsPort = try freeLoopbackPort()
        let server = try Deployment.serve(
            data: (data.path as NSString).appendingPathComponent("data"),
            arguments: ["--catalog", file, "--durability", "none", "--metrics-port", String(metricsPort)])
        let alone = try Self.readLatencies(server.endpoint)

        let flooding = Flood()
        let flood = ThreadResult("search-flood") { () throws -> (answered: Int, unavailable: Int) in
            try Self.searchWithoutPause(server.endpoint, flooding)
        }
        // The flood is under way (its first replies came) before the other client is timed.
        try #require(flooding.answering.wait(), "no search was answered")
        let beside = try Self.readLatencies(server.endpoint)
        flooding.stop.store(true, ordering: .relaxed)
        let searches = try flood.value()
        print("get_course over \(Self.courses) courses, ms: alone \(Self.summary(alone)); beside a client with \(Self.searchesInFlight) searches in flight",
              "\(Self.summary(beside)); that client had \(searches.answered) searches answered and \(searches.unavailable) refused unavailable")
        #expect(beside.count == Self.reads)
        #expect(searches.answered > 0)

        // Each search refused with a full queue is counted under the catalog's unavailable errors.
        let metrics = try HTTPExchange.get("/metrics", port: metricsPort)
        let line = #"lyceum_request_errors_total{service="catalog",code="unavailable"} "#
        let counted = metrics.body.split(separator: "\n").first { $0.hasPrefix(line) }.flatMap { Int($0.dropFirst(line.count)) } ?? 0
        #expect(counted == searches.unavailable, "\(metrics.body.split(separator: "\n").filter { $0.contains("catalog") })")
        // The search thread stops with the broker: an orderly exit, no thread left to wait for.
        #expect(server.process.signal(SIGTERM) == 0)
    }

    /// The latencies, in milliseconds, of `reads` `get_course` requests sent one after the other.
    static func readLatencies(_ endpoint: String) throws -> [Double] {
        let context = try Context()
        let client = Client(endpoint: endpoint, configuration: ClientConfiguration(timeout: .seconds(120), attempts: 1), context: context)
        defer { client.close() }
        var latencies: [Double] = []
        for index in 0..<reads {
            let started = ContinuousClock.now
            let reply = try client.call("catalog", body: [Array(#"{"op":"get_course","course":"c\#(index * 37 % courses)"}"#.utf8)])
            let elapsed = ContinuousClock.now - started
            try #require(String(decoding: reply[0], as: UTF8.self).hasPrefix(#"{"ok":true"#))
            latencies.append(Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15)
        }
        return latencies
    }

    /// How the test and the flooding client's thread tell each other when to go on.
    final class Flood: Sendable {
        /// Set to end the flood.
        let stop = Atomic<Bool>(false)
        /// Opened at the flood's first reply.
        let answering = Gate()
    }

    /// Keeps `searchesInFlight` searches in flight, each sent as soon as one is answered, until
    /// `flood.stop`; then waits for the last replies.
    static func searchWithoutPause(_ endpoint: String, _ flood: Flood) throws -> (answered: Int, unavailable: Int) {
        let context = try Context()
        let client = AsyncClient(
            endpoint: endpoint, capacity: searchesInFlight, configuration: ClientConfiguration(timeout: .seconds(120), attempts: 1), context: context)
        defer { client.close() }
        let queries = ["ka", "lo mi", "vi", "ne ra to"]
        var sent = 0
        var counts = (answered: 0, unavailable: 0)
        while !flood.stop.load(ordering: .relaxed) || client.inFlight > 0 {
            while !flood.stop.load(ordering: .relaxed), client.inFlight < searchesInFlight {
                _ = try client.send("catalog", body: [Array(#"{"op":"search","query":"\#(queries[sent % queries.count])"}"#.utf8)])
                sent += 1
            }
            guard let completion = try client.receive(timeout: .seconds(120)) else { continue }
            if counts.answered + counts.unavailable == 0 { flood.answering.open() }
            let reply = String(decoding: try completion.result.get()[0], as: UTF8.self)
            if reply.hasPrefix(#"{"ok":true"#) {
                counts.answered += 1
            } else {
                try #require(reply.contains(#""code":"unavailable""#), "\(reply)")
                counts.unavailable += 1
            }
        }
        return counts
    }

    /// p50, p99 and the maximum of `latencies`.
    static func summary(_ latencies: [Double]) -> String {
        let sorted = latencies.sorted()
        guard !sorted.isEmpty else { return "none" }
        func percentile(_ fraction: Double) -> Double { sorted[min(sorted.count - 1, Int(Double(sorted.count) * fraction))] }
        return String(format: "p50 %.2f, p99 %.2f, max %.2f", percentile(0.5), percentile(0.99), sorted[sorted.count - 1])
    }
}
