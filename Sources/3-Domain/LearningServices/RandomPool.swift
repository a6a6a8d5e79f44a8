#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// Random bytes from the kernel, fetched a few kilobytes at a time: a UUID per
/// durable create used to cost two system calls of 8 bytes each. Safe to use from every thread.
final class RandomPool: Sendable {
    /// The bytes one refill fetches: 256 UUIDs' worth.
    static let refillBytes = 4096

    private struct Buffer {
        var bytes = [UInt8](repeating: 0, count: RandomPool.refillBytes)
        /// The next unused byte; `bytes.count` when all are used.
        var next = RandomPool.refillBytes
    }

    private let buffer = Mutex(Buffer())

    /// The pool every service shares.
    static let shared = RandomPool()

    /// Fills `output` with unused random bytes, refilling the pool when it runs short.
    func fill(_ output: UnsafeMutableRawBufferPointer) {
        precondition(output.count <= Self.refillBytes, "ask for at most \(Self.refillBytes) bytes at a time")
        buffer.withLock { buffer in
            if buffer.bytes.count - buffer.next < output.count {
                buffer.bytes.withUnsafeMutableBytes { Self.fetch($0) }
                buffer.next = 0
            }
            buffer.bytes.withUnsafeBytes { pool in
                output.copyMemory(from: UnsafeRawBufferPointer(rebasing: pool[buffer.next..<buffer.next + output.count]))
            }
            // Handed-out bytes are never handed out again.
            buffer.next += output.count
        }
    }

    /// `/dev/urandom`, opened once: Swift offers no bulk `getrandom`, and one `read` of it is
    /// the same kernel generator. `-1` when it cannot be opened.
    private static let device = open("/dev/urandom", O_RDONLY | O_CLOEXEC)

    /// Fills `target` from the kernel, retrying short reads and interruptions; the system
    /// generator (which traps rather than fail) stands in should the device be unreadable.
    private static func fetch(_ target: UnsafeMutableRawBufferPointer) {
        var filled = 0
        while device >= 0, filled < target.count {
            let count = read(device, target.baseAddress! + filled, target.count - filled)
            if count > 0 {
                filled += count
            } else if count < 0, errno == EINTR {
                continue
            } else {
                break
            }
        }
        var generator = SystemRandomNumberGenerator()
        for index in filled..<target.count { target[index] = generator.next() }
    }
}
