import Foundation
import Journal
import LyceumTestSupport
import Synchronization
import Testing

/// A service's state as the journal expects it: appends and applies under one lock.
final class GuardedState: Sendable {
    let journal: Journal
    let state: Mutex<KeyedJournalState>

    init(directory: String, options: JournalOptions) throws {
        var state = KeyedJournalState()
        journal = try Journal.open(directory: directory, options: options, state: &state)
        self.state = Mutex(state)
    }

    /// Reads the counter under `key`, writes it back plus one, and waits for durability.
    func increment(_ key: String) throws {
        let pending = try state.withLock { state in
            let current = state.value(in: "counters", key: key).map { Int(String(decoding: $0.dropFirst(5).dropLast(), as: UTF8.self))! } ?? 0
            let change = JournalChange.put("counters", key: key, value: Array(#"{"n":\#(current + 1)}"#.utf8))
            let pending = try journal.append([change])
            state.apply(change)
            return pending
        }
        _ = try pending.waitUntilDurable()
    }

    func write(_ changes: [JournalChange]) throws {
        let pending = try state.withLock { state in
            let pending = try journal.append(changes)
            for change in changes { state.apply(change) }
            return pending
        }
        _ = try pending.waitUntilDurable()
    }

    func capture() -> (state: any JournalState, sequence: UInt64) {
        state.withLock { ($0, journal.lastSequence) }
    }
}

@Suite struct CompactionTests {
    @Test func incrementsDuringCompactionAllSurviveARestart() throws {
        try withTemporaryDirectory { directory in
            let service = try GuardedState(directory: directory, options: JournalOptions(durability: .always))
            for number in 0..<3000 {
                try service.write([.put("books", key: "b\(number)", value: bookValue(number))])
            }
            let writers = 4
            let increments = 300
            let failures = Mutex<[String]>([])
            let done = DispatchGroup()
            for writer in 0..<writers {
                done.enter()
                Thread {
                    defer { done.leave() }
                    for _ in 0..<increments {
                        do {
                            try service.increment("c\(writer)")
                            try service.increment("shared")
                        } catch {
                            failures.withLock { $0.append("\(error)") }
                        }
                    }
                }.start()
            }
            var compactions = 0
            while done.wait(timeout: .now()) == .timedOut {
                try service.journal.compact(capture: service.capture)
                compactions += 1
            }
            #expect(failures.withLock { $0 }.isEmpty)
            #expect(compactions >= 1)
            let expected = service.state.withLock { $0 }
            service.journal.close()

            let (recovered, lastSequence) = try reopen(directory)
            #expect(recovered == expected)
            #expect(lastSequence == UInt64(3000 + 2 * writers * increments))
            for writer in 0..<writers {
                #expect(recovered.value(in: "counters", key: "c\(writer)") == Array(#"{"n":\#(increments)}"#.utf8))
            }
            #expect(recovered.value(in: "counters", key: "shared") == Array(#"{"n":\#(writers * increments)}"#.utf8))
        }
    }

    @Test func compactionIsAutomaticOnceTheJournalOutgrowsTheLiveData() throws {
        try withTemporaryDirectory { directory in
            let options = JournalOptions(durability: .none, compactionRatio: 2, compactionMinimumBytes: 16 << 10)
            let service = try GuardedState(directory: directory, options: options)
            service.journal.enableAutomaticCompaction(capture: service.capture)
            var largest: UInt64 = 0
            for round in 0..<2000 {
                try service.write([.put("books", key: "b\(round % 10)", value: bookValue(round))])
                largest = max(largest, service.journal.size)
            }
            #expect(eventually { !service.journal.isCompactionDue })
            #expect(service.journal.size < 64 << 10, "2000 overwrites of 10 keys should have been compacted")
            let expected = service.state.withLock { $0 }
            service.journal.close()
            #expect(try reopen(directory).state == expected)
        }
    }

    @Test func aStaleCaptureIsRejected() throws {
        try withTemporaryDirectory { directory in
            let service = try GuardedState(directory: directory, options: JournalOptions(durability: .none))
            try service.write([.put("books", key: "b1", value: bookValue(1))])
            let error = journalError { try service.journal.compact { (KeyedJournalState(), 0) } }
            #expect(error?.code == .compactionRejected)
            service.journal.close()
            #expect(try reopen(directory).state.liveCounts == ["books": 1])
        }
    }
}

/// A state that makes its snapshot's changes only as they are walked, and records whether
/// anything asked for them all at once.
private final class GeneratedState: JournalState {
    let count: Int
    var askedForTheWholeSnapshot = false

    init(count: Int) { self.count = count }

    func apply(_ change: JournalChange) {}

    func snapshot() -> [JournalChange] {
        askedForTheWholeSnapshot = true
        return (0..<count).map(Self.change)
    }

    func forEachSnapshotChange(_ body: (JournalChange) throws -> Void) rethrows {
        for number in 0..<count { try body(Self.change(number)) }
    }

    static func change(_ number: Int) -> JournalChange {
        .put("books", key: "b\(number)", value: bookValue(number, title: String(repeating: "t", count: 1000)))
    }
}

@Suite struct StreamedSnapshotTests {
    @Test func compactionWalksTheSnapshotInsteadOfHoldingItAndWritesEveryChange() throws {
        try withTemporaryDirectory { directory in
            var empty = KeyedJournalState()
            let journal = try Journal.open(directory: directory, options: JournalOptions(durability: .none), state: &empty)
            // About 3 MiB of changes: several parts, each made while the previous one is written.
            let state = GeneratedState(count: 3000)
            let report = try journal.compact { (state, journal.lastSequence) }
            journal.close()
            #expect(!state.askedForTheWholeSnapshot)
            #expect(report.snapshotChanges == 3000)
            let header = String(decoding: try readBytes(journalPath(directory)).prefix(80), as: UTF8.self)
            #expect(header.contains(#""parts":3,"#) || header.contains(#""parts":4,"#))
            let (reopened, _) = try reopen(directory)
            #expect(reopened.liveCounts == ["books": 3000])
            #expect(reopened.value(in: "books", key: "b2999") == GeneratedState.change(2999).value)
        }
    }
}
