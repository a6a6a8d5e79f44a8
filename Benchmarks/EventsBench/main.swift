// events-bench: what publishing progress events costs and how fast they arrive (issue 6).
//
//   1. events/s published while 100 subscribers are connected (and whether any had to drop);
//   2. latency from a write's reply to the event's arrival at a subscriber, at 10,000 events/s,
//      with 1 and with 100 subscribers connected;
//   3. the cost publishing adds to a progress write: the same writes with and without publish,
//      alternating rounds in this run, as a ratio; against an in-memory log (the cheapest write,
//      so the harshest ratio) and against the journal `lyceum serve` writes, with durability
//      `none` (its CPU alone) and `always` (the default, one writer, so one sync per write).
//
// Run with `make bench-events` (release build). Progress is printed to stderr.
import Catalog
import Dispatch
import EventSubscription
import EventPublishing
import Foundation
import Journal
import LearningServices
import LearningServicesTestSupport
import LyceumLifecycle
import LyceumServer
import LyceumSupport
import Progress
import ZeroMQ

func note(_ text: String) { FileHandle.standardError.write(Data((text + "\n").utf8)) }
func nanoseconds() -> UInt64 { DispatchTime.now().uptimeNanoseconds }

let catalog = try Catalog.sample()
let course = catalog.courses.first { $0.lessons.count >= 2 }!
let context = try Context(ioThreads: 1)
/// The subscribers' own context, as they would have in their own processes: their I/O thread is
/// not the publisher's.
let subscriberContext = try Context(ioThreads: 1)

