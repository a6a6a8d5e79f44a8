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
    /// 50 clients with one create each in flight, each renewing it from its completion (as a
    /// worker pool would): every request is answered exactly once with its event, and group commit
    /// acknowledges each round of 50 with about one sync. The first round starts from a completion
    /// too, so that it does not depend on how fast this thread issues requests against the disk.
    /// (That no callback runs before its sync is `CallbackAcknowledgementTests`' business.)
    @Test func fiftyWritesInFlightAreAnsweredOnceWithFewSyncs() throws {
        let data = try TemporaryDirectory()
        defer { data.remove() }
        var state = BooksState()
        let journal = try Journal.open(directory: data.path, options: JournalOptions(durability: .always), state: &state)
        defer { journal.close() }
        let service = BooksService(state: state, log: JournalChangeLog(journal: journal))
        let answers = AnswerBook()
        let rounds = 4
        let start = Array(#"{"op":"create","learner":"starter","title":"Start","author":"A","genre":"Kids","rating":3}"#.utf8)
        service.handleWithCommit(start, caller: .unverified) { _ in
            for client in 0..<50 { BooksClient(service: service, client: client, rounds: rounds, answers: answers).send(round: 0) }
        }
        #expect(eventually { answers.count == 50 * rounds })
        usleep(20_000)
        let collected = answers.all
        #expect(collected.values.allSatisfy { $0.count == 1 }, "a request was answered more than once")
        let first = collected.values.compactMap(\.first)
        #expect(first.count == 50 * rounds)
        #expect(try first.allSatisfy { try parse($0.reply)["ok"] as? Bool == true })
        #expect(first.allSatisfy { $0.event?.kind == .created })
        #expect(Set(first.compactMap(\.commit?.sequence)) == Set(2...UInt64(50 * rounds + 1)))
        let statistics = journal.statistics
        #expect(statistics.appends == UInt64(50 * rounds + 1))
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

/// The answers of the clients below, by client and round.
private final class AnswerBook: Sendable {
    private let answers = Mutex<[String: [HandledRequest<BookEvent>]]>([:])

    func add(_ key: String, _ handled: HandledRequest<BookEvent>) { answers.withLock { $0[key, default: []].append(handled) } }
    var count: Int { answers.withLock { $0.count } }
    var all: [String: [HandledRequest<BookEvent>]] { answers.withLock { $0 } }
}

/// One client of the books service that sends its next create from the completion of the last.
private struct BooksClient: Sendable {
    let service: BooksService
    let client: Int
    let rounds: Int
    let answers: AnswerBook

    func send(round: Int) {
        guard round < rounds else { return }
        let request = #"{"op":"create","learner":"l\#(client % 5)","title":"T\#(client)-\#(round)","author":"A","genre":"Kids","rating":3}"#
        service.handleWithCommit(Array(request.utf8), caller: .unverified) { handled in
            answers.add("\(client)-\(round)", handled)
            send(round: round + 1)
        }
    }
}
