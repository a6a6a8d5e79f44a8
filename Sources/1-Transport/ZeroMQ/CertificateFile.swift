import DurableFiles
#if canImport(Glibc)
import Glibc
#endif

/// The file system side of certificates: bounded reads that never block, and exclusive creates
/// with the final mode from the start (a secret is never, even briefly, readable by others).
enum CertificateFile {
    /// Permission bits of a file that holds a secret key: its owner's only.
    static let secretMode: mode_t = 0o600
    /// Permission bits asked for a public certificate (the umask may narrow them).
    static let publicMode: mode_t = 0o644

    /// The bytes of the regular file at `path`, at most `limit` of them, and its permission
    /// bits. Opening does not block (a FIFO planted in a key directory cannot hang a reload); a
    /// larger file is refused from its size, without being read; a path ending `_secret` is
    /// refused unless only its owner may access it, before a byte is read.
    static func contents(of path: String, limit: Int) throws(CertificateError) -> (bytes: [UInt8], mode: UInt32) {
        let descriptor = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY)
        guard descriptor >= 0 else { throw CertificateError(path: path, .system(operation: "open", errno: errno)) }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { throw CertificateError(path: path, .system(operation: "stat", errno: errno)) }
        guard status.st_mode & S_IFMT == S_IFREG else { throw CertificateError(path: path, .notARegularFile) }
        guard status.st_size <= limit else { throw CertificateError(path: path, .tooLarge(limit: limit)) }
        let mode = UInt32(status.st_mode & 0o7777)
        if path.hasSuffix(CurveCertificate.secretSuffix) { try requirePrivate(path, mode: mode) }
        // The size can change after fstat: read at most one byte past the limit to notice.
        var bytes = [UInt8](repeating: 0, count: limit + 1)
        var count = 0
        while count < bytes.count {
            let got = bytes.withUnsafeMutableBytes { read(descriptor, $0.baseAddress! + count, $0.count - count) }
            if got < 0, errno == EINTR { continue }
            guard got >= 0 else { throw CertificateError(path: path, .system(operation: "read", errno: errno)) }
            if got == 0 { break }
            count += got
        }
        guard count <= limit else { throw CertificateError(path: path, .tooLarge(limit: limit)) }
        return (Array(bytes.prefix(count)), mode)
    }

    /// Refuses a file holding a secret that its group or others may read or write.
    static func requirePrivate(_ path: String, mode: UInt32) throws(CertificateError) {
        guard mode & 0o077 == 0 else { throw CertificateError(path: path, .exposedSecret(mode: mode)) }
    }

    /// Creates `path` with `mode` (never replacing a file, never following a symbolic link in
    /// its place), writes `text` and syncs it (`DurableFile.create`). A file it could not
    /// finish is removed; a failed sync fails the creation, and a retry writes a new file.
    static func create(_ path: String, text: String, mode: mode_t) throws(CertificateError) {
        do {
            try DurableFile.create(path, bytes: Array(text.utf8), mode: mode)
        } catch {
            let exists = error.operation == "open" && error.systemError == EEXIST
            throw CertificateError(path: path, exists ? .exists : .system(operation: error.operation, errno: error.systemError))
        }
    }
}