/// Requests that each change something: every learner watches, then unwatches, a lesson.
func toggles(_ count: Int, learners: Int = 1000) -> [[UInt8]] {
    (0..<count).map { index in
        let learner = "bench-\(index % learners)"
        let op = (index / learners) % 2 == 0 ? "mark_watched" : "mark_unwatched"
        return Array(#"{"op":"\#(op)","learner":"\#(learner)","course":"\#(course.id)","lesson":"\#(course.lessons[0].id)"}"#.utf8)
    }
}

func startPublisher(highWaterMark: Int32 = 100_000, xapi: XAPIOptions? = XAPIOptions()) throws -> (EventPublisher, ComponentThread, EventPublisher.BoundEndpoints) {
    let publisher = try EventPublisher(
        configuration: EventPublisherConfiguration(
            publishEndpoints: ["tcp://127.0.0.1:*"], snapshotEndpoints: ["tcp://127.0.0.1:*"], sendHighWaterMark: highWaterMark,
            heartbeatInterval: .milliseconds(100), xapi: xapi),
        context: context, streams: [EventStream.progress])
    let thread = ComponentThread(publisher, name: "publisher")
    return (publisher, thread, try publisher.waitUntilBound())
}

/// Subscribers on `threads` threads, each counting the progress events of its sockets and, when
/// asked, recording when each event reached each subscriber.
final class SubscriberPool: @unchecked Sendable {
    private let lock = NSLock()
    private var ready = 0
    private var received = 0
    private var stop = false
    private let done = DispatchGroup()
    /// `arrivals[subscriber * capacity + sequence - 1]`: when that subscriber received that event.
    let arrivals: UnsafeMutablePointer<UInt64>
    let capacity: Int
    let count: Int

    init(count: Int, threads: Int, endpoint: String, recordArrivals capacity: Int = 0) {
        self.capacity = capacity
        self.count = count
        arrivals = .allocate(capacity: max(capacity * count, 1))
        arrivals.initialize(repeating: 0, count: max(capacity * count, 1))
        for threadIndex in 0..<threads {
            done.enter()
            let mine = (0..<count).filter { $0 % threads == threadIndex }
            Thread { [self] in
                defer { done.leave() }
                do {
                    var sockets: [Socket] = []
                    var poller = Poller()
                    for _ in mine {
                        let socket = try subscriberContext.socket(.subscriber)
                        try socket.set(.receiveHighWaterMark, to: 100_000)
                        try socket.set(.subscribe, to: Array(EventTopic.progress.utf8))
                        try socket.set(.subscribe, to: Array(EventTopic.heartbeat.utf8))
                        try socket.connect(endpoint)
                        try poller.add(socket)
                        sockets.append(socket)
                    }
                    var heard = Set<Int>()
                    let message = Message()
                    while !lock.withLock({ stop }) {
                        guard try poller.poll(timeout: .milliseconds(50)) > 0 else { continue }
                        for (index, socket) in sockets.enumerated() where poller.events(at: index).contains(.readable) {
                            while try socket.receive(into: message, options: .dontWait) {
                                let isHeartbeat = message.count == EventTopic.heartbeat.utf8.count
                                _ = try socket.receive(into: message)
                                if isHeartbeat {
                                    if heard.insert(index).inserted { lock.withLock { ready += 1 } }
                                    continue
                                }
                                if capacity > 0 {
                                    let now = nanoseconds()
                                    let sequence = message.withUnsafeBytes { Self.sequence(in: $0) }
                                    if sequence > 0 && sequence <= capacity { arrivals[mine[index] * capacity + sequence - 1] = now }
                                }
                                lock.withLock { received += 1 }
                            }
                        }
                    }
                } catch {
                    note("subscriber thread failed: \(error)")
                }
            }.start()
        }
    }

    /// `{"seq":N,...`: the body starts with the sequence number.
    static func sequence(in body: UnsafeRawBufferPointer) -> Int {
        var value = 0
        var index = 7
        while index < body.count, body[index] >= 48 && body[index] <= 57 {
            value = value * 10 + Int(body[index] - 48)
            index += 1
        }
        return value
    }

    var readyCount: Int { lock.withLock { ready } }
    var receivedCount: Int { lock.withLock { received } }

    /// When `subscriber` received event `sequence`; 0 if it did not.
    func arrival(subscriber: Int, sequence: Int) -> UInt64 { arrivals[subscriber * capacity + sequence - 1] }

    func shutdown() {
        lock.withLock { stop = true }
        done.wait()
        arrivals.deallocate()
    }
}

func waitUntil(_ limit: Duration, _ condition: () -> Bool) -> Bool {
    let deadline = ContinuousClock.now + limit
    while ContinuousClock.now < deadline {
        if condition() { return true }
        Thread.sleep(forTimeInterval: 0.01)
    }
    return condition()
}

// MARK: 1. Throughput with 100 subscribers

do {
    let subscribers = 100
    let events = 20_000
    note("1/3 throughput: \(events) events to \(subscribers) subscribers")
    let service = ProgressService(catalog: CatalogStore(catalog), log: InMemoryChangeLog())
    let (publisher, thread, endpoints) = try startPublisher()
    let pool = SubscriberPool(count: subscribers, threads: 4, endpoint: endpoints.publish[0])
    guard waitUntil(.seconds(20), { pool.readyCount == subscribers }) else { fatalError("subscribers never heard a heartbeat") }
    let produced = toggles(events).compactMap { frame -> (ProgressEvent, UInt64)? in
        let handled = service.handleWithCommit(frame)
        return handled.event.map { ($0, handled.commit!.sequence) }
    }
    let start = nanoseconds()
    for (event, revision) in produced { publisher.publish(event, on: .progress, revision: revision) }
    let publishDone = nanoseconds()
    let expected = produced.count * subscribers
    let delivered = waitUntil(.seconds(120)) { pool.receivedCount >= expected }
    let end = nanoseconds()
    let callRate = Double(produced.count) / (Double(publishDone - start) / 1e9)
    let deliveredRate = Double(produced.count) / (Double(end - start) / 1e9)
    print("throughput, \(subscribers) subscribers: publish() calls \(Int(callRate)) events/s; all delivered to every subscriber at \(Int(deliveredRate)) events/s (\(Int(deliveredRate) * subscribers) messages/s); delivered \(pool.receivedCount)/\(expected)\(delivered ? "" : " (gaps: PUB dropped for slow subscribers)"); publisher queue drops \(publisher.counters.dropped)")
    pool.shutdown()
    thread.stop()
}

// MARK: 2. Latency at 10,000 events/s

/// Sleeps until `deadline` (uptime nanoseconds). The writer sleeps between writes as a worker
/// waiting for its next request does: spinning would take one of the machine's two cores from
/// the publisher and the subscribers being measured.
func sleep(until deadline: UInt64) {
    let now = nanoseconds()
    guard deadline > now else { return }
    var time = timespec(tv_sec: Int((deadline - now) / 1_000_000_000), tv_nsec: Int((deadline - now) % 1_000_000_000))
    nanosleep(&time, nil)
}

func percentile(_ sorted: [UInt64], _ p: Double) -> Double {
    Double(sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))]) / 1000
}

