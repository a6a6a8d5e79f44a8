import Catalog
import JSON
import Journal
import LearningServices
import Synchronization
import Foundation
import Testing

/// A log that accepts appends but whose records never become durable, as after an fsync error.
final class FailingDurabilityLog: ChangeLog {
    struct DiskFailure: Error, CustomStringConvertible {
        var description: String { "fsync failed (simulated)" }
    }

    let appended = Mutex(0)

    func append(_ changes: [JournalChange]) throws -> CommitTicket {
        appended.withLock { $0 += 1 }
        return CommitTicket(sequence: 1)
    }

    func whenDurable(_ ticket: CommitTicket, _ body: @escaping @Sendable (Result<Void, any Error>) -> Void) {
        body(.failure(DiskFailure()))
    }
}

/// A log whose records become durable only when the test says so: `whenDurable` callbacks wait
/// until `release()`, which runs them on its caller's thread, as a journal's acknowledger would.
final class GatedLog: ChangeLog {
    private struct Gate {
        var appended: UInt64 = 0
        var released = false
        var waiting: [@Sendable (Result<Void, any Error>) -> Void] = []
    }

    private let gate = Mutex(Gate())

    func append(_ changes: [JournalChange]) throws -> CommitTicket {
        gate.withLock { gate in
            gate.appended += 1
            return CommitTicket(sequence: gate.appended)
        }
    }

    func whenDurable(_ ticket: CommitTicket, _ body: @escaping @Sendable (Result<Void, any Error>) -> Void) {
        let durable = gate.withLock { gate in
            if !gate.released { gate.waiting.append(body) }
            return gate.released
        }
        if durable { body(.success(())) }
    }

    /// Callbacks waiting for durability.
    var waitingCount: Int { gate.withLock { $0.waiting.count } }

    /// Makes every record durable from now on and runs the waiting callbacks, in registration order.
    func release() {
        let waiting = gate.withLock { gate in
            gate.released = true
            defer { gate.waiting = [] }
            return gate.waiting
        }
        for body in waiting { body(.success(())) }
    }
}

/// A call run on its own thread rather than the cooperative pool, which blocking calls starve.
private final class BlockingCall: Sendable {
    private let reply = Mutex<[UInt8]?>(nil)

    init(_ body: @escaping @Sendable () -> [UInt8]) {
        Thread { [self] in
            let bytes = body()
            reply.withLock { $0 = bytes }
        }.start()
    }

    /// The reply, or `nil` while the call is still running.
    var result: [UInt8]? { reply.withLock { $0 } }

    /// Waits for the reply.
    func wait() -> [UInt8] {
        while true {
            if let bytes = result { return bytes }
            Thread.sleep(forTimeInterval: 0.001)
        }
    }
}

@Suite struct WritePathTests {
    @Test func aFailedDurabilityWaitIsReportedAsUnavailable() throws {
        let log = FailingDurabilityLog()
        let service = BooksService(log: log, environment: deterministicEnvironment())
        let reply = try service.call(#"{"op":"create","learner":"ada","title":"Dune","author":"Frank Herbert","genre":"Fantasy","rating":5}"#)
        #expect(errorCode(reply) == "unavailable")
        #expect(log.appended.withLock { $0 } == 1)
    }

    @Test func readsProceedWhileAWriteWaitsForDurability() throws {
        let log = GatedLog()
        let service = BooksService(log: log, environment: deterministicEnvironment())
        let writer = BlockingCall {
            service.handle(Array(#"{"op":"create","learner":"ada","title":"Dune","author":"Frank Herbert","genre":"Fantasy","rating":5}"#.utf8))
        }
        // The write is applied in memory before its durability wait, and the lock is free.
        var listed: JSONValue = .null
        for _ in 0..<2_000 {
            listed = try service.call(#"{"op":"list","learner":"ada"}"#)
            if result(listed)?["books"]?.arrayCount == 1 { break }
            Thread.sleep(forTimeInterval: 0.001)
        }
        #expect(result(listed)?["books"]?.arrayCount == 1)
        #expect(writer.result == nil)
        log.release()
        #expect(try JSONParser().parse(writer.wait())["ok"] == true)
    }

    @Test func aRetryIsNotAcknowledgedBeforeTheOriginalIsDurable() throws {
        let log = GatedLog()
        let service = BooksService(log: log, environment: deterministicEnvironment())
        let request = Array(#"{"op":"create","learner":"ada","request_id":"r1","title":"Dune","author":"F","genre":"Fantasy","rating":5}"#.utf8)
        let original = BlockingCall { service.handle(request) }
        while service.currentState.library.count == 0 { Thread.sleep(forTimeInterval: 0.001) }
        let retry = BlockingCall { service.handle(request) }
        Thread.sleep(forTimeInterval: 0.05)
        #expect(retry.result == nil)
        log.release()
        #expect(retry.wait() == original.wait())
    }

    @Test func concurrentReadersSeeEitherTheOldOrTheNewCatalog() async throws {
        let store = CatalogStore(Catalog())
        let service = CatalogService(store: store)
        let samplePath = try #require(Catalog.samplePath)
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                for _ in 0..<20 {
                    do {
                        try store.reload(from: [samplePath])
                    } catch {
                        Issue.record("reload failed: \(error)")
                    }
                }
            }
            for _ in 0..<2 {
                group.addTask {
                    for _ in 0..<200 {
                        let reply = service.handle(Array(#"{"op":"list_categories"}"#.utf8))
                        let text = String(decoding: reply, as: UTF8.self)
                        #expect(text == #"{"ok":true,"result":{"categories":[]}}"# || text.contains(#""name":"Algebra""#))
                    }
                }
            }
        }
    }
}

@Suite struct LiveEnvironmentTests {
    @Test func makesDistinctVersion4UUIDs() throws {
        let ids = (0..<1_000).map { _ in ServiceEnvironment.live.makeID() }
        #expect(Set(ids).count == ids.count)
        let pattern = try Regex("^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$")
        for id in ids { #expect(try pattern.wholeMatch(in: id) != nil, "\(id)") }
    }
}
