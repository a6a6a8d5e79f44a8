import Catalog
import Foundation
import LyceumTestSupport
import Testing

/// The command-line tools with two brokers: a worker registered with both, publishing into both
/// forwarders; `call` and `status` fail over past a killed broker, and `watch`, subscribed to
/// both brokers' events, shows each event once and keeps receiving them through the other one.
@Suite struct SeveralBrokersEndToEndTests {
    @Test func callStatusAndWatchCarryOnThroughTheSecondBrokerWhenTheFirstIsKilled() throws {
        let data = try TemporaryDirectory()
        defer { data.remove() }
        let heartbeat = ["--heartbeat-interval", "250", "--heartbeat-liveness", "3"]
        let (first, second) = (try freeLoopbackEndpoint(), try freeLoopbackEndpoint())
        let (firstEvents, secondEvents) = (try freeLoopbackEndpoint(), try freeLoopbackEndpoint())
        let (firstForwarder, secondForwarder) = (try freeLoopbackEndpoint(), try freeLoopbackEndpoint())
        let firstBroker = try LyceumProcess(["broker", "--endpoint", first, "--events-endpoint", firstEvents, "--forwarder-endpoint", firstForwarder] + heartbeat)
        defer { firstBroker.stop() }
        let secondBroker = try LyceumProcess(["broker", "--endpoint", second, "--events-endpoint", secondEvents, "--forwarder-endpoint", secondForwarder] + heartbeat)
        defer { secondBroker.stop() }
        let worker = try LyceumProcess([
            "worker", "--broker", first, "--broker", second, "--service", "progress", "--sessions", "2", "--data", data.path,
            "--forwarder-endpoint", firstForwarder, "--forwarder-endpoint", secondForwarder,
        ] + heartbeat)
        defer { worker.stop() }
        let course = try #require(Catalog.sample().courses.first { !$0.lessons.isEmpty })
        let stats = #"{"op":"course_stats","course":"\#(course.id)"}"#
        for broker in [first, second] {
            let served = try eventually {
                try LyceumProcess.run(["call", "--broker", broker, "--timeout", "500", "progress", stats]).status == 0
            }
            try #require(served, "progress not served through \(broker); worker:\n\(worker.standardError)")
        }
        // Subscribed to both brokers' events (the one killed below last, so that one endpoint
        // alone would not do): every event arrives twice and is shown once.
        let watch = try LyceumProcess(["watch", "--json", "--connect", secondEvents, "--connect", firstEvents, "--no-snapshot", "--no-titles"])
        defer { watch.stop() }
        let both = ["--broker", first, "--broker", second, "--timeout", "2000"]
        var seconds = 0
        /// Saves positions for `learner` until watch has printed one of them.
        func writeUntilWatchShows(_ learner: String) throws {
            let printed = try eventually { () throws -> Bool in
                seconds += 1
                let write = #"{"op":"save_position","learner":"\#(learner)","course":"\#(course.id)","lesson":"\#(course.lessons[0].id)","position_seconds":\#(seconds)}"#
                let call = try LyceumProcess.run(["call"] + both + ["progress", write])
                #expect(call.status == 0, "\(call.stderr)")
                Thread.sleep(forTimeInterval: 0.2)
                return watch.standardOutput.contains(#""learner":"\#(learner)""#)
            }
            try #require(printed, "watch printed no event of \(learner); stdout:\n\(watch.standardOutput)\nstderr:\n\(watch.standardError)")
        }
        try writeUntilWatchShows("before")

        firstBroker.stop()
        let status = try LyceumProcess.run(["status"] + both)
        #expect(status.status == 0, "\(status.stderr)")
        #expect(status.stdout.contains("\"progress\""), "\(status.stdout)")
        try writeUntilWatchShows("after")
        let sequences = try watch.standardOutput.split(separator: "\n").map { line in
            try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])["seq"] as? Int
        }
        #expect(sequences.count == Set(sequences).count, "an event was shown twice: \(sequences)")
        #expect(watch.signal(SIGINT) == 0)
        #expect(worker.signal(SIGTERM) == 0)
    }

    @Test func benchVerifyFailsOverWithoutApplyingAWriteTwice() throws {
        let data = try TemporaryDirectory()
        defer { data.remove() }
        let (cluster, second) = try Deployment.twoBrokers(data: data.path, services: Deployment.standardServices)
        let first = cluster.endpoint
        // Creates only, paced, so that the books can be counted afterwards; the first broker dies mid-run.
        let bench = try LyceumProcess([
            "bench", "--endpoint", first, "--endpoint", second, "--scenario", "book-create", "--connections", "4", "--rate", "100",
            "--in-flight", "8", "--duration", "4s", "--warmup", "0s", "--learners", "4", "--seed", "7",
            "--timeout", "1000ms", "--verify", "--json",
        ])
        defer { bench.stop() }
        // Mid-run: once the first books are stored (the bench's learners are bench-SEED-N).
        let writing = try eventually {
            let list = try LyceumProcess.run(["call", "--broker", second, "--timeout", "500", "books", #"{"op":"list","learner":"bench-7-0"}"#])
            return list.status == 0 && !list.stdout.contains(#""books":[]"#)
        }
        try #require(writing, "no book of bench-7-0 stored; bench:\n\(bench.standardError)")
        cluster.stop("broker")
        try #require(bench.waitForExit() == 0, "bench failed:\n\(bench.standardOutput)\n\(bench.standardError)")
        let result = try #require(try JSONSerialization.jsonObject(with: Data(bench.standardOutput.utf8)) as? [String: Any])
        #expect((result["errors"] as? [String: Any])?.isEmpty == true, "\(result)")
        #expect((result["failovers"] as? Int ?? 0) >= 1, "\(result)")
        let acknowledged = try #require(result["requests"] as? Int)

        // Through the surviving broker: one book per acknowledged create (a create-only mix sets
        // up none), none twice.
        var stored = 0
        for learner in (0..<4).map({ "bench-7-\($0)" }) {
            var cursor: String?
            repeat {
                let page = cursor.map { #","cursor":"\#($0)""# } ?? ""
                let call = try LyceumProcess.run(["call", "--broker", second, "books", #"{"op":"list","learner":"\#(learner)","limit":100\#(page)}"#])
                try #require(call.status == 0, "\(call.stderr)")
                let reply = try #require(try JSONSerialization.jsonObject(with: Data(call.stdout.utf8)) as? [String: Any])
                let listed = try #require(reply["result"] as? [String: Any])
                stored += (listed["books"] as? [Any])?.count ?? 0
                cursor = listed["next_cursor"] as? String
            } while cursor != nil
        }
        #expect(stored == acknowledged)
        #expect(cluster.stop("w1", SIGTERM) == 0)
    }
}
