import Access
import Foundation
import LyceumLogging
import LyceumTestSupport
import Security
import Synchronization
import Testing
import ZeroMQ

/// Writes certificates into a temporary key directory.
struct KeyDirectoryFixture {
    let directory: TemporaryDirectory
    init() throws { directory = try TemporaryDirectory() }

    func path(_ name: String) -> String { directory.path + "/" + name }

    /// A new key pair saved as `name` (and `name_secret`) with `metadata`; returns its Z85 public key.
    @discardableResult
    func key(_ name: String, _ metadata: [String: String]) throws -> String {
        let certificate = CurveCertificate(keyPair: try CurveKeyPair.generate(), metadata: metadata)
        try certificate.save(to: path(name))
        return certificate.publicKeyText
    }

    func write(_ name: String, _ text: String) {
        #expect(FileManager.default.createFile(atPath: path(name), contents: Data(text.utf8)))
    }

    func remove(_ name: String) throws { try FileManager.default.removeItem(atPath: path(name)) }
}

@Suite("KeyRing: the directory of authorised public certificates")
struct KeyRingTests {
    let keys: KeyDirectoryFixture
    let logger = Logger(component: "keyring-test")
    init() throws { keys = try KeyDirectoryFixture() }

    @Test("Every valid public certificate is a principal named after its file; secret and hidden files are ignored")
    func loadsADirectory() throws {
        defer { keys.directory.remove() }
        let ada = try keys.key("ada-phone", ["role": "learner", "learners": "ada, ada2"])
        let backend = try keys.key("backend", ["role": "app"])
        let worker = try keys.key("worker-1", ["role": "worker", "name": "the first worker"])
        try FileManager.default.copyItem(atPath: keys.path("backend"), toPath: keys.path(".backend.swp"))
        let ring = try KeyRing(directory: keys.directory.path, logger: logger)
        #expect(ring.count == 3)
        #expect(ring.names == ["ada-phone", "backend", "worker-1"])
        #expect(ring.principal(forKey: ada) == Principal(name: "ada-phone", role: .learner, learners: ["ada", "ada2"]))
        #expect(ring.principal(forKey: backend) == Principal(name: "backend", role: .app))
        #expect(ring.principal(forKey: worker) == Principal(name: "worker-1", role: .worker))
        #expect(ring.principal(forKey: String(repeating: "0", count: 40)) == nil)
    }

    @Test("A bad file is skipped and the others load", arguments: [
        ["learners": "ada"],                                            // no role
        ["role": "teacher"],                                            // unknown role
        ["role": "learner"],                                            // learner without learners
        ["role": "learner", "learners": ""],                            // empty list
        ["role": "learner", "learners": "ada,,bob"],                    // empty entry
        ["role": "learner", "learners": "ada,b o b"],                   // not a learner id
        ["role": "learner", "learners": (1...33).map { "l\($0)" }.joined(separator: ",")],   // 33 learners
        ["role": "app", "learners": "ada"],                             // learners on another role
    ])
    func badMetadata(metadata: [String: String]) throws {
        defer { keys.directory.remove() }
        let good = try keys.key("good", ["role": "app"])
        let bad = try keys.key("bad", metadata)
        let ring = try KeyRing(directory: keys.directory.path, logger: logger)
        #expect(ring.names == ["good"])
        #expect(ring.principal(forKey: good) != nil)
        #expect(ring.principal(forKey: bad) == nil)
    }

    @Test("32 learners are allowed")
    func thirtyTwoLearners() throws {
        defer { keys.directory.remove() }
        let learners = (1...32).map { "learner-\($0)@example.org" }
        let key = try keys.key("class", ["role": "learner", "learners": learners.joined(separator: ",")])
        let ring = try KeyRing(directory: keys.directory.path, logger: logger)
        #expect(ring.principal(forKey: key)?.learners == Set(learners))
    }

