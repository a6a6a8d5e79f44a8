import Catalog
import Foundation
import LyceumTestSupport
import Testing

/// The command-line tools with two brokers: a worker registered with both, publishing into both
/// forwarders; `call` and `status` fail over past a killed broker, and `watch` keeps receiving
/// events through the other one.
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
            let served = try waitUntil(timeout: .seconds(30)) {
                try LyceumProcess.run(["call", "--broker", broker, "--timeout", "500", "progress", stats]).status == 0
            }
            try #require(served, "progress not served through \(broker); worker:\n\(worker.standardError)")
        }
        let watch = try LyceumProcess(["watch", "--json", "--connect", secondEvents, "--no-snapshot", "--no-titles", "--limit", "1"])
        defer { watch.stop() }

        firstBroker.stop()
        let both = ["--broker", first, "--broker", second, "--timeout", "2000"]
        let status = try LyceumProcess.run(["status"] + both)
        #expect(status.status == 0, "\(status.stderr)")
        #expect(status.stdout.contains("\"progress\""), "\(status.stdout)")
        // The watcher may still be subscribing: write until it has printed one event.
        var seconds = 0
        let printed = try waitUntil(timeout: .seconds(20)) { () throws -> Bool in
            seconds += 1
            let write = #"{"op":"save_position","learner":"lin","course":"\#(course.id)","lesson":"\#(course.lessons[0].id)","position_seconds":\#(seconds)}"#
            let call = try LyceumProcess.run(["call"] + both + ["progress", write])
            #expect(call.status == 0, "\(call.stderr)")
            return !watch.isRunning
        }
        try #require(printed, "watch printed nothing through the second broker; stderr:\n\(watch.standardError)")
        #expect(watch.waitForExit(timeout: .seconds(5)) == 0)
        #expect(watch.standardOutput.contains("position_saved"), "\(watch.standardOutput)")
        #expect(worker.signal(SIGTERM) == 0)
    }
}
