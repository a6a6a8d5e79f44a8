/// A piece of one file of a journal directory on its way to another worker (a partition move):
/// which file, where in it, the bytes, and their CRC-32C so the receiver can tell a damaged or
/// misdelivered piece from a good one before writing it.
public struct JournalChunk: Sendable, Equatable {
    /// The largest chunk a move sends or accepts: 256 KiB, small enough that one chunk in flight
    /// never holds up the broker or the worker's other requests for long.
    public static let maxBytes = 256 * 1024

    /// The file's name inside the journal directory (a plain name, never a path).
    public let file: String
    /// Where `bytes` start in the file; chunks of a file arrive in order, each at the previous end.
    public let offset: UInt64
    /// The file's bytes at `offset`; empty only for the one chunk that announces an empty file.
    public let bytes: [UInt8]
    /// The CRC-32C of `bytes`.
    public let crc32c: UInt32

    /// A chunk of `bytes` at `offset` of `file`, with their checksum computed here.
    public init(file: String, offset: UInt64, bytes: [UInt8]) {
        self.init(file: file, offset: offset, bytes: bytes, crc32c: CRC32C.checksum(bytes))
    }

    /// A chunk as received: `crc32c` is the sender's claim, checked by `JournalImport.write(_:)`.
    public init(file: String, offset: UInt64, bytes: [UInt8], crc32c: UInt32) {
        self.file = file
        self.offset = offset
        self.bytes = bytes
        self.crc32c = crc32c
    }
}

/// One file of a journal directory as the sender read it whole: what the receiver must hold
/// before it may adopt the directory.
public struct JournalFileSummary: Sendable, Equatable {
    /// The file's name inside the journal directory.
    public let file: String
    /// Its length in bytes.
    public let bytes: UInt64
    /// The CRC-32C of all of its bytes.
    public let crc32c: UInt32

    /// A summary of `file`: `bytes` long with checksum `crc32c`.
    public init(file: String, bytes: UInt64, crc32c: UInt32) {
        self.file = file
        self.bytes = bytes
        self.crc32c = crc32c
    }
}

extension JournalError.Code {
    /// A moved file's chunk or summary was refused (bad name, wrong offset, checksum mismatch,
    /// too large) or the received files differ from what the sender read; nothing was adopted.
    public static let transferRejected = Self(name: "transfer_rejected")
    /// The directory a move would create already exists: the partition is (or was) held here.
    public static let alreadyExists = Self(name: "already_exists")
}

/// What a chunk's file name may be: one plain name in the directory, never the lock file (each
/// holder has its own) nor a compaction's temporary file, so a hostile sender cannot write
/// outside the incoming directory or plant files the journal treats specially.
enum TransferredName {
    static func isAcceptable(_ name: String) -> Bool {
        let paths = JournalPaths(directory: "")
        let reserved = [paths.lock, paths.temporary].map { String($0.dropFirst()) }
        return !name.isEmpty && name.utf8.count <= 255 && name != "." && name != ".."
            && !name.contains("/") && !name.contains("\0") && !reserved.contains(name)
    }
}
