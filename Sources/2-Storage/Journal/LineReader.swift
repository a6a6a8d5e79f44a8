/// Reads a file line by line through one reusable buffer, reporting each line's byte offset.
///
/// A line that grows past `maximumLineBytes` without a newline is handed out in pieces marked
/// unterminated, so a file of garbage cannot make the reader hold it all in memory.
final class LineReader {
    struct Line {
        /// The file offset of the line's first byte.
        let offset: UInt64
        /// The line without its newline; valid until the next call to `next()`.
        let bytes: UnsafeRawBufferPointer
        /// Whether a newline ended the line (false for a final partial line or an overlong piece).
        let terminated: Bool
    }

    private let fd: Int32
    private let path: String
    private let limit: UInt64
    private let maximumLineBytes: Int
    private var buffer: UnsafeMutableRawPointer
    private var capacity: Int
    private var start = 0
    private var end = 0
    private var bufferOffset: UInt64
    private var readOffset: UInt64

    /// Reads `fd` from `offset` up to `limit` bytes into the file.
    init(fd: Int32, path: String, from offset: UInt64 = 0, limit: UInt64, maximumLineBytes: Int = RecordFormat.maximumLineBytes) {
        self.fd = fd
        self.path = path
        self.limit = limit
        self.maximumLineBytes = maximumLineBytes
        capacity = min(4 << 20, max(4096, Int(limit - min(limit, offset))))
        buffer = .allocate(byteCount: capacity, alignment: 16)
        bufferOffset = offset
        readOffset = offset
    }

    deinit { buffer.deallocate() }

    /// The file offset up to which lines have been handed out.
    var position: UInt64 { bufferOffset + UInt64(start) }

    func next() throws -> Line? {
        while true {
            if start < end, let newline = memchr(buffer + start, 0x0A, end - start) {
                let length = buffer.distance(to: newline) - start
                let line = Line(offset: position, bytes: UnsafeRawBufferPointer(start: buffer + start, count: length), terminated: true)
                start += length + 1
                return line
            }
            if readOffset >= limit || end - start >= maximumLineBytes {
                guard start < end else { return nil }
                let line = Line(offset: position, bytes: UnsafeRawBufferPointer(start: buffer + start, count: end - start), terminated: false)
                start = end
                return line
            }
            try refill()
        }
    }

    private func refill() throws {
        if start > 0 {
            memmove(buffer, buffer + start, end - start)
            bufferOffset += UInt64(start)
            end -= start
            start = 0
        }
        if end == capacity {
            let larger = UnsafeMutableRawPointer.allocate(byteCount: capacity * 2, alignment: 16)
            larger.copyMemory(from: buffer, byteCount: end)
            buffer.deallocate()
            buffer = larger
            capacity *= 2
        }
        let wanted = min(capacity - end, Int(limit - readOffset))
        let count = try SystemCall.read(fd, into: buffer + end, count: wanted, at: readOffset, path: path)
        guard count > 0 else {
            throw JournalError(.io, "the file ended before its expected size (it shrank while being read)", path: path, offset: readOffset)
        }
        end += count
        readOffset += UInt64(count)
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
