import Foundation
import LyceumLifecycle
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
            // Read with plain system calls on this very thread: /proc/thread-self is whoever opens it.
            var buffer = [UInt8](repeating: 0, count: 64)
            let descriptor = open("/proc/thread-self/comm", O_RDONLY)
            let count = descriptor < 0 ? -1 : read(descriptor, &buffer, buffer.count)
            if descriptor >= 0 { close(descriptor) }
            let text = count < 0 ? "unreadable: errno \(errno)" : String(decoding: buffer.prefix(count), as: UTF8.self)
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
