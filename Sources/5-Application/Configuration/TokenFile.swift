#if canImport(Glibc)
import Glibc
#endif

/// A file holding a bearer token (`metrics-token-file`), so that the token is on no command line
/// and in no environment: its path, and the token read when the setting was resolved (at start,
/// and again on SIGHUP).
struct TokenFile: Sendable, Equatable {
    /// The file's path, as the setting gives it.
    let path: String
    /// The token on the file's first line.
    let token: String

    /// What a bearer token (`dashboard-token`, `metrics-token`) must be, as error messages say it.
    static let bearerTokenRule = "a token of at least 16 visible ASCII characters, without '&' or '%'"

    /// Whether `text` is a bearer token: visible ASCII only, since it travels in a header (and
    /// the dashboard's in a query string) as written, and long enough not to be guessed.
    static func isBearerToken(_ text: String) -> Bool {
        text.utf8.count >= 16 && text.utf8.allSatisfy { (0x21...0x7E).contains($0) && $0 != UInt8(ascii: "&") && $0 != UInt8(ascii: "%") }
    }

    /// The setting's type: a path, read at once; the refusal says why the file is unusable, never what it holds.
    static let settingType = SettingType<TokenFile>(parse: { path throws(SettingRefusal) in
        guard !path.isEmpty else { throw .expected("the path of a file holding the metrics token", got: path) }
        return TokenFile(path: path, token: try readToken(at: path))
    }, format: \.path)

    /// The token in the file at `path`: its first line, which must be a bearer token, in a file
    /// that neither group nor others may read (like a secret certificate).
    private static func readToken(at path: String) throws(SettingRefusal) -> String {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw SettingRefusal(message: "cannot open \(path): \(String(cString: strerror(errno)))") }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0, status.st_mode & S_IFMT == S_IFREG else {
            throw SettingRefusal(message: "\(path) is not a regular file")
        }
        guard status.st_mode & 0o077 == 0 else {
            throw SettingRefusal(message: "\(path) is readable by group or others (mode \(String(status.st_mode & 0o777, radix: 8))): chmod 600 it")
        }
        // A token is short: more than a page is not a token file.
        var bytes = [UInt8](repeating: 0, count: 4097)
        let count = read(descriptor, &bytes, bytes.count)
        guard count >= 0 else { throw SettingRefusal(message: "cannot read \(path): \(String(cString: strerror(errno)))") }
        let line = bytes[..<count].split(separator: UInt8(ascii: "\n"), maxSplits: 1, omittingEmptySubsequences: false).first ?? []
        let token = String(decoding: line.last == UInt8(ascii: "\r") ? line.dropLast() : line, as: UTF8.self)
        guard count < bytes.count, isBearerToken(token) else {
            throw SettingRefusal(message: "\(path) does not hold \(bearerTokenRule) on its first line")
        }
        return token
    }
}
