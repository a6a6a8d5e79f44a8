#if canImport(Glibc)
import Glibc
#endif

/// A CURVE certificate in CZMQ's `zcert` format, so that keys made by ZeroMQ's tools work here
/// and the reverse: ZPL text with a `metadata` section of `name = "value"` lines and a `curve`
/// section holding `public-key` and, in the secret file only, `secret-key`, both in Z85.
///
/// A pair is two files: the public certificate `NAME`, to hand out, and the secret one
/// `NAME_secret`, created with mode 0600 and refused when its group or others may access it.
/// Reading is bounded (``maximumFileBytes``) and never blocks.
public struct CurveCertificate: Sendable {
    /// The public key, 32 bytes.
    public let publicKey: [UInt8]
    /// The secret key, 32 bytes; `nil` for a public certificate.
    public let secretKey: [UInt8]?
    /// The `metadata` section's names and values (CZMQ keeps the first of a repeated name; a
    /// repeated name is refused here).
    public let metadata: [String: String]
    /// The line each metadata name was read from, so that a problem with a value can be shown
    /// where it is; empty for a certificate made in memory.
    private let metadataLines: [String: Int]

    /// The suffix that names a pair's secret file: `NAME_secret`.
    public static let secretSuffix = "_secret"
    /// The largest certificate file read; CZMQ's own are under 1 KiB.
    public static let maximumFileBytes = 64 * 1024

    /// A certificate for `publicKey` (and `secretKey`, for a secret certificate), with `metadata`.
    public init(publicKey: [UInt8], secretKey: [UInt8]? = nil, metadata: [String: String] = [:]) {
        self.init(publicKey: publicKey, secretKey: secretKey, metadata: metadata, lines: [:])
    }

    /// A secret certificate for `keyPair`, with `metadata`.
    public init(keyPair: CurveKeyPair, metadata: [String: String] = [:]) {
        self.init(publicKey: keyPair.publicKey, secretKey: keyPair.secretKey, metadata: metadata)
    }

    private init(publicKey: [UInt8], secretKey: [UInt8]?, metadata: [String: String], lines: [String: Int]) {
        self.publicKey = publicKey
        self.secretKey = secretKey
        self.metadata = metadata
        metadataLines = lines
    }

    /// The public key's Z85 text, 40 characters: what `zcert_public_txt` gives, and the
    /// User-Id a ZAP handler reports for this key (empty if `publicKey` is not 32 bytes, which
    /// ``save(to:)`` refuses and ``load(from:)`` never returns).
    public var publicKeyText: String { (try? Z85.encode(publicKey)) ?? "" }

    /// The key pair, when this is a secret certificate.
    public var keyPair: CurveKeyPair? { secretKey.map { CurveKeyPair(publicKey: publicKey, secretKey: $0) } }

    /// The line of the file that held metadata `name`, when it was read from one.
    public func line(ofMetadata name: String) -> Int? { metadataLines[name] }

    /// The secret file's path for the public certificate at `path`.
    public static func secretPath(for path: String) -> String { path + secretSuffix }
}

extension CurveCertificate {
    /// Reads the certificate file at `path`, public or secret, as `zcert_load` would.
    /// - Throws: ``CertificateError`` naming `path` and, for a bad line, the line: the file is
    ///   missing, not a regular file, over ``maximumFileBytes``, not text, not ZPL, has no valid
    ///   public key or an invalid secret key, repeats a name, or holds a secret key while its
    ///   group or others may access it.
    public static func load(from path: String) throws(CertificateError) -> CurveCertificate {
        let (bytes, mode) = try CertificateFile.contents(of: path, limit: maximumFileBytes)
        guard !bytes.contains(0), String(validating: bytes, as: UTF8.self) != nil else { throw CertificateError(path: path, .notText) }
        let document: ZPLDocument
        do {
            document = try ZPLDocument(parsing: bytes)
        } catch {
            throw CertificateError(path: path, line: error.line, .syntax(error.message))
        }
        let curve = try section("curve", of: document, path: path)
        let metadataItems = try section("metadata", of: document, path: path)
        guard let publicItem = curve["public-key"] else { throw CertificateError(path: path, line: curve.line, .missingPublicKey) }
        let publicKey = try key(publicItem, named: "curve/public-key", path: path)
        let secretKey = try curve["secret-key"].map { item throws(CertificateError) in try key(item, named: "curve/secret-key", path: path) }
        if secretKey != nil { try CertificateFile.requirePrivate(path, mode: mode) }
        return CurveCertificate(
            publicKey: publicKey, secretKey: secretKey,
            metadata: metadataItems.entries.mapValues { $0.value ?? "" }, lines: metadataItems.entries.mapValues(\.line))
    }

