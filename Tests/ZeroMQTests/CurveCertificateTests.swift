import Foundation
import LyceumTestSupport
import Testing
import ZeroMQ

@Suite("CURVE certificates in CZMQ's zcert format")
struct CurveCertificateTests {
    let directory: TemporaryDirectory
    init() throws { directory = try TemporaryDirectory() }

    private func path(_ name: String) -> String { directory.path + "/" + name }

    private func write(_ name: String, _ text: String, mode: mode_t = 0o644) throws -> String {
        let path = path(name)
        #expect(FileManager.default.createFile(atPath: path, contents: Data(text.utf8)))
        #expect(chmod(path, mode) == 0)
        return path
    }

    private func mode(of path: String) -> mode_t {
        var status = stat()
        stat(path, &status)
        return status.st_mode & 0o777
    }

    private func loadError(_ path: String) throws -> CertificateError {
        try #require(throws: CertificateError.self) { try CurveCertificate.load(from: path) }
    }

    @Test("A saved pair loads back with its keys and metadata; the secret file is 0600 from its creation")
    func roundTrip() throws {
        defer { directory.remove() }
        let pair = try CurveKeyPair.generate()
        try CurveCertificate(keyPair: pair, metadata: ["role": "learner", "learners": "ada,bob"]).save(to: path("ada"))
        #expect(mode(of: path("ada_secret")) == 0o600)
        #expect(mode(of: path("ada")) & 0o600 == 0o600)

        let secret = try CurveCertificate.load(from: path("ada_secret"))
        #expect(secret.publicKey == pair.publicKey)
        #expect(secret.secretKey == pair.secretKey)
        #expect(secret.metadata == ["role": "learner", "learners": "ada,bob"])
        let publicOnly = try CurveCertificate.load(from: path("ada"))
        #expect(publicOnly.publicKey == pair.publicKey)
        #expect(publicOnly.secretKey == nil)
        #expect(publicOnly.metadata == ["role": "learner", "learners": "ada,bob"])
        #expect(publicOnly.publicKeyText == (try Z85.encode(pair.publicKey)))
    }

