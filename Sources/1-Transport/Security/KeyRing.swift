#if canImport(Glibc)
import Glibc
#endif
import Access
import LyceumLogging
import Synchronization
import ZeroMQ

/// The authorised keys: every public certificate in a directory (`authorized-keys`), looked up
/// by the Z85 text of the public key, which is the User-Id Lyceum's ZAP handler reports.
///
/// A key's name is its file's name; its role and learners come from the certificate's metadata
/// (``CertificatePrincipal``). Secret files (`*_secret`) and hidden files are ignored. A file that
/// cannot be used is logged with its path and line and skipped, and so is every file of a public
/// key that several files hold (which one would be meant?). Lookups are safe from any thread and
/// see one whole set: ``reload()`` replaces it at once.
public final class KeyRing: KeyDirectory {
    /// What a reload changed, by key name.
    public struct Change: Sendable, Equatable {
        /// Keys that were not authorised before.
        public let added: [String]
        /// Keys no longer authorised.
        public let removed: [String]
        /// Keys whose public key, role or learners changed.
        public let changed: [String]
        /// The permissions that removed or changed keys had before: if it holds
        /// `subscribeEvents`, subscribers may have lost rights they authenticated with, and the
        /// event sockets must make every subscriber authenticate again.
        public let revokedPermissions: Set<Permission>

        /// Whether the reload changed nothing.
        public var isEmpty: Bool { added.isEmpty && removed.isEmpty && changed.isEmpty }
    }

    /// The directory the keys are read from.
    public let directory: String
    private let logger: Logger
    private let keys: Mutex<[String: Principal]>
    /// Serialises reloads, so that each computes its change against the set it replaces.
    private let reloading = Mutex<Void>(())

    /// Loads every public certificate in `directory`, logging (with `logger`) each file skipped.
    /// - Throws: ``KeyRingError`` when the directory cannot be listed.
    public init(directory: String, logger: Logger) throws(KeyRingError) {
        self.directory = directory
        self.logger = logger
        keys = Mutex(try Self.scan(directory, logger: logger))
    }

    /// The principal of the key whose Z85 public key is `z85PublicKey`, or `nil`.
    public func principal(forKey z85PublicKey: String) -> Principal? {
        keys.withLock { $0[z85PublicKey] }
    }

    /// How many keys are authorised.
    public var count: Int { keys.withLock(\.count) }

    /// The authorised keys' names, sorted.
    public var names: [String] { keys.withLock { $0.values.map(\.name) }.sorted() }

    /// Reads the directory again and replaces the whole set at once; lookups see the old set or
    /// the new one, never a mix.
    /// - Throws: ``KeyRingError`` when the directory cannot be listed; the old set stays.
    /// - Returns: the keys added, removed and changed.
    public func reload() throws(KeyRingError) -> Change {
        try reloading.withLock { _ throws(KeyRingError) in
            let fresh = try Self.scan(directory, logger: logger)
            let old = keys.withLock { current in
                defer { current = fresh }
                return current
            }
            return Self.change(from: old, to: fresh)
        }
    }

    private static func change(from old: [String: Principal], to new: [String: Principal]) -> Change {
        func byName(_ keys: [String: Principal]) -> [String: (key: String, principal: Principal)] {
            Dictionary(uniqueKeysWithValues: keys.map { ($0.value.name, ($0.key, $0.value)) })
        }
        let before = byName(old), after = byName(new)
        let removed = before.keys.filter { after[$0] == nil }
        let changed = before.keys.filter { name in after[name].map { $0.key != before[name]?.key || $0.principal != before[name]?.principal } ?? false }
        let revoked = (removed + changed).compactMap { before[$0]?.principal.role.permissions }.reduce(into: Set<Permission>()) { $0.formUnion($1) }
        return Change(
            added: after.keys.filter { before[$0] == nil }.sorted(), removed: removed.sorted(), changed: changed.sorted(),
            revokedPermissions: revoked)
    }

    /// Every usable public certificate in `directory`, by Z85 public key.
    private static func scan(_ directory: String, logger: Logger) throws(KeyRingError) -> [String: Principal] {
        var candidates: [(path: String, key: String, principal: Principal)] = []
        for name in try fileNames(in: directory) where !name.hasPrefix(".") && !name.hasSuffix(CurveCertificate.secretSuffix) {
            let path = directory.hasSuffix("/") ? directory + name : directory + "/" + name
            do throws(KeyRingFileError) {
                let (key, principal) = try load(path, named: name)
                candidates.append((path, key, principal))
            } catch {
                logger.error("skipping a certificate", ["path": path, "line": error.line.map(String.init) ?? "", "problem": error.message])
            }
        }
        let files = Dictionary(grouping: candidates, by: \.key)
        var keys: [String: Principal] = [:]
        for (key, holders) in files {
            guard holders.count == 1, let only = holders.first else {
                for holder in holders {
                    logger.error("skipping a certificate whose public key another certificate holds", [
                        "path": holder.path, "others": holders.map(\.path).filter { $0 != holder.path }.joined(separator: ","),
                    ])
                }
                continue
            }
            keys[key] = only.principal
        }
        return keys
    }

    /// One public certificate's key and principal.
    private static func load(_ path: String, named name: String) throws(KeyRingFileError) -> (String, Principal) {
        if let refusal = CertificatePrincipal.refusal(ofKeyName: name) { throw KeyRingFileError(line: nil, message: refusal) }
        let certificate: CurveCertificate
        do {
            certificate = try CurveCertificate.load(from: path)
        } catch {
            throw KeyRingFileError(line: error.line, message: error.reason)
        }
        guard certificate.secretKey == nil else {
            throw KeyRingFileError(line: nil, message: "holds a secret key: only public certificates belong in a key directory")
        }
        do {
            return (certificate.publicKeyText, try CertificatePrincipal.principal(named: name, metadata: certificate.metadata))
        } catch {
            throw KeyRingFileError(line: certificate.line(ofMetadata: error.metadata), message: error.description)
        }
    }

    /// The names in `directory`, sorted (so that logs come in a stable order).
    private static func fileNames(in directory: String) throws(KeyRingError) -> [String] {
        guard let stream = opendir(directory) else { throw KeyRingError(directory: directory, errno: errno) }
        defer { closedir(stream) }
        var names: [String] = []
        while true {
            errno = 0
            guard let entry = readdir(stream) else {
                if errno != 0 { throw KeyRingError(directory: directory, errno: errno) }
                break
            }
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if name != ".", name != ".." { names.append(name) }
        }
        return names.sorted()
    }
}

/// A key directory that could not be listed.
public struct KeyRingError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The directory.
    public let directory: String
    /// The `errno` of the failure.
    public let errno: Int32

    /// `authorized keys DIR: strerror`.
    public var description: String { "authorized keys \(directory): \(String(cString: strerror(errno)))" }
}

/// Why one file of a key directory was skipped.
private struct KeyRingFileError: Error {
    let line: Int?
    let message: String
}
