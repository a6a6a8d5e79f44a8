import Catalog
import JSON
import Journal
import LearningServices
import LearningServicesTestSupport
import Partitions
import Testing

/// A service instance that holds one partition serves that partition's learners and refuses any
/// other before reading or writing: a wrong (or hostile) partition choice never reaches a journal.
@Suite struct PartitionedServiceTests {
    // Of 16 partitions, ada is in 11 and bob in 4 (protocol/partitions.md).
    let log = InMemoryChangeLog()
    let books: BooksService
    let progress: ProgressService

    init() throws {
        let partition = try OwnedPartition(11, of: PartitionScheme(count: 16))
        books = BooksService(log: log, environment: deterministicEnvironment(), partition: partition)
        progress = ProgressService(catalog: CatalogStore(try Catalog.sample()), log: log, environment: deterministicEnvironment(), partition: partition)
    }

    @Test func theOwnLearnersAreServed() throws {
        let created = try books.call(#"{"op":"create","learner":"ada","title":"Dune","author":"Frank Herbert","genre":"Fantasy","rating":5}"#)
        #expect(result(created) != nil)
        #expect(result(try books.call(#"{"op":"list","learner":"ada"}"#))?["books"]?.arrayCount == 1)
        #expect(log.records.count == 1)
    }

    @Test(arguments: [
        #"{"op":"create","learner":"bob","title":"Dune","author":"Frank Herbert","genre":"Fantasy","rating":5}"#,
        #"{"op":"create","learner":"bob","title":"Dune","author":"Frank Herbert","genre":"Fantasy","rating":5,"request_id":"r1"}"#,
        #"{"op":"update","learner":"bob","id":"x","rating":1}"#,
        #"{"op":"delete","learner":"bob","id":"x"}"#,
        #"{"op":"get","learner":"bob","id":"x"}"#,
        #"{"op":"list","learner":"bob"}"#,
    ])
    func booksOfAnotherPartitionAreRefusedAndNothingIsWritten(request: String) throws {
        let reply = try books.call(request)
        #expect(errorCode(reply) == "bad_request")
        #expect(reply["error"]?["field"] == "$.learner")
        guard case .string(let message)? = reply["error"]?["message"] else { Issue.record("no message: \(reply)"); return }
        #expect(message.contains("partition 4 of 16") && message.contains("partition 11"))
        #expect(log.records.isEmpty)
    }

    @Test(arguments: [
        #"{"op":"begin_course","learner":"bob","course":"swiftui-essentials"}"#,
        #"{"op":"get","learner":"bob","course":"swiftui-essentials"}"#,
        #"{"op":"list","learner":"bob"}"#,
    ])
    func progressOfAnotherPartitionIsRefusedAndNothingIsWritten(request: String) throws {
        let handled = progress.handleWithCommit(Array(request.utf8))
        let reply = try JSONParser().parse(handled.reply)
        #expect(errorCode(reply) == "bad_request")
        #expect(reply["error"]?["field"] == "$.learner")
        #expect(handled.event == nil && handled.commit == nil)
        #expect(log.records.isEmpty)
    }
}