// 10,000 events/s to 100 subscribers is a million messages a second, more than this machine
// delivers (part 1); 1,000 events/s shows the latency 100 subscribers see within its means.
for (subscribers, rate) in [(1, 10_000), (100, 10_000), (100, 1_000)] {
    let events = rate * 3
    note("2/3 latency: \(events) writes at \(rate)/s, reply to arrival at each of \(subscribers) subscribers")
    let service = ProgressService(catalog: CatalogStore(catalog), log: InMemoryChangeLog())
    let (publisher, thread, endpoints) = try startPublisher()
    let pool = SubscriberPool(count: subscribers, threads: min(subscribers, 4), endpoint: endpoints.publish[0], recordArrivals: events)
    guard waitUntil(.seconds(20), { pool.readyCount == subscribers }) else { fatalError("subscribers never heard a heartbeat") }
    let frames = toggles(events)
    var replied = [UInt64](repeating: 0, count: events)
    let interval = UInt64(1_000_000_000 / rate)
    let start = nanoseconds()
    for (index, frame) in frames.enumerated() {
        sleep(until: start + UInt64(index) * interval)
        let handled = service.handleWithCommit(frame)
        replied[index] = nanoseconds()
        publisher.publish(handled.event!, on: .progress, revision: handled.commit!.sequence)
    }
    let achieved = Double(events) / (Double(nanoseconds() - start) / 1e9)
    _ = waitUntil(.seconds(20)) { pool.receivedCount >= events * subscribers }
    // The first second warms caches and connections; it is left out.
    var deliveries: [UInt64] = []
    var lastDeliveries: [UInt64] = []
    var missing = 0
    for index in rate..<events {
        var last: UInt64 = 0
        for subscriber in 0..<subscribers {
            let arrival = pool.arrival(subscriber: subscriber, sequence: index + 1)
            guard arrival > replied[index] else {
                missing += 1
                continue
            }
            deliveries.append(arrival - replied[index])
            last = max(last, arrival - replied[index])
        }
        if last > 0 { lastDeliveries.append(last) }
    }
    deliveries.sort()
    lastDeliveries.sort()
    print(String(format: "latency at %d events/s (achieved %.0f), %d subscriber%@, reply to arrival over %d deliveries: p50 %.1f µs, p99 %.1f µs, p99.9 %.1f µs, max %.1f µs; until the last subscriber has it: p50 %.1f µs, p99 %.1f µs; missing %d",
                 rate, achieved, subscribers, subscribers == 1 ? "" : "s", deliveries.count, percentile(deliveries, 0.5), percentile(deliveries, 0.99),
                 percentile(deliveries, 0.999), percentile(deliveries, 1), percentile(lastDeliveries, 0.5), percentile(lastDeliveries, 0.99), missing))
    pool.shutdown()
    thread.stop()
}

// MARK: 3. Cost added to a progress write

/// Where the measured writes go: a fresh change log per round, and a word for the output.
struct WriteLog {
    let name: String
    let writes: Int
    let rounds: Int
    let make: () throws -> any ChangeLog
}

