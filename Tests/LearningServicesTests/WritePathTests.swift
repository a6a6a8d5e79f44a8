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

@Suite struct WritePathTests {
    @Test func aFailedDurabilityWaitIsReportedAsUnavailable() throws {
        let log = FailingDurabilityLog()
        let service = BooksService(log: log, environment: deterministicEnvironment())
        let reply = try service.call(#"{"op":"create","learner":"ada","title":"Dune","author":"Frank Herbert","genre":"Fantasy","rating":5}"#)
        #expect(errorCode(reply) == "unavailable")
        #expect(log.appended.withLock { $0 } == 1)
    }

    @Test func readsProceedWhileAWriteWaitsForDurability() async throws {
        let log = GatedLog()
        let service = BooksService(log: log, environment: deterministicEnvironment())
        let writer = Task.detached {
            service.handle(Array(#"{"op":"create","learner":"ada","title":"Dune","author":"Frank Herbert","genre":"Fantasy","rating":5}"#.utf8))
        }
        // The write is applied in memory before its durability wait, and the lock is free.
        var listed: JSONValue = .null
        for _ in 0..<2_000 {
            listed = try service.call(#"{"op":"list","learner":"ada"}"#)
            if result(listed)?["books"]?.arrayCount == 1 { break }
            try await Task.sleep(for: .milliseconds(1))
        }
        #expect(result(listed)?["books"]?.arrayCount == 1)
        log.released.withLock { $0 = true }
        let reply = try JSONParser().parse(await writer.value)
        #expect(reply["ok"] == true)
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
