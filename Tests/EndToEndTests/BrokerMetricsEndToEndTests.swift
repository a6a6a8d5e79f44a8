import Foundation
import LyceumTestSupport
import Testing
import ZeroMQ

/// The broker's per-service gauges against a real `lyceum serve`: service names clients make up
/// get no series of their own, so that a stream of made-up names cannot grow the metrics (and the
/// process's memory) without bound.
@Suite(.serialized)
struct BrokerMetricsEndToEndTests {
    @Test func madeUpServiceNamesGetNoSeriesOfTheirOwnButTheirQueuedRequestsAreCounted() throws {
        let data = try TemporaryDirectory()
        defer { data.remove() }
        let port = try freeLoopbackPort()
        let server = try Deployment.serve(data: data.path, arguments: ["--metrics-port", String(port)])
        let names = (0..<20).map { "made.up.\($0)" }
        let context = try Context()
        let client = try context.socket(.dealer)
        defer { client.close() }
        try client.set(.receiveTimeout, to: 10_000)
        try client.connect(server.endpoint)
        for name in names {
            try #require(try client.send(multipart: [[], Array("MDPC01".utf8), Array(name.utf8), Array("{}".utf8)]))
        }
        // Queued until no worker comes (`service_unknown`, after two seconds): counted together.
        let counted = try eventually {
            try Metrics.scrape(port: port).value("lyceum_broker_unregistered_queued_requests") == Double(names.count)
        }
        #expect(counted, "the queued requests for made-up services were not counted")
        var replies = 0
        while replies < names.count, let reply = try client.receiveMultipart() {
            #expect(String(decoding: reply.last ?? [], as: UTF8.self).contains("service_unknown"))
            replies += 1
        }
        try #require(replies == names.count)
        let drained = try eventually {
            try Metrics.scrape(port: port).value("lyceum_broker_unregistered_queued_requests") == 0
        }
        #expect(drained)
        let after = try Metrics.scrape(port: port)
        let labelled = Set(after.samples.compactMap { $0.labels["service"] })
        #expect(labelled.isDisjoint(with: names), "series labelled with made-up names: \(labelled.intersection(names).sorted())")
        // The services the process answers itself keep theirs.
        #expect(after.samples.contains { $0.name == "lyceum_broker_queued_requests" && $0.labels["service"] == "books" })
    }
}