    @Test("Unusable files are skipped: bad ZPL, no key, a secret certificate under a public name, a bad file name, a subdirectory")
    func unusableFiles() throws {
        defer { keys.directory.remove() }
        let good = try keys.key("good", ["role": "admin"])
        keys.write("syntax", "metadata\n  role = app\n")
        keys.write("nokey", "metadata\n    role = app\n")
        try keys.key("pair", ["role": "app"])
        try keys.remove("pair")
        #expect(rename(keys.path("pair_secret"), keys.path("copied-secret")) == 0)
        try FileManager.default.copyItem(atPath: keys.path("good"), toPath: keys.path("bad name"))
        try FileManager.default.createDirectory(atPath: keys.path("sub"), withIntermediateDirectories: false)
        #expect(mkfifo(keys.path("fifo"), 0o644) == 0)
        let ring = try KeyRing(directory: keys.directory.path, logger: logger)
        // "bad name" holds good's key too, but its name is refused before its key counts.
        #expect(ring.names == ["good"])
        #expect(ring.principal(forKey: good)?.role == .admin)
    }

    @Test("A public key held by two files is refused for both")
    func duplicateKeys() throws {
        defer { keys.directory.remove() }
        let key = try keys.key("first", ["role": "learner", "learners": "ada"])
        let other = try keys.key("other", ["role": "app"])
        let text = try String(contentsOfFile: keys.path("first"), encoding: .utf8).replacingOccurrences(of: "learners = \"ada\"", with: "learners = \"bob\"")
        keys.write("second", text)
        let ring = try KeyRing(directory: keys.directory.path, logger: logger)
        #expect(ring.principal(forKey: key) == nil)
        #expect(ring.names == ["other"])
        #expect(ring.principal(forKey: other) != nil)
    }

    @Test("reload() swaps in the new set and says what was added, removed and changed")
    func reload() throws {
        defer { keys.directory.remove() }
        let kept = try keys.key("kept", ["role": "app"])
        let removed = try keys.key("dashboard", ["role": "dashboard"])
        try keys.key("ada-phone", ["role": "learner", "learners": "ada"])
        let ring = try KeyRing(directory: keys.directory.path, logger: logger)
        #expect(try ring.reload().isEmpty)

        try keys.remove("dashboard")
        try keys.remove("ada-phone")
        try keys.remove("ada-phone_secret")
        let ada = try keys.key("ada-phone", ["role": "learner", "learners": "ada,bob"])
        let added = try keys.key("new", ["role": "worker"])
        let change = try ring.reload()
        #expect(change.added == ["new"])
        #expect(change.removed == ["dashboard"])
        #expect(change.changed == ["ada-phone"])
        #expect(change.revokedPermissions == [.subscribeEvents, .callServices])
        #expect(ring.principal(forKey: removed) == nil)
        #expect(ring.principal(forKey: added)?.role == .worker)
        #expect(ring.principal(forKey: ada)?.learners == ["ada", "bob"])
        #expect(ring.principal(forKey: kept)?.role == .app)
    }

    @Test("An unreadable directory keeps the old set: reload throws, and a new ring cannot be made")
    func unreadableDirectory() throws {
        let key = try keys.key("kept", ["role": "app"])
        let ring = try KeyRing(directory: keys.directory.path, logger: logger)
        keys.directory.remove()
        let error = try #require(throws: KeyRingError.self) { try ring.reload() }
        #expect(error.directory == keys.directory.path)
        #expect(error.errno == ENOENT)
        #expect(ring.principal(forKey: key)?.name == "kept")
        #expect(throws: KeyRingError.self) { try KeyRing(directory: keys.directory.path, logger: logger) }
    }

    @Test("Lookups racing reloads see the old set or the new one, never neither")
    func concurrentLookups() throws {
        defer { keys.directory.remove() }
        let stable = try keys.key("stable", ["role": "app"])
        let ring = try KeyRing(directory: keys.directory.path, logger: logger)
        let flags = RaceFlags()
        let readers = (0..<2).map { index in
            ThreadResult("lookup-\(index)") {
                var lookups = 0
                while !flags.done.load(ordering: .acquiring) || lookups == 0 {
                    if ring.principal(forKey: stable) == nil { flags.misses.add(1, ordering: .relaxed) }
                    lookups += 1
                }
                return lookups
            }
        }
        for round in 0..<30 {
            try keys.key("churn-\(round)", ["role": "dashboard"])
            _ = try ring.reload()
        }
        flags.done.store(true, ordering: .releasing)
        for reader in readers { #expect(try reader.value() > 0) }
        #expect(flags.misses.load(ordering: .relaxed) == 0)
        #expect(ring.count == 31)
    }
}

/// What the racing readers share with the test.
private final class RaceFlags: Sendable {
    let misses = Atomic<Int>(0)
    let done = Atomic<Bool>(false)
}
