import Foundation
import LyceumLifecycle
import LyceumTestSupport
import Synchronization
import Testing

@Suite("Thread names")
struct ThreadNamingTests {
    /// The operating system's name of a new thread once it called `nameCurrent(name)`.
    func systemName(after name: String) -> String {
        let done = Gate()
        let comm = Mutex("")
        let thread = Thread {
            Thread.nameCurrent(name)
            // Read with plain system calls on this very thread: /proc/thread-self is whoever opens it.
            var buffer = [UInt8](repeating: 0, count: 64)
            let descriptor = open("/proc/thread-self/comm", O_RDONLY)
            let count = descriptor < 0 ? -1 : read(descriptor, &buffer, buffer.count)
            if descriptor >= 0 { close(descriptor) }
            let text = count < 0 ? "unreadable: errno \(errno)" : String(decoding: buffer.prefix(count), as: UTF8.self)
            comm.withLock { $0 = text }
            done.open()
        }
        thread.start()
        done.wait()
        return comm.withLock { $0 }.trimmingCharacters(in: .newlines)
    }

    @Test("the system sees the name, cut to the whole characters within 15 bytes")
    func namesAreCutToFifteenBytes() {
        #expect(systemName(after: "broker") == "broker")
        #expect(systemName(after: "journal-acknowledger") == "journal-acknowl")
        // "é" is two bytes: the fifteenth byte would split it.
        #expect(systemName(after: "aaaaaaaaaaaaaaé") == "aaaaaaaaaaaaaa")
    }
}
