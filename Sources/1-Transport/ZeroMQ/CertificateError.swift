#if canImport(Glibc)
import Glibc
#endif

/// A certificate file that could not be read, used or written: the file, the line when one is
/// to blame, and what is wrong. Its description is `path:line: problem`, for logs and errors.
public struct CertificateError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What is wrong with the file.
    public enum Problem: Sendable, Equatable {
        /// Opening, reading or writing failed with this `errno`.
        case system(operation: String, errno: Int32)
        /// The path names something that is not a regular file (a directory, a FIFO, a device).
        case notARegularFile
        /// The file is larger than ``CurveCertificate/maximumFileBytes``; it was not read.
        case tooLarge(limit: Int)
        /// The file is not UTF-8 text (or holds a NUL byte).
        case notText
        /// A line CZMQ's `zconfig` would refuse.
        case syntax(String)
        /// The `curve` section or its `public-key` is missing.
        case missingPublicKey
        /// A key is not 40 characters of Z85 (32 bytes).
        case invalidKey(name: String)
        /// A section or a name within one appears twice, so readers could disagree on its value.
        case duplicate(name: String)
        /// A file with a secret key may be read or written by its group or others (`mode` is
        /// the file's permission bits); it must be 0600 or stricter.
        case exposedSecret(mode: UInt32)
        /// The file exists; certificates are never overwritten.
        case exists
        /// A metadata name or value that the format cannot carry.
        case unwritableMetadata(name: String, reason: String)
    }

    /// The certificate file.
    public let path: String
    /// The 1-based line to blame, when one is.
    public let line: Int?
    /// What is wrong.
    public let problem: Problem

    /// An error about `path` (at `line`, if one is to blame).
    public init(path: String, line: Int? = nil, _ problem: Problem) {
        self.path = path
        self.line = line
        self.problem = problem
    }

    /// `path:line: reason`.
    public var description: String { (line.map { "\(path):\($0)" } ?? path) + ": " + reason }

    /// What is wrong, in words, without the path and line.
    public var reason: String {
        switch problem {
        case .system(let operation, let number): return "\(operation): \(String(cString: strerror(number)))"
        case .notARegularFile: return "not a regular file"
        case .tooLarge(let limit): return "larger than \(limit) bytes, not a certificate"
        case .notText: return "not UTF-8 text"
        case .syntax(let message): return message
        case .missingPublicKey: return "no curve/public-key"
        case .invalidKey(let name): return "\(name) is not 40 characters of Z85"
        case .duplicate(let name): return "\(name) appears twice"
        case .exposedSecret(let mode):
            return "holds a secret key but its mode is \(String(mode, radix: 8, uppercase: false).leftPadded(to: 4)) (group or others may access it); chmod 600 it"
        case .exists: return "already exists; certificates are never overwritten"
        case .unwritableMetadata(let name, let reason): return "metadata \(name): \(reason)"
        }
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