let journalRoot = FileManager.default.temporaryDirectory.appendingPathComponent("events-bench-\(getpid())").path
defer {
    do { try FileManager.default.removeItem(atPath: journalRoot) } catch { note("could not remove \(journalRoot): \(error)") }
}
func journalLog(_ durability: DurabilityPolicy) throws -> any ChangeLog {
    var state = ProgressState()
    let directory = "\(journalRoot)/\(UUID().uuidString)"
    let journal = try Journal.open(directory: directory, options: JournalOptions(durability: durability), state: &state)
    return JournalChangeLog(journal: journal)
}
let writeLogs = [
    WriteLog(name: "in-memory log, so the write itself is cheapest", writes: 40_000, rounds: 5) { InMemoryChangeLog() },
    WriteLog(name: "journal, durability none: the write path's CPU", writes: 40_000, rounds: 5) { try journalLog(.none) },
    WriteLog(name: "journal, durability always: serve's default, one writer", writes: 1_000, rounds: 3) { try journalLog(.always) },
]

// Every log with and without xAPI statements, except the slow `always` runs, with them only.
let writeCases = writeLogs.flatMap { log in (log.writes > 1_000 ? [XAPIOptions(), nil] : [XAPIOptions()]).map { (log, $0) } }
for (log, xapi) in writeCases {
    let writes = log.writes
    let rounds = log.rounds
    let label = (xapi == nil ? "without xAPI statements" : "with xAPI statements") + ", " + log.name
    note("3/3 write cost (\(label)): \(rounds) rounds of \(writes) writes with and without publish")
    let (publisher, thread, endpoints) = try startPublisher(xapi: xapi)
    let pool = SubscriberPool(count: 1, threads: 1, endpoint: endpoints.publish[0])
    guard waitUntil(.seconds(10), { pool.readyCount == 1 }) else { fatalError("the subscriber never heard a heartbeat") }
    var without: [Double] = []
    var with: [Double] = []
    var inside: [Double] = []
    // Per call, for medians that a preempted call on this shared machine does not move.
    var writeCalls: [UInt64] = []
    var publishCalls: [UInt64] = []
    for round in 0..<rounds {
        for publishing in [false, true] {
            let service = ProgressService(catalog: CatalogStore(catalog), log: try log.make())
            let frames = toggles(writes)
            var publishNanoseconds: UInt64 = 0
            let start = nanoseconds()
            for frame in frames {
                let beforeWrite = nanoseconds()
                let handled = service.handleWithCommit(frame)
                if !publishing { writeCalls.append(nanoseconds() - beforeWrite) }
                if publishing, let event = handled.event {
                    let before = nanoseconds()
                    publisher.publish(event, on: .progress, revision: handled.commit!.sequence)
                    let spent = nanoseconds() - before
                    publishNanoseconds += spent
                    publishCalls.append(spent)
                }
            }
            let perWrite = Double(nanoseconds() - start) / Double(writes) / 1000
            if publishing {
                with.append(perWrite)
                inside.append(Double(publishNanoseconds) / Double(writes) / 1000)
            } else {
                without.append(perWrite)
            }
            note("  round \(round + 1): \(publishing ? "with publish" : "without   ") \(String(format: "%.2f", perWrite)) µs/write")
        }
    }
    let medianWithout = without.sorted()[rounds / 2]
    let medianWith = with.sorted()[rounds / 2]
    print(String(format: "write cost %@: without publish %.2f µs, with publish %.2f µs (%.2f µs inside publish()); publishing adds %.1f%% (median of %d rounds)",
                 label, medianWithout, medianWith, inside.sorted()[rounds / 2], (medianWith / medianWithout - 1) * 100, rounds))
    let writeCall = Double(writeCalls.sorted()[writeCalls.count / 2]) / 1000
    let publishCall = Double(publishCalls.sorted()[publishCalls.count / 2]) / 1000
    print(String(format: "  per call %@ (medians over %d calls): a write %.2f µs, publish() %.2f µs on the caller's thread = %.1f%% of a write",
                 label, publishCalls.count, writeCall, publishCall, publishCall / writeCall * 100))
    pool.shutdown()
    thread.stop()
}
