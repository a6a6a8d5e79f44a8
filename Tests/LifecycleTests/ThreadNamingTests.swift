import Foundation
import Lifecycle
import Testing

@Suite("Thread names")
struct ThreadNamingTests {
    /// The operating system's name of a new thread once it called `nameCurrent(name)`.
    func systemName(after name: String) -> String {
        let done = DispatchSemaphore(value: 0)
        let seen = NSLock()
        nonisolated(unsafe) var comm = ""
        let thread = Thread {
            Thread.nameCurrent(name)
            let text: String
            do { text = try String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8) } catch { text = "unreadable: \(error)" }
            seen.withLock { comm = text }
            done.signal()
        }
        thread.start()
        done.wait()
        return seen.withLock { comm }.trimmingCharacters(in: .newlines)
    }

    @Test("the system sees the name, cut to the whole characters within 15 bytes")
    func namesAreCutToFifteenBytes() {
        #expect(systemName(after: "broker") == "broker")
        #expect(systemName(after: "journal-acknowledger") == "journal-acknowl")
        // "é" is two bytes: the fifteenth byte would split it.
        #expect(systemName(after: "aaaaaaaaaaaaaaé") == "aaaaaaaaaaaaaa")
    }
}
