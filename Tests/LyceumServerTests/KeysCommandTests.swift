import Foundation
import LyceumTestSupport
import Testing
import ZeroMQ

@Suite("lyceum keys generate and show")
struct KeysCommandTests {
    let directory: TemporaryDirectory
    init() throws { directory = try TemporaryDirectory() }

    private func path(_ name: String) -> String { directory.path + "/" + name }

    @Test("generate writes a pair with the role and learners, prints the key and paths; show prints them back without the secret")
    func generateAndShow() throws {
        defer { directory.remove() }
        let run = try LyceumProcess.run(["keys", "generate", "ada-phone", "--dir", directory.path, "--role", "learner", "--learners", "bob,ada"])
        #expect(run.status == 0)
        let secret = try CurveCertificate.load(from: path("ada-phone_secret"))
        #expect(run.stdout == """
            public-key: \(secret.publicKeyText)
            public:     \(path("ada-phone"))
            secret:     \(path("ada-phone_secret"))

            """)
        #expect(secret.metadata == ["name": "ada-phone", "role": "learner", "learners": "ada,bob"])
        var status = stat()
        #expect(stat(path("ada-phone_secret"), &status) == 0)
        #expect(status.st_mode & 0o777 == 0o600)
        #expect(try CurveCertificate.load(from: path("ada-phone")).publicKeyText == secret.publicKeyText)

        for file in ["ada-phone", "ada-phone_secret"] {
            let show = try LyceumProcess.run(["keys", "show", path(file)])
            #expect(show.status == 0)
            #expect(show.stdout.hasPrefix("name:        ada-phone\nrole:        learner\nlearners:    ada,bob\npublic-key:  \(secret.publicKeyText)\n"))
            let secretText = try Z85.encode(try #require(secret.secretKey))
            #expect(!show.stdout.contains(secretText) && !show.stderr.contains(secretText))
        }
    }

    @Test("generate never replaces a file (exit 1, the file unchanged)")
    func refusesToOverwrite() throws {
        defer { directory.remove() }
        #expect(try LyceumProcess.run(["keys", "generate", "backend", "--dir", directory.path, "--role", "app"]).status == 0)
        let before = try String(contentsOfFile: path("backend_secret"), encoding: .utf8)
        let again = try LyceumProcess.run(["keys", "generate", "backend", "--dir", directory.path, "--role", "admin"])
        #expect(again.status == 1)
        #expect(again.stderr.contains("already exists"))
        #expect(try String(contentsOfFile: path("backend_secret"), encoding: .utf8) == before)
    }

    @Test("A bad role, learner list or name is exit 2 naming it, and writes nothing", arguments: [
        (["--role", "teacher"], "--role"),
        ([], "--role"),
        (["--role", "learner"], "--learners"),
        (["--role", "app", "--learners", "ada"], "--learners"),
        (["--role", "learner", "--learners", "ada,,bob"], "--learners"),
        (["--role", "learner", "--learners", (1...33).map { "l\($0)" }.joined(separator: ",")], "--learners"),
    ])
    func refusals(arguments: [String], named: String) throws {
        defer { directory.remove() }
        let run = try LyceumProcess.run(["keys", "generate", "k", "--dir", directory.path] + arguments)
        #expect(run.status == 2)
        #expect(run.stderr.contains(named))
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).isEmpty)
    }

    @Test("A name that cannot be a key's is exit 2", arguments: [".hidden", "x_secret", "a/b", "two words"])
    func badNames(name: String) throws {
        defer { directory.remove() }
        let run = try LyceumProcess.run(["keys", "generate", name, "--dir", directory.path, "--role", "app"])
        #expect(run.status == 2)
        #expect(run.stderr.contains("NAME"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).isEmpty)
    }

    @Test("show exits 1 for a certificate a KeyRing would skip, naming the metadata and line")
    func showRefusesBadMetadata() throws {
        defer { directory.remove() }
        try CurveCertificate(publicKey: try CurveKeyPair.generate().publicKey, metadata: ["role": "teacher"]).save(to: path("odd"))
        let show = try LyceumProcess.run(["keys", "show", path("odd")])
        #expect(show.status == 1)
        #expect(show.stderr.contains("\(path("odd")):8: metadata role"))
    }
}
