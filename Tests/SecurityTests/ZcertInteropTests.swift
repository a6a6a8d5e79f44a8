import Access
import Foundation
import LyceumLogging
import LyceumTestSupport
import Security
import Testing
import ZeroMQ

/// Whether Debian's libczmq loads in /usr/bin/python3 (`scripts/ensure-deps.sh test` installs
/// libczmq4 and python3-zmq).
let pythonHasCZMQ: Bool = {
    guard pythonHasZMQ else { return false }
    return (try? ZcertPeer.run(["check"]).status) == 0
}()

/// `Helpers/zcert_peer.py`: libczmq's zcert through ctypes, and pyzmq's certificate reader.
enum ZcertPeer {
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Helpers/zcert_peer.py").path

    static func run(_ arguments: [String]) throws -> (status: Int32?, output: String) {
        let finished = try ChildProcess.run("/usr/bin/python3", ["-B", script] + arguments, standardError: .discarded)
        return (finished.status, finished.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines))
    }

    /// What a reader made of a certificate file.
    struct Reading: Decodable, Equatable {
        let `public`: String
        let secret: String?
        let meta: [String: String]?
    }

    static func read(_ command: String, _ path: String) throws -> Reading {
        let (status, output) = try run([command, path])
        try #require(status == 0, "\(command) refused \(path)")
        return try JSONDecoder().decode(Reading.self, from: Data(output.utf8))
    }
}

@Suite("Certificates shared with libczmq's zcert and pyzmq", .enabled(if: pythonHasCZMQ, "needs libczmq4 and python3-zmq (scripts/ensure-deps.sh test)"))
struct ZcertInteropTests {
    let keys: KeyDirectoryFixture
    init() throws { keys = try KeyDirectoryFixture() }

    @Test("Certificates written by zcert_save load with the same keys and metadata, and a KeyRing authorises them")
    func readsZcertFiles() throws {
        defer { keys.directory.remove() }
        let (status, publicText) = try ZcertPeer.run(["save", keys.path("ada-phone"), "role=learner", "learners=ada,bob", "name=Ada's phone"])
        try #require(status == 0)
        let czmq = try ZcertPeer.read("load", keys.path("ada-phone"))

        let secret = try CurveCertificate.load(from: keys.path("ada-phone_secret"))
        #expect(secret.publicKeyText == publicText)
        #expect(secret.secretKey.map { try? Z85.encode($0) } == czmq.secret)
        #expect(secret.metadata == ["role": "learner", "learners": "ada,bob", "name": "Ada's phone"])
        let publicOnly = try CurveCertificate.load(from: keys.path("ada-phone"))
        #expect(publicOnly.publicKeyText == publicText)
        #expect(publicOnly.secretKey == nil)

        let ring = try KeyRing(directory: keys.directory.path, logger: Logger(component: "interop-test"))
        #expect(ring.principal(forKey: publicText) == Principal(name: "ada-phone", role: .learner, learners: ["ada", "bob"]))
        #expect(ring.count == 1)
    }

    @Test("Lyceum's files are read by zcert_load and by pyzmq with the same keys and metadata")
    func zcertReadsLyceumFiles() throws {
        defer { keys.directory.remove() }
        let pair = try CurveKeyPair.generate()
        let metadata = ["role": "learner", "learners": "ada,bob", "name": "ada-phone"]
        try CurveCertificate(keyPair: pair, metadata: metadata).save(to: keys.path("ada-phone"))
        let publicText = try Z85.encode(pair.publicKey), secretText = try Z85.encode(pair.secretKey)

        // zcert_load reads NAME_secret when it exists, else NAME: try both, the public one alone.
        #expect(try ZcertPeer.read("load", keys.path("ada-phone")) == .init(public: publicText, secret: secretText, meta: metadata))
        try FileManager.default.createDirectory(atPath: keys.path("public-only"), withIntermediateDirectories: false)
        try FileManager.default.copyItem(atPath: keys.path("ada-phone"), toPath: keys.path("public-only/ada-phone"))
        let publicReading = try ZcertPeer.read("load", keys.path("public-only/ada-phone"))
        #expect(publicReading.public == publicText)
        #expect(publicReading.meta == metadata)

        #expect(try ZcertPeer.read("pyzmq-load", keys.path("ada-phone")) == .init(public: publicText, secret: nil, meta: nil))
        #expect(try ZcertPeer.read("pyzmq-load", keys.path("ada-phone_secret")) == .init(public: publicText, secret: secretText, meta: nil))
    }

    @Test("pyzmq's own certificates (unquoted metadata) load too, once their secret file is made private")
    func readsPyzmqFiles() throws {
        defer { keys.directory.remove() }
        let (status, publicText) = try ZcertPeer.run(["pyzmq-save", keys.directory.path, "backend", "role=app"])
        try #require(status == 0)
        // pyzmq creates the secret file with the umask's mode (0644 here): refused until chmod 600.
        let exposed = try #require(throws: CertificateError.self) { try CurveCertificate.load(from: keys.path("backend.key_secret")) }
        guard case .exposedSecret = exposed.problem else { Issue.record("\(exposed)"); return }
        #expect(chmod(keys.path("backend.key_secret"), 0o600) == 0)
        let certificate = try CurveCertificate.load(from: keys.path("backend.key_secret"))
        #expect(certificate.publicKeyText == publicText)
        #expect(certificate.metadata == ["role": "app"])
        #expect(certificate.secretKey != nil)
    }
}