    /// Writes the public certificate to `path` and, for a secret certificate, the secret one to
    /// `path_secret` (mode 0600 from its creation), laid out as `zcert_save` lays them out.
    /// Existing files are never replaced: if either exists nothing is written.
    /// - Throws: ``CertificateError``: a file exists, a metadata name or value cannot be written
    ///   in ZPL, or the file system refused.
    public func save(to path: String) throws(CertificateError) {
        let secretPath = Self.secretPath(for: path)
        guard publicKey.count == 32 else { throw CertificateError(path: path, .invalidKey(name: "curve/public-key")) }
        guard secretKey.map({ $0.count == 32 }) ?? true else { throw CertificateError(path: secretPath, .invalidKey(name: "curve/secret-key")) }
        for name in metadata.keys.sorted() {
            if let reason = ZPLDocument.refusal(ofName: name) ?? ZPLDocument.refusal(ofValue: metadata[name] ?? "") {
                throw CertificateError(path: path, .unwritableMetadata(name: name, reason: reason))
            }
        }
        for candidate in [path, secretPath] where access(candidate, F_OK) == 0 {
            throw CertificateError(path: candidate, .exists)
        }
        // Public first, as zcert_save does; a secret whose public half could not be written
        // would be a key nobody can authorise.
        try CertificateFile.create(path, text: document(secret: false).text, mode: CertificateFile.publicMode)
        guard secretKey != nil else { return }
        do {
            try CertificateFile.create(secretPath, text: document(secret: true).text, mode: CertificateFile.secretMode)
        } catch {
            unlink(path)
            throw error
        }
    }

    /// The ZPL tree `zcert_save_public` or `zcert_save_secret` builds: its comments, the
    /// metadata (sorted here, so that the files are reproducible) and the keys.
    private func document(secret: Bool) -> ZPLDocument {
        var document = ZPLDocument()
        document.comments = ["   ****  Generated on \(Self.localTime()) by Lyceum  ****"] + (secret ? [
            "   ZeroMQ CURVE **Secret** Certificate",
            "   DO NOT PROVIDE THIS FILE TO OTHER USERS nor change its permissions.",
        ] : [
            "   ZeroMQ CURVE Public Certificate",
            "   Exchange securely, or use a secure mechanism to verify the contents",
            "   of this file after exchange. Store public certificates in your home",
            "   directory, in the .curve subdirectory.",
        ])
        let section = document.append("metadata")
        for name in metadata.keys.sorted() { document.append(name, value: metadata[name], under: section) }
        let curve = document.append("curve")
        document.append("public-key", value: publicKeyText, under: curve)
        if secret, let secretKey, let text = try? Z85.encode(secretKey) { document.append("secret-key", value: text, under: curve) }
        return document
    }

    /// The section's items by name: a repeated section or name is refused, since CZMQ would
    /// use the first and another reader might use the last.
    private static func section(_ name: String, of document: ZPLDocument, path: String) throws(CertificateError) -> Section {
        let matches = document.children(of: nil).filter { document.items[$0].name == name }
        if matches.count > 1 { throw CertificateError(path: path, line: document.items[matches[1]].line, .duplicate(name: name)) }
        var section = Section(line: matches.first.map { document.items[$0].line })
        for index in matches.first.map(document.children(of:)) ?? [] {
            let item = document.items[index]
            guard section.entries[item.name] == nil else {
                throw CertificateError(path: path, line: item.line, .duplicate(name: "\(name)/\(item.name)"))
            }
            section.entries[item.name] = (item.value, item.line)
        }
        return section
    }

    /// A Z85 key of 32 bytes.
    private static func key(_ item: (value: String?, line: Int), named name: String, path: String) throws(CertificateError) -> [UInt8] {
        guard let text = item.value, text.utf8.count == 40, let key = try? Z85.decode(text), key.count == 32 else {
            throw CertificateError(path: path, line: item.line, .invalidKey(name: name))
        }
        return key
    }

    /// Now as `zclock_timestr` prints it: local time, `YYYY-MM-DD HH:MM:SS`.
    private static func localTime() -> String {
        var now = time(nil)
        var parts = tm()
        localtime_r(&now, &parts)
        var buffer = [CChar](repeating: 0, count: 32)
        let count = strftime(&buffer, buffer.count, "%Y-%m-%d %H:%M:%S", &parts)
        return String(decoding: buffer.prefix(count).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

/// One section of a certificate: where it starts and its items by name.
private struct Section {
    let line: Int?
    var entries: [String: (value: String?, line: Int)] = [:]

    subscript(name: String) -> (value: String?, line: Int)? { entries[name] }
}
