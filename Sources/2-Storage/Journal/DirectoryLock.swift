#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An exclusive `flock` on the data directory's lock file, held for as long as this value lives.
///
/// The lock file holds the holder's PID so that a second process can say who is in the way.
final class DirectoryLock: Sendable {
    private let fd: Int32

    init(path: String) throws {
        let fd = try SystemCall.open(path, O_RDWR | O_CREAT)
        guard Self.lock(fd) else {
            let code = errno
            var buffer = [UInt8](repeating: 0, count: 32)
            let count = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, 0) }
            close(fd)
            let text = count > 0 ? String(decoding: buffer[0..<count], as: UTF8.self) : ""
            let holder = Int32(text.trimmingCharacters(in: .whitespacesAndNewlines))
            guard code == EWOULDBLOCK else {
                throw JournalError(.io, "cannot lock the data directory: \(SystemCall.describe(code))", path: path, systemError: code)
            }
            throw JournalError(.locked, "another process has the data directory open\(holder.map { " (pid \($0))" } ?? "")", path: path, holderPID: holder)
        }
        self.fd = fd
        let pid = Array("\(getpid())\n".utf8)
        try SystemCall.truncate(fd, to: 0, path: path)
        try pid.withUnsafeBytes { try SystemCall.write(fd, $0, at: 0, path: path) }
    }

    deinit { close(fd) }

    /// Tries for half a second before giving up: a holder that is exiting, or a child process that
    /// another thread is spawning (it shares our descriptors until it execs), lets go shortly.
    private static func lock(_ fd: Int32) -> Bool {
        for _ in 0..<50 {
            if flock(fd, LOCK_EX | LOCK_NB) == 0 { return true }
            guard errno == EWOULDBLOCK || errno == EINTR else { return false }
            usleep(10_000)
        }
        return flock(fd, LOCK_EX | LOCK_NB) == 0
    }
}

import Foundation
