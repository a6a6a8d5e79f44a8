import Catalog
import EventSubscription
import Foundation
import EventPublishing
import LyceumTestSupport
import Testing
import ZeroMQ

/// A partitioned worker is one event source for all its partitions: its progress snapshot covers
/// the learners of every partition it holds, not only those of the first.
@Suite struct PartitionEventsTests {
    @Test func theSnapshotOfARestartedWorkerCoversEveryPartitionItHolds() throws {
        let cluster = try Deployment.partitioned(owned: "0-3")
        try cluster.startWorker(registering: Deployment.servicesOfPartitions0to3)
        let course = try #require(try Catalog.sample().courses.first { !$0.lessons.isEmpty })
        for partition in [0, 2, 3] {
            let begun = try cluster.call(
                "progress.p\(partition)", #"{"op":"begin_course","learner":"\#(Deployment.learner(in: partition))","course":"\#(course.id)"}"#)
            #expect(begun.isOK, "\(begun)")
        }
        // Restarted, its snapshot table is seeded from the replayed journals of all partitions.
        cluster.killWorker(SIGTERM)
        try cluster.startWorker(registering: Deployment.servicesOfPartitions0to3)

        let context = try Context()
        let subscriber = try ProgressSubscriber(context: context, options: .init(eventsEndpoint: cluster.eventsEndpoint, snapshotEndpoint: nil))
        var loaded: Int?
        // The first heartbeat through the forwarder names the worker's snapshot endpoint; the
        // subscriber then loads its snapshot.
        _ = try eventually {
            for update in try subscriber.poll(timeout: .milliseconds(100)) {
                if case .synchronized(_, _, let entries) = update { loaded = entries }
            }
            return loaded != nil
        }
        #expect(loaded == 3)
    }
}
