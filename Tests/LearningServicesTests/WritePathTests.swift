import Catalog
import JSON
import Journal
import LearningServices
import Synchronization
import Foundation
import Testing

/// A log that accepts appends but whose durability wait fails, as after an fsync error.
private final class FailingDurabilityLog: ChangeLog {
    struct DiskFailure: Error, CustomStringConvertible {
        var description: String { "fsync failed (simulated)" }
    }

    let appended = Mutex(0)

    func append(_ changes: [JournalChange]) throws -> CommitTicket {
        appended.withLock { $0 += 1 }
        return CommitTicket(sequence: 1)
    }

    func waitUntilDurable(_ ticket: CommitTicket) throws { throw DiskFailure() }
}

/// A log whose durability wait blocks until released, to show that reads are not held up by it.
private final class GatedLog: ChangeLog {
    let released = Mutex(false)

    func append(_ changes: [JournalChange]) throws -> CommitTicket { CommitTicket(sequence: 1) }

    func waitUntilDurable(_ ticket: CommitTicket) throws {
        while !released.withLock({ $0 }) { Thread.sleep(forTimeInterval: 0.001) }
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
        log.released.withLock { $0 = true }
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
        log.released.withLock { $0 = true }
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
