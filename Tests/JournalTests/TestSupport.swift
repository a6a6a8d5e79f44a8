import Foundation
import Journal
import Testing

/// Runs `body` with a new empty directory that is removed afterwards.
func withTemporaryDirectory<T>(_ body: (String) throws -> T) throws -> T {
    var template = Array((NSTemporaryDirectory() + "/journal-tests-XXXXXX").utf8CString)
    let path = try template.withUnsafeMutableBufferPointer { buffer -> String in
        guard let result = mkdtemp(buffer.baseAddress!) else { throw POSIXError(.init(rawValue: errno)!) }
        return String(cString: result)
    }
    defer { removeDirectory(path) }
    return try body(path)
}

/// Removes a test directory; a failure is a test failure, not something to hide.
func removeDirectory(_ path: String) {
    do { try FileManager.default.removeItem(atPath: path) } catch { Issue.record("cannot remove \(path): \(error)") }
}


/// A small book as its service would store it.
func bookValue(_ number: Int, title: String = "A Book") -> [UInt8] {
    Array(#"{"id":"b\#(number)","title":"\#(title) \#(number)","pages":\#(100 + number)}"#.utf8)
}

func journalPath(_ directory: String) -> String { directory + "/journal.jsonl" }

func readBytes(_ path: String) throws -> [UInt8] { Array(try Data(contentsOf: URL(fileURLWithPath: path))) }

func writeBytes(_ bytes: [UInt8], to path: String) throws { try Data(bytes).write(to: URL(fileURLWithPath: path)) }

/// The byte offset where each line starts, followed by the file's length.
func lineBoundaries(_ bytes: [UInt8]) -> [Int] {
    var boundaries = [0]
    for (index, byte) in bytes.enumerated() where byte == 0x0A { boundaries.append(index + 1) }
    if boundaries.last != bytes.count { boundaries.append(bytes.count) }
    return boundaries
}

/// Writes a journal of `count` single-put records (`books/b1` … `books/bN`) and closes it.
@discardableResult
func makeJournal(in directory: String, records count: Int) throws -> KeyedJournalState {
    var state = KeyedJournalState()
    let journal = try Journal.open(directory: directory, options: JournalOptions(durability: .none), state: &state)
    for number in 1...count {
        let change = JournalChange.put("books", key: "b\(number)", value: bookValue(number))
        _ = try journal.append([change]).waitUntilDurable()
        state.apply(change)
    }
    journal.close()
    return state
}

/// Opens the journal in `directory`, returns what it replayed, and closes it again.
func reopen(_ directory: String) throws -> (state: KeyedJournalState, lastSequence: UInt64) {
    var state = KeyedJournalState()
    let journal = try Journal.open(directory: directory, options: JournalOptions(durability: .none), state: &state)
    defer { journal.close() }
    return (state, journal.lastSequence)
}

/// The error `body` throws, which must be a `JournalError`.
func journalError(_ body: () throws -> Void) -> JournalError? {
    do {
        try body()
        return nil
    } catch let error as JournalError {
        return error
    } catch {
        Issue.record("expected a JournalError, got \(error)")
        return nil
    }
}

/// Files in `directory` whose names start with `prefix`.
func files(in directory: String, prefix: String) throws -> [String] {
    try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.hasPrefix(prefix) }.sorted()
}

/// The repository's root, for the example files under `protocol/`.
let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path

/// The `journal-stress` child executable, built beside the test bundle.
func stressExecutable() throws -> String { try builtExecutable("journal-stress") }

/// An executable product of this package, found beside the test bundle (where `swift build
/// --build-tests` puts every product) or in the default debug build directory.
func builtExecutable(_ name: String) throws -> String {
    let candidates = [
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent(name).path,
        Bundle.main.bundleURL.appendingPathComponent(name).path,
        Bundle.main.bundleURL.deletingLastPathComponent().appendingPathComponent(name).path,
        repositoryRoot + "/.build/debug/" + name,
    ]
    guard let found = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
        throw POSIXError(.ENOENT, userInfo: [NSLocalizedDescriptionKey: "\(name) not found; run `swift build --build-tests` (looked in \(candidates))"])
    }
    return found
}
