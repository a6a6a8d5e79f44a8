import Foundation
import LyceumClient
import LyceumTestSupport
import Synchronization
import Testing
import ZeroMQ

/// The progress event sequence against a real serve, through a relay that loses one event.
@Suite(.serialized, .offTheCooperativePool)
struct EventsTests {
    @Test("a lost event shows as a gap and is repaired from a snapshot")
    func gapRepairedFromSnapshot() async throws {
        try await withDataDirectory { data in
            let serve = try Deployment.serve(data: data)
            let relay = try LossyRelay(from: serve.eventsEndpoint, dropping: 2)
            let lyceum = try LyceumClient(configuration: LyceumClientConfiguration(
                brokers: [serve.endpoint], events: .init(events: relay.endpoint, snapshot: serve.snapshotEndpoint)))
            defer { lyceum.close() }
            var updates = try lyceum.progressEvents(course: "1").makeAsyncIterator()
            // A heartbeat through the relay proves both subscriptions are in place.
            while let update = try await updates.next() {
                if case .heartbeat = update { break }
            }
            for lesson in ["1", "2", "3"] {
                _ = try await lyceum.progress.markWatched(learner: "gap", course: "1", lesson: lesson)
            }
            var events: [String] = []
            var repair: (expected: UInt64, seen: UInt64)?
            while repair == nil, let update = try await updates.next() {
                switch update {
                case .event(let event): events.append(event.lesson ?? "-")
                case .gapRepaired(_, let expected, let seen, _): repair = (expected, seen)
                default: break
                }
            }
            #expect(events == ["1"])
            // Event 3 reveals the gap (seen 3), or a heartbeat published between events 2 and 3
            // does first (it carries the last number, 2), which a loaded machine makes likely.
            #expect(repair?.expected == 2 && (2...3).contains(repair?.seen ?? 0))
            let mirrored = try #require(updates.entries.values.first { $0.learner == "gap" })
            #expect(mirrored.progress.watchedCount == 3)
            try relay.stop()
        }
    }

    @Test("the subscription ends when its task is cancelled", .timeLimit(.minutes(3)))
    func cancellationEndsTheSequence() async throws {
        try await withDataDirectory { data in
            let serve = try Deployment.serve(data: data)
            let lyceum = try serve.lyceumClient()
            defer { lyceum.close() }
            let events = try lyceum.progressEvents()
            let updates = AsyncStream<Void>.makeStream()
            let reader = Task {
                var count = 0
                for try await _ in events {
                    count += 1
                    updates.continuation.yield()
                }
                return count
            }
            // Cancelled once the snapshot's update has arrived (however long a loaded machine
            // takes), it returns instead of waiting for events forever.
            var arrivals = updates.stream.makeAsyncIterator()
            _ = await arrivals.next()
            reader.cancel()
            #expect(try await reader.value >= 1)
            #expect(throws: LyceumError.self) { try LyceumClient(configuration: .init(brokers: [serve.endpoint])).progressEvents() }
        }
    }
}

/// Forwards serve's events to its own PUB, except the `drop`-th progress event (1-based):
/// a lossy path that the subscriber can only notice by the sequence numbers.
final class LossyRelay: Sendable {
    let endpoint: String
    private let stopped = StopFlag()
    private let worker: ThreadResult<Void>

    init(from upstream: String, dropping drop: Int) throws {
        let endpoint = try freeLoopbackEndpoint()
        self.endpoint = endpoint
        let context = try Context()
        worker = ThreadResult("relay") { [stopped] in
            let input = try context.socket(.subscriber)
            try input.set(.subscribe, to: [UInt8]())
            try input.connect(upstream)
            let output = try context.socket(.publisher)
            try output.bind(endpoint)
            var progressEvents = 0
            var poller = Poller()
            try poller.add(input)
            while !stopped.value.load(ordering: .relaxed) {
                guard try poller.poll(timeout: .milliseconds(50)) > 0 else { continue }
                while let frames = try input.receiveMultipart(options: .dontWait) {
                    if frames.first?.starts(with: Array("progress/".utf8)) == true {
                        progressEvents += 1
                        if progressEvents == drop { continue }
                    }
                    try output.send(multipart: frames)
                }
            }
            input.close()
            output.close()
        }
    }

    func stop() throws {
        stopped.value.store(true, ordering: .relaxed)
        try worker.value()
    }
}

/// A flag the relay's thread reads and the test sets.
final class StopFlag: Sendable {
    let value = Atomic<Bool>(false)
}
