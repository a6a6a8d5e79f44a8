import DurableFiles
import LyceumLogging
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Thin wrappers over the POSIX calls the journal makes, each turning a failure into a `JournalError`.
enum SystemCall {
    static func describe(_ code: Int32) -> String { String(cString: strerror(code)) }

    static func open(_ path: String, _ flags: Int32, mode: mode_t = 0o644) throws -> Int32 {
        while true {
            let fd = path.withCString { Glibc.open($0, flags | O_CLOEXEC, mode) }
            if fd >= 0 { return fd }
            if errno != EINTR { throw failure("cannot open", path: path) }
        }
    }

    /// Writes all of `bytes` at `offset`, retrying short writes; throws on the first error.
    static func write(_ fd: Int32, _ bytes: UnsafeRawBufferPointer, at offset: UInt64, path: String) throws {
        var done = 0
        while done < bytes.count {
            let result = pwrite(fd, bytes.baseAddress! + done, bytes.count - done, off_t(offset) + off_t(done))
            if result < 0 {
                if errno == EINTR { continue }
                throw failure("cannot write", path: path, offset: offset + UInt64(done), code: .writeFailed)
            }
            done += result
        }
    }

    /// Reads up to `count` bytes at `offset` into `buffer`, returning how many were read (0 at end of file).
    static func read(_ fd: Int32, into buffer: UnsafeMutableRawPointer, count: Int, at offset: UInt64, path: String) throws -> Int {
        while true {
            let result = pread(fd, buffer, count, off_t(offset))
            if result >= 0 { return result }
            if errno != EINTR { throw failure("cannot read", path: path, offset: offset) }
        }
    }

    static func truncate(_ fd: Int32, to length: UInt64, path: String) throws {
        while ftruncate(fd, off_t(length)) != 0 {
            if errno != EINTR { throw failure("cannot truncate", path: path, offset: length) }
        }
    }

    static func size(_ fd: Int32, path: String) throws -> UInt64 {
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw failure("cannot stat", path: path) }
        return UInt64(info.st_size)
    }

    static func rename(_ from: String, to: String) throws {
        guard Glibc.rename(from, to) == 0 else { throw failure("cannot rename to \(to)", path: from) }
    }

    static func removeIfPresent(_ path: String) throws {
        guard unlink(path) == 0 || errno == ENOENT else { throw failure("cannot remove", path: path) }
    }

    static func exists(_ path: String) -> Bool { access(path, F_OK) == 0 }

    static func makeDirectory(_ path: String) throws {
        guard mkdir(path, 0o755) == 0 || errno == EEXIST else { throw failure("cannot create directory", path: path) }
    }

    /// Makes the file durable (its data; with `metadata`, its size and entry too) through
    /// `DurableFile`: a failed sync throws `syncFailed`, and the caller abandons the file it was
    /// building (a compaction's, a copy's, a snapshot's), never syncing it again. The journal's
    /// own file goes through `Journal.syncCurrentFile`, which also cuts back what was not synced.
    static func sync(_ fd: Int32, path: String, metadata: Bool = false) throws(JournalError) {
        do {
            if metadata { try DurableFile.sync(fd, path: path) } else { try DurableFile.syncData(fd, path: path) }
        } catch {
            throw JournalError(error)
        }
    }

    /// Makes the directory's entries (creations, renames, removals) durable; a failure throws
    /// `syncFailed`, as ``sync(_:path:metadata:)`` does.
    static func syncDirectory(_ path: String) throws(JournalError) {
        do { try DurableFile.syncDirectory(path) } catch { throw JournalError(error) }
    }

    /// Makes the directory's entries durable after a rename that is a commit point (a
    /// compaction's, an install's, a move's), or stops the process: the rename is done and
    /// cannot be abandoned, and no second sync could be trusted, so the failure is reported to
    /// `StorageFailure` (the process exits with its status) and thrown. `outcome` says what is
    /// left, in the log line.
    static func syncDirectoryOrStop(_ path: String, outcome: String) throws(JournalError) {
        do { try DurableFile.syncDirectory(path) } catch {
            StorageFailure.stop(error, owner: "journal", outcome: outcome)
            throw JournalError(error)
        }
    }

    static func failure(
        _ what: String, path: String, offset: UInt64? = nil, code: JournalError.Code = .io
    ) -> JournalError {
        let number = errno
        return JournalError(code, "\(what): \(describe(number))", path: path, offset: offset, systemError: number)
    }
}
