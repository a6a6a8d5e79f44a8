import EventSubscription
import Foundation
import LyceumSupport
import ZeroMQ

/// What a progress subscription yields: applied events, snapshot loads, repaired gaps, heartbeats.
public typealias ProgressUpdate = ProgressSubscriber.Update

extension LyceumClient {
    /// Progress events of every course, or of `course`, as an `AsyncSequence` that mirrors the
    /// publisher's state: it loads a snapshot first, checks every event's and heartbeat's
    /// sequence number, and when some were missed (a slow reader, a lossy network) repairs the
    /// state from a fresh snapshot and yields ``ProgressUpdate/gapRepaired(source:expected:seen:sequence:)``.
    /// It is `lyceum watch`'s subscriber (Events' ``ProgressSubscriber``) on a thread of its own,
    /// with the client's ``LyceumClientConfiguration/curve`` keys on both of its sockets.
    ///
    /// The sequence pulls: the socket is read only while the consumer asks for the next element,
    /// so a consumer that falls behind makes the publisher drop events for it, which then shows
    /// as a gap and is repaired, rather than growing a buffer without bound.
    /// - Throws: ``LyceumError/Code/invalidConfiguration`` when the configuration has no ``LyceumClientConfiguration/events``.
    public func progressEvents(course: String? = nil) throws(LyceumError) -> ProgressEvents {
        guard let endpoints = configuration.events else {
            throw LyceumError(code: .invalidConfiguration, message: "the configuration names no event endpoints", service: "events", op: "subscribe")
        }
        var options = ProgressSubscriber.Options(eventsEndpoint: endpoints.events, snapshotEndpoint: endpoints.snapshot, course: course)
        // A CURVE server's event sockets admit only keys with a role that may read events (`dashboard`, `admin`).
        options.security = configuration.curve?.security ?? .plaintext
        return ProgressEvents(options: options)
    }
}

/// An `AsyncSequence` of ``ProgressUpdate``s; each iterator is one subscription, with its own
/// sockets and thread, ended when the iterator is released or its task cancelled.
public struct ProgressEvents: AsyncSequence, Sendable {
    /// One update.
    public typealias Element = ProgressUpdate
    /// Where it subscribes.
    public let options: ProgressSubscriber.Options

    /// Subscribes.
    public func makeAsyncIterator() -> Iterator { Iterator(feed: SubscriptionFeed(options: options)) }

    /// Hands out the updates of one subscription in order, and the state they add up to.
    public struct Iterator: AsyncIteratorProtocol {
        let feed: SubscriptionFeed
        private var buffered: [ProgressUpdate] = []
        private var position = 0
        /// Every learner's progress in every course (or the watched one) as mirrored so far, by
        /// event topic: loaded from snapshots, repaired after gaps, and updated by events. It
        /// is as of the last batch the subscriber read, which may be a few updates ahead of
        /// the last one ``next()`` returned.
        public private(set) var entries: [String: ProgressSubscriber.Entry] = [:]

        init(feed: SubscriptionFeed) { self.feed = feed }

        /// The next update; `nil` once the task is cancelled.
        /// - Throws: ``LyceumError`` when the subscriber's sockets fail.
        public mutating func next() async throws -> ProgressUpdate? {
            while position == buffered.count {
                guard !Task.isCancelled, let batch = try await feed.nextBatch() else { return nil }
                buffered = batch.updates
                entries = batch.entries
                position = 0
            }
            defer { position += 1 }
            return buffered[position]
        }
    }
}

/// One subscription: its thread, which owns the subscriber and reads only while a batch is
/// asked for, and the hand-over of batches. Released, it ends the thread.
final class SubscriptionFeed: Sendable {
    private let channel = FeedChannel()

    init(options: ProgressSubscriber.Options) {
        let thread = Thread { [channel] in channel.run(options) }
        thread.name = "lyceum-events"
        thread.start()
    }

    deinit { channel.end() }

    /// Waits for the next non-empty batch; `nil` once ended or cancelled.
    func nextBatch() async throws(LyceumError) -> FeedBatch? {
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { channel.ask($0) }
        } onCancel: {
            channel.end()
        }
        return try result.get()
    }
}

/// Updates read together, and the mirrored state after them.
struct FeedBatch: Sendable {
    let updates: [ProgressUpdate]
    let entries: [String: ProgressSubscriber.Entry]
}

/// What the consumer and the subscription's thread share. A request for a batch stays in
/// ``State/waiting`` until exactly one side takes it out and answers it: the thread with a
/// batch, or ``end()`` with `nil`.
final class FeedChannel: Sendable {
    typealias Answer = CheckedContinuation<Result<FeedBatch?, LyceumError>, Never>

    private struct State {
        var waiting: Answer?
        var ended = false
        /// Why the thread stopped, for a request that comes after.
        var failure: LyceumError?
    }

    /// The thread sleeps on it until a batch is asked for or the subscription ends.
    private let state = Monitor(State())
    /// How long one wait on the socket lasts before the thread looks at ``end()`` again.
    private static let pollInterval = Duration.milliseconds(100)

    /// Asks the thread for the next batch.
    func ask(_ answer: Answer) {
        let finished: Result<FeedBatch?, LyceumError>? = state.update { state in
            if let failure = state.failure { return .failure(failure) }
            if state.ended { return .success(nil) }
            state.waiting = answer
            return nil
        }
        if let finished { answer.resume(returning: finished) }
    }

    /// Ends the subscription: a waiting consumer gets `nil`; the thread stops at its next look.
    func end() {
        let waiting = state.update { state in
            state.ended = true
            defer { state.waiting = nil }
            return state.waiting
        }
        waiting?.resume(returning: .success(nil))
    }

    private var isEnded: Bool { state.withLock { $0.ended } }

    private func answer(_ result: Result<FeedBatch?, LyceumError>) {
        state.withLock { state in
            defer { state.waiting = nil }
            return state.waiting
        }?.resume(returning: result)
    }

    /// The thread: subscribes, loads the snapshot, then reads one batch per request until ended.
    func run(_ options: ProgressSubscriber.Options) {
        let subscriber: ProgressSubscriber
        do {
            subscriber = try ProgressSubscriber(context: try Context(), options: options)
        } catch {
            return fail(error)
        }
        var pending: [ProgressUpdate]
        do {
            pending = try subscriber.synchronize()
        } catch {
            // Not fatal: the subscriber snapshots again when the source's first heartbeat arrives.
            pending = [.gapUnrepaired(source: options.snapshotEndpoint ?? "", reason: error.description)]
        }
        while true {
            state.wait(until: { $0.waiting != nil || $0.ended })
            if isEnded { return }
            var batch = pending
            pending = []
            do throws(EventsError) {
                while batch.isEmpty && !isEnded { batch = try subscriber.poll(timeout: Self.pollInterval) }
            } catch {
                return fail(error)
            }
            // A copy of the table, made when the subscriber next changes it: one per batch.
            answer(.success(FeedBatch(updates: batch, entries: subscriber.entries)))
        }
    }

    /// Ends the subscription with `error`, for the consumer to throw.
    private func fail(_ error: some Error) {
        let failure = LyceumError(code: .other("events"), message: "\(error)", service: "events", op: "subscribe")
        state.withLock { $0.failure = failure }
        answer(.failure(failure))
    }
}
