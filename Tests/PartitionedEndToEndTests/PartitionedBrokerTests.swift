import Catalog
import Foundation
import LearningServices
import LearningServicesTestSupport
import LyceumLifecycle
import LyceumServer
import LyceumTestSupport
import Majordomo
import Partitions
@testable import ServiceHosting
import Testing
import ZeroMQ

/// `lyceum broker --partitions 8` with in-test workers registering the partitions' services
/// (`books.p0`…, `progress.p0`…): routing by learner, and the coordinator's answers.
@Suite(.serialized) struct PartitionedBrokerTests {
    static let scheme = try! PartitionScheme(count: 8)

    /// The broker process, without events, with a short wait for absent partitions.
    final class PartitionedBroker {
        let endpoint: String
        let process: LyceumProcess
        let context: Context
        private var threads: [ComponentThread] = []

        init() throws {
            endpoint = try freeLoopbackEndpoint()
            process = try LyceumProcess([
                "broker", "--partitions", "8", "--endpoint", endpoint, "--events-endpoint", "none", "--unknown-service-timeout", "500",
            ])
            context = try Context()
        }

        /// Registers a pool for `service` answering with `handler`.
        func serve(_ service: String, handler: @escaping WorkerPool.Handler) throws {
            let pool = try WorkerPool(endpoint: endpoint, service: service, sessions: 2, context: context, handler: handler)
            threads.append(ComponentThread(pool, name: service))
        }

        /// A client that gives up after `timeout`, once.
        func client(timeout: Duration = .seconds(5)) -> Client {
            Client(endpoint: endpoint, configuration: ClientConfiguration(timeout: timeout, attempts: 1), context: context)
        }

        /// Waits until `service`'s every partition has a worker (mmi.service says 200 only then).
        func waitUntilServed(_ service: String) throws {
            try waitUntilServing([service], at: endpoint) { "stderr:\n\(process.standardError)" }
        }

        func stop() {
            for thread in threads { thread.stop() }
            process.stop()
        }
    }

