#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An open journal file; closed when the last reference goes, so a sync still running on a file
/// that compaction has just replaced finishes on a valid descriptor.
final class JournalFile: Sendable {
    let fd: Int32
    let path: String

    init(fd: Int32, path: String) {
        self.fd = fd
        self.path = path
    }

    deinit { close(fd) }
}

/// Buffers writes to a file being built (a new journal), so that snapshots go out in large writes.
final class BufferedFileWriter {
    let fd: Int32
    let path: String
    private(set) var offset: UInt64 = 0
    private var buffer: [UInt8] = []
    private let capacity = 1 << 20

    init(fd: Int32, path: String) {
        self.fd = fd
        self.path = path
        buffer.reserveCapacity(capacity)
    }

    /// The bytes accepted so far, written or still buffered.
    var count: UInt64 { offset + UInt64(buffer.count) }

    func write(_ bytes: UnsafeRawBufferPointer) throws {
        if buffer.count + bytes.count > capacity { try flush() }
        if bytes.count >= capacity {
            try SystemCall.write(fd, bytes, at: offset, path: path)
            offset += UInt64(bytes.count)
        } else {
            buffer.append(contentsOf: bytes)
        }
    }

    func write(_ bytes: [UInt8]) throws { try bytes.withUnsafeBytes { try write($0) } }

    func flush() throws {
        guard !buffer.isEmpty else { return }
        try buffer.withUnsafeBytes { try SystemCall.write(fd, $0, at: offset, path: path) }
        offset += UInt64(buffer.count)
        buffer.removeAll(keepingCapacity: true)
    }
}