    @Test("The public file is laid out as zcert_save lays it out")
    func layout() throws {
        defer { directory.remove() }
        let pair = try CurveKeyPair.generate()
        try CurveCertificate(keyPair: pair, metadata: ["role": "app"]).save(to: path("backend"))
        let lines = try String(contentsOfFile: path("backend"), encoding: .utf8).components(separatedBy: "\n")
        #expect(lines[0].hasPrefix("#   ****  Generated on ") && lines[0].hasSuffix(" by Lyceum  ****"))
        #expect(Array(lines[1...]) == [
            "#   ZeroMQ CURVE Public Certificate",
            "#   Exchange securely, or use a secure mechanism to verify the contents",
            "#   of this file after exchange. Store public certificates in your home",
            "#   directory, in the .curve subdirectory.",
            "",
            "metadata",
            "    role = \"app\"",
            "curve",
            "    public-key = \"\(try Z85.encode(pair.publicKey))\"",
            "",
        ])
        let secretLines = try String(contentsOfFile: path("backend_secret"), encoding: .utf8).components(separatedBy: "\n")
        #expect(secretLines.suffix(4) == ["curve", "    public-key = \"\(try Z85.encode(pair.publicKey))\"", "    secret-key = \"\(try Z85.encode(pair.secretKey))\"", ""])
    }

    @Test("Saving never replaces a file: an existing public or secret file stops it before anything is written")
    func neverOverwrites() throws {
        defer { directory.remove() }
        let original = try write("ada_secret", "keep me", mode: 0o600)
        let error = try #require(throws: CertificateError.self) {
            try CurveCertificate(keyPair: try CurveKeyPair.generate(), metadata: ["role": "app"]).save(to: path("ada"))
        }
        #expect(error.path == original)
        #expect(error.problem == .exists)
        #expect(try String(contentsOfFile: original, encoding: .utf8) == "keep me")
        #expect(!FileManager.default.fileExists(atPath: path("ada")))
    }

    @Test("Metadata the format cannot carry (a double quote, a newline, a bad name) is refused before writing")
    func unwritableMetadata() throws {
        defer { directory.remove() }
        for metadata in [["role": "a\"b"], ["role": "a\nb"], ["bad name": "x"], ["/role": "x"]] {
            let error = try #require(throws: CertificateError.self) {
                try CurveCertificate(keyPair: try CurveKeyPair.generate(), metadata: metadata).save(to: path("x"))
            }
            guard case .unwritableMetadata = error.problem else { Issue.record("\(error)"); continue }
            #expect(!FileManager.default.fileExists(atPath: path("x")))
        }
    }

    @Test("ZPL as other tools write it: unquoted and single-quoted values, comments, CRLF, blank lines, other sections")
    func lenientReading() throws {
        defer { directory.remove() }
        let key = try Z85.encode(try CurveKeyPair.generate().publicKey)
        let file = try write("pyzmq.key", """
            #   made by hand\r
            \r
            other
                deeper = 1
                    deepest
            metadata
                role = app   # the role
                name = 'my backend'
                empty
                spaced =    two words  \t
            curve # keys
                public-key = "\(key)"    # trailing comment

            """)
        let certificate = try CurveCertificate.load(from: file)
        #expect(certificate.publicKeyText == key)
        #expect(certificate.metadata == ["role": "app", "name": "my backend", "empty": "", "spaced": "two words"])
        #expect(certificate.line(ofMetadata: "role") == 7)
    }

    @Test("Lines zconfig refuses are refused with the path and the line", arguments: [
        ("metadata\n  role = \"app\"\n", 2, "indent"),
        ("metadata\n    role = \"app\n", 2, "missing closing"),
        ("metadata\n    role = \"app\" junk\n", 2, "unexpected"),
        ("metadata\n        role = \"app\"\n", 2, "indented"),
        ("# ok\n/metadata\n", 2, "'/'"),
        ("metadata\n    role \"app\"\n", 2, "unexpected"),
        ("\tmetadata\n", 1, "unexpected"),
    ])
    func syntaxErrors(text: String, line: Int, message: String) throws {
        defer { directory.remove() }
        let file = try write("bad", text)
        let error = try loadError(file)
        #expect(error.path == file)
        #expect(error.line == line)
        guard case .syntax(let text) = error.problem else { Issue.record("\(error)"); return }
        #expect(text.contains(message))
        #expect(error.description.hasPrefix("\(file):\(line): "))
    }

    @Test("A missing, short or non-Z85 key, or a repeated name, is refused")
    func keyProblems() throws {
        defer { directory.remove() }
        let key = try Z85.encode(try CurveKeyPair.generate().publicKey)
        #expect(try loadError(try write("a", "metadata\n    role = app\n")).problem == .missingPublicKey)
        #expect(try loadError(try write("b", "curve\n    public-key = \"abc\"\n")) == CertificateError(path: path("b"), line: 2, .invalidKey(name: "curve/public-key")))
        let notZ85 = String(repeating: "~", count: 40)
        #expect(try loadError(try write("c", "curve\n    public-key = \"\(notZ85)\"\n")).problem == .invalidKey(name: "curve/public-key"))
        let twice = try write("d", "curve\n    public-key = \"\(key)\"\n    public-key = \"\(key)\"\n")
        #expect(try loadError(twice) == CertificateError(path: twice, line: 3, .duplicate(name: "curve/public-key")))
        let sections = try write("e", "curve\n    public-key = \"\(key)\"\ncurve\n")
        #expect(try loadError(sections) == CertificateError(path: sections, line: 3, .duplicate(name: "curve")))
        let metadata = try write("f", "metadata\n    role = app\n    role = admin\ncurve\n    public-key = \"\(key)\"\n")
        #expect(try loadError(metadata).problem == .duplicate(name: "metadata/role"))
    }

    @Test("A secret file that its group or others may access is refused, naming the path and the mode")
    func exposedSecrets() throws {
        defer { directory.remove() }
        try CurveCertificate(keyPair: try CurveKeyPair.generate(), metadata: ["role": "app"]).save(to: path("app"))
        for mode: mode_t in [0o640, 0o604, 0o620, 0o644] {
            #expect(chmod(path("app_secret"), mode) == 0)
            let error = try loadError(path("app_secret"))
            #expect(error == CertificateError(path: path("app_secret"), .exposedSecret(mode: UInt32(mode))))
            #expect(error.description.contains("0\(String(mode, radix: 8))"))
        }
        // The content decides too: a secret key under a public name is checked the same way.
        #expect(chmod(path("app_secret"), 0o644) == 0)
        #expect(rename(path("app_secret"), path("renamed")) == 0)
        #expect(try loadError(path("renamed")).problem == .exposedSecret(mode: 0o644))
        #expect(chmod(path("renamed"), 0o400) == 0)
        #expect(try CurveCertificate.load(from: path("renamed")).secretKey != nil)
    }

    @Test("Input is bounded: a file over 64 KiB, a FIFO, a directory, binary data and a missing file are refused without hanging")
    func hostileFiles() throws {
        defer { directory.remove() }
        let key = try Z85.encode(try CurveKeyPair.generate().publicKey)
        let padded = try write("big", "curve\n    public-key = \"\(key)\"\n" + String(repeating: "# padding\n", count: 7000))
        #expect(try loadError(padded).problem == .tooLarge(limit: CurveCertificate.maximumFileBytes))
        #expect(mkfifo(path("fifo"), 0o644) == 0)
        #expect(try loadError(path("fifo")).problem == .notARegularFile)
        #expect(try loadError(directory.path).problem == .notARegularFile)
        #expect(try loadError(try write("nul", "curve\n    public-key = \"\(key)\"\u{0}\n")).problem == .notText)
        let binary = path("binary")
        #expect(FileManager.default.createFile(atPath: binary, contents: Data([0x63, 0xFF, 0xFE, 0x0A])))
        #expect(try loadError(binary).problem == .notText)
        #expect(try loadError(path("missing")).problem == .system(operation: "open", errno: ENOENT))
    }
}