    @Test func everyLearnerReachesThePartitionTheSchemeComputesAndTheReplyNamesBooks() throws {
        let broker = try PartitionedBroker()
        defer { broker.stop() }
        for partition in Self.scheme.all {
            try broker.serve("books.p\(partition)") { body, _, _ in [Array("p\(partition)".utf8)] + body }
        }
        try broker.waitUntilServed("books")
        let client = broker.client()
        defer { client.close() }
        var reached = Set<Int>()
        for index in 0..<200 {
            // Every fourth id is written with JSON escapes: the partition is the decoded text's.
            let (learner, spelled) = index % 4 == 0 ? ("élève \"\(index)\"", #"\u00e9l\u00e8ve \"\#(index)\""#) : ("learner-\(index)", "learner-\(index)")
            let body = Array(#"{"op":"list","learner":"\#(spelled)"}"#.utf8)
            // The client drops replies naming another service than `books`: an answer proves it.
            let reply = try client.call("books", body: [body])
            let expected = Self.scheme.partition(ofLearner: learner)
            #expect(reply == [Array("p\(expected)".utf8), body], "learner \(learner)")
            reached.insert(expected)
        }
        #expect(reached == Set(Self.scheme.all))
    }

    @Test func courseStatsMergedAcrossPartitionsEqualsOneUnpartitionedServiceAndOtherErrorsAreTheSame() throws {
        let broker = try PartitionedBroker()
        defer { broker.stop() }
        let store = CatalogStore(try Catalog.sample())
        for partition in Self.scheme.all {
            let service = ProgressService(catalog: store, log: InMemoryChangeLog())
            try broker.serve("progress.p\(partition)", handler: FrameHandler.handler { frame, caller, reply in
                service.handleWithCommit(frame, caller: caller) { reply($0.reply) }
            })
        }
        let whole = ProgressService(catalog: store, log: InMemoryChangeLog())
        try broker.waitUntilServed("progress")
        let client = broker.client()
        defer { client.close() }
        var partitions = Set<Int>()
        for index in 0..<40 {
            var writes = [#"{"op":"mark_watched","learner":"l\#(index)","course":"1","lesson":"1"}"#]
            if index % 3 == 0 { writes.append(#"{"op":"submit_quiz","learner":"l\#(index)","course":"1","answers":[2,\#(index % 2),\#(index % 3)]}"#) }
            if index % 5 == 0 { writes.append(#"{"op":"submit_quiz","learner":"l\#(index)","course":"1","answers":[0,0,0]}"#) }
            for write in writes {
                let reply = try client.call("progress", body: [Array(write.utf8)])
                #expect(try parse(reply[0]).isOK, "\(write): \(String(decoding: reply[0], as: UTF8.self))")
                _ = whole.handleWithEvent(Array(write.utf8))
            }
            partitions.insert(Self.scheme.partition(ofLearner: "l\(index)"))
        }
        #expect(partitions.count > 4)
        for request in [
            #"{"op":"course_stats","course":"1"}"#, #"{"op":"course_stats","course":"2"}"#, #"{"op":"course_stats","course":"nope"}"#,
            #"{"op":"course_stats"}"#, #"{"op":"course_stats","course":"1","request_id":"r1"}"#, #"{"op":"list"}"#,
            #"{"op":"get","learner":7,"course":"1"}"#, #"{"op":"fly"}"#, "not json",
        ] {
            let merged = try client.call("progress", body: [Array(request.utf8)])
            #expect(merged == [whole.handleWithEvent(Array(request.utf8)).reply],
                    "\(request): \(String(decoding: merged[0], as: UTF8.self))")
        }
        // A body of two frames reaches a partition whole, which refuses it as every worker does.
        let twoFrames = try client.call("progress", body: [Array(#"{"op":"course_stats","course":"1"}"#.utf8), []])
        #expect(try twoFrames.count == 1 && parse(twoFrames[0]).errorCode == "bad_request",
                "\(twoFrames.map { String(decoding: $0, as: UTF8.self) })")
        let stats = try parse(try client.call("progress", body: [Array(#"{"op":"course_stats","course":"1"}"#.utf8)])[0]).result
        #expect(stats["learners_started"] as? Int == 40 && stats["quiz_takers"] as? Int == 19)
    }

    /// The real partitioned worker holding all 8 partitions behind the routing broker, beside
    /// one `lyceum serve`, given the same writes: every course_stats reply is the same bytes.
    @Test func courseStatsOfARealPartitionedClusterEqualsServe() throws {
        let cluster = try Deployment.partitioned(owned: "0-7")
        try cluster.startWorker(registering: Self.scheme.all.flatMap { ["books.p\($0)", "progress.p\($0)"] })
        let data = try TemporaryDirectory()
        defer { data.remove() }
        let serve = try Deployment.serve(data: data.path)
        let context = try Context()
        let clusterClient = Client(endpoint: cluster.endpoint, configuration: ClientConfiguration(timeout: .seconds(5), attempts: 1), context: context)
        defer { clusterClient.close() }
        func both(_ request: String) throws -> (partitioned: [[UInt8]], serve: [[UInt8]]) {
            (try clusterClient.call("progress", body: [Array(request.utf8)]), try serve.call("progress", frames: [Array(request.utf8)]))
        }
        for index in 0..<24 {
            _ = try both(#"{"op":"mark_watched","learner":"r\#(index)","course":"1","lesson":"1"}"#)
            if index % 3 == 0 { _ = try both(#"{"op":"submit_quiz","learner":"r\#(index)","course":"1","answers":[2,\#(index % 2),1]}"#) }
        }
        for request in [#"{"op":"course_stats","course":"1"}"#, #"{"op":"course_stats","course":"nope"}"#, #"{"op":"list"}"#] {
            let replies = try both(request)
            #expect(replies.partitioned == replies.serve, "\(request): \(String(decoding: replies.partitioned[0], as: UTF8.self))")
        }
    }

    @Test func aPartitionWithoutAWorkerMakesCourseStatsUnavailableNamingIt() throws {
        let broker = try PartitionedBroker()
        defer { broker.stop() }
        for partition in Self.scheme.all.dropLast() {
            try broker.serve("progress.p\(partition)") { _, _, _ in
                [Array(#"{"ok":true,"result":{"course":"1","learners_started":1,"learners_completed":0,"quiz_takers":0,"best_fraction_sum":0}}"#.utf8)]
            }
        }
        let probe = broker.client(timeout: .milliseconds(500))
        defer { probe.close() }
        #expect(eventually { (try? probe.isRegistered("progress.p6")) == true })
        #expect((try? probe.isRegistered("progress")) == false)
        let client = broker.client(timeout: .hangLimit)
        defer { client.close() }
        let started = ContinuousClock.now
        let reply = try parse(try client.call("progress", body: [Array(#"{"op":"course_stats","course":"1"}"#.utf8)])[0])
        let error = try #require(reply["error"] as? [String: Any])
        #expect(error["code"] as? String == "unavailable")
        #expect(error["partitions"] as? [Int] == [7])
        #expect((error["message"] as? String)?.contains("no worker holds partition 7 of progress") == true, "\(error)")
        // The broker's wait for a partition with no worker (500 ms here) gave the reply: the
        // caller's timeout (a hang limit) would have thrown instead. The time is a figure.
        print("course_stats with partition 7 unserved answered in \(ContinuousClock.now - started)")
        // A learner of the missing partition gets the broker's rejection, naming it, under `progress`.
        let learner = (0...).lazy.map { "l\($0)" }.first { Self.scheme.partition(ofLearner: $0) == 7 }!
        #expect {
            try client.call("progress", body: [Array(#"{"op":"list","learner":"\#(learner)"}"#.utf8)])
        } throws: { error in
            let error = error as? MajordomoError
            return error?.code == .serviceUnknown && error?.service == "progress" && error?.detail == "no worker holds partition 7 of progress"
        }
    }
}
