import Books
import Foundation
import Journal
import LearningServices
import LyceumServer
import LyceumTestSupport
import Synchronization
import Testing

/// The books service over a real journal with policy `always`, answered through callbacks.
struct JournalChangeLogTests {
    /// 50 creates issued at once, none holding a thread: each is answered exactly once with its
    /// event, and group commit needs few syncs for them. (That no callback runs before its sync is
    /// `CallbackAcknowledgementTests`' business.)
    @Test func fiftyWritesInFlightAreAnsweredOnceWithFewSyncs() throws {
        let data = try TemporaryDirectory()
        defer { data.remove() }
        var state = BooksState()
        let journal = try Journal.open(directory: data.path, options: JournalOptions(durability: .always), state: &state)
        defer { journal.close() }
        let service = BooksService(state: state, log: JournalChangeLog(journal: journal))
        let answers = Mutex<[Int: [(reply: [UInt8], event: BookEvent?, sequence: UInt64?)]]>([:])
        for index in 0..<50 {
            let request = #"{"op":"create","learner":"l\#(index % 5)","title":"T\#(index)","author":"A","genre":"Kids","rating":3}"#
            service.handleWithCommit(Array(request.utf8)) { handled in
                answers.withLock { $0[index, default: []].append((handled.reply, handled.event, handled.commit?.sequence)) }
            }
        }
        #expect(eventually { answers.withLock { $0.count } == 50 })
        usleep(20_000)
        let collected = answers.withLock { $0 }
        #expect(collected.values.allSatisfy { $0.count == 1 }, "a request was answered more than once")
        let first = collected.values.compactMap(\.first)
        #expect(try first.allSatisfy { try parse($0.reply)["ok"] as? Bool == true })
        #expect(first.allSatisfy { $0.event?.kind == .created })
        #expect(Set(first.compactMap(\.sequence)) == Set(1...50))
        let statistics = journal.statistics
        #expect(statistics.appends == 50)
        #expect(statistics.syncs < statistics.appends / 4, "\(statistics)")
    }

    @Test func aTicketTheJournalNeverIssuedIsAnError() throws {
        let data = try TemporaryDirectory()
        defer { data.remove() }
        var state = BooksState()
        let journal = try Journal.open(directory: data.path, options: JournalOptions(durability: .always), state: &state)
        defer { journal.close() }
        let outcome = Mutex<Result<Void, any Error>?>(nil)
        JournalChangeLog(journal: journal).whenDurable(CommitTicket(sequence: 7)) { result in outcome.withLock { $0 = result } }
        let error = try #require(outcome.withLock { result -> (any Error)? in
            if case .failure(let error)? = result { return error }
            return nil
        })
        #expect((error as? JournalError)?.code == .invalidChange)
    }
}
