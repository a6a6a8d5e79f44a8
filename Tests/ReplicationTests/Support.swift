import Foundation
import Journal
import LyceumTestSupport

/// A record line of one book, as a journal writes it (made by a real journal in a temporary directory).
func recordLine(_ sequence: UInt64) throws -> [UInt8] {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    var state = KeyedJournalState()
    let journal = try Journal.open(directory: directory.path, options: JournalOptions(durability: .none), state: &state)
    defer { journal.close() }
    for number in 1...sequence {
        _ = try journal.append([.put("books", key: "b\(number)", value: Array(#"{"id":"b\#(number)"}"#.utf8))])
    }
    return try JournalTail(journal: journal, after: sequence - 1).next(maxBytes: 1 << 20)[0].line
}
