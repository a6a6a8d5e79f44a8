import EventSubscription
import EventPublishing
import Foundation
import LyceumTestSupport
import Testing
import ZeroMQ

/// A worker's snapshot endpoint on a chosen address: advertised as given, and refused when it
/// could not be advertised or would expose progress in plaintext.
@Suite struct WorkerSnapshotEndpointTests {
    @Test(arguments: [
        ("tcp://0.0.0.0:*", "cannot be advertised"),
        ("tcp://*:5557", "cannot be advertised"),
        ("tcp://10.1.2.3:*", "refusing to bind tcp://10.1.2.3:* without CURVE"),
        ("ipc:///tmp/lyceum-snapshots", "must be tcp://ADDRESS:PORT"),
    ])
    func aSnapshotEndpointOthersCannotUseSafelyIsRefused(endpoint: String, reason: String) throws {
        let data = try TemporaryDirectory()
        defer { data.remove() }
        let result = try LyceumProcess.run([
            "worker", "--broker", try freeLoopbackEndpoint(), "--service", "progress", "--data", data.path, "--snapshot-endpoint", endpoint,
        ])
        #expect(result.status == 2)
        #expect(result.stderr.contains("snapshot-endpoint") && result.stderr.contains(reason), "\(result.stderr)")
    }

    @Test func theChosenSnapshotEndpointIsTheOneHeartbeatsAdvertise() throws {
        let data = try TemporaryDirectory()
        defer { data.remove() }
        let (endpoint, events, forwarder, snapshots) = (try freeLoopbackEndpoint(), try freeLoopbackEndpoint(), try freeLoopbackEndpoint(), try freeLoopbackEndpoint())
        let broker = try LyceumProcess(["broker", "--endpoint", endpoint, "--events-endpoint", events, "--forwarder-endpoint", forwarder])
        defer { broker.stop() }
        let worker = try LyceumProcess([
            "worker", "--broker", endpoint, "--service", "progress", "--sessions", "1", "--data", data.path,
            "--forwarder-endpoint", forwarder, "--snapshot-endpoint", snapshots,
        ])
        defer { worker.stop() }
        let subscriber = try ProgressSubscriber(context: try Context(), options: .init(eventsEndpoint: events))
        var advertised: String??
        _ = try eventually {
            for case .heartbeat(let heartbeat) in try subscriber.poll(timeout: .milliseconds(100)) { advertised = heartbeat.snapshotEndpoint }
            return advertised != nil
        }
        #expect(advertised == .some(snapshots), "worker:\n\(worker.standardError)")
        #expect(worker.signal(SIGTERM) == 0)
    }
}
