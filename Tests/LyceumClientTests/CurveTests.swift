import Foundation
import LyceumClient
import LyceumTestSupport
import Testing

/// CURVE end to end: the client against a real `lyceum serve` that requires it, with keys made
/// by `lyceum keys generate` and read with ``CurveClientKeys/init(secretCertificate:serverCertificate:)``.
@Suite(.serialized, .offTheCooperativePool)
struct CurveTests {
    @Test("requests and the event sequence go through with an authorised key", .timeLimit(.minutes(3)))
    func requestsAndEvents() async throws {
        let keys = try KeyFiles()
        defer { keys.remove() }
        let admin = try keys.client("ops", role: "admin")
        try await withDataDirectory { data in
            let serve = try Deployment.serve(data: data, arguments: keys.serveArguments, clientSecurity: admin.security)
            let lyceum = try serve.lyceumClient(curve: admin)
            defer { lyceum.close() }
            let book = try await lyceum.books.create(learner: "ada", title: "Dune", author: "Frank Herbert", genre: .fantasy, rating: 5)
            #expect(try await lyceum.books.get(learner: "ada", id: book.id) == book)

            var updates = try lyceum.progressEvents(course: "1").makeAsyncIterator()
            // The snapshot socket answered, and a heartbeat proves the subscription is in place.
            var synchronized = false
            while let update = try await updates.next() {
                if case .synchronized = update { synchronized = true }
                if case .heartbeat = update { break }
            }
            #expect(synchronized, "no snapshot over CURVE")
            _ = try await lyceum.progress.markWatched(learner: "ada", course: "1", lesson: "1")
            var watched: String?
            while watched == nil, let update = try await updates.next() {
                if case .event(let event) = update { watched = "\(event.type) \(event.learner) \(event.lesson ?? "-")" }
            }
            #expect(watched == "lesson_watched ada 1")
        }
    }

    @Test("a learner key gets forbidden for another learner and for course_stats; no key, or the wrong server key, gets no broker")
    func refusals() async throws {
        let keys = try KeyFiles()
        defer { keys.remove() }
        let admin = try keys.client("ops", role: "admin")
        let learner = try keys.client("ada-phone", role: "learner", "--learners", "ada")
        try await withDataDirectory { data in
            let serve = try Deployment.serve(data: data, arguments: keys.serveArguments, clientSecurity: admin.security)
            let phone = try serve.lyceumClient(curve: learner)
            defer { phone.close() }
            #expect(try await phone.books.create(learner: "ada", title: "Emma", author: "Jane Austen", genre: .romance, rating: 4).version == 1)
            let otherLearner = await lyceumError { () async throws(LyceumError) in
                try await phone.books.create(learner: "bob", title: "Emma", author: "Jane Austen", genre: .romance, rating: 4)
            }
            #expect(otherLearner?.code == .forbidden && otherLearner?.field == "$.learner", "\(String(describing: otherLearner))")
            let stats = await lyceumError { () async throws(LyceumError) in try await phone.progress.courseStats(course: "1") }
            #expect(stats?.code == .forbidden && stats?.field == "$.op", "\(String(describing: stats))")
            let operators = try serve.lyceumClient(curve: admin)
            defer { operators.close() }
            #expect(try await operators.books.list(learner: "bob").books.isEmpty, "the forbidden write changed nothing")

            let plain = try serve.lyceumClient(timeout: .milliseconds(500), attempts: 1)
            defer { plain.close() }
            let unkeyed = await lyceumError { () async throws(LyceumError) in try await plain.catalog.listCategories() }
            #expect(unkeyed?.code == .brokerUnreachable, "\(String(describing: unkeyed))")
            var impostorKeys = admin
            impostorKeys.serverPublicKey = learner.keyPair.publicKey
            let impostor = try serve.lyceumClient(timeout: .milliseconds(500), attempts: 1, curve: impostorKeys)
            defer { impostor.close() }
            let misled = await lyceumError { () async throws(LyceumError) in try await impostor.catalog.listCategories() }
            #expect(misled?.code == .brokerUnreachable, "\(String(describing: misled))")
        }
    }

    @Test("certificate files that cannot be used are an invalid configuration naming the file")
    func unusableCertificates() throws {
        let keys = try KeyFiles()
        defer { keys.remove() }
        _ = try keys.client("ops", role: "admin")
        let publicInsteadOfSecret = "\(keys.clients)/ops"
        do {
            _ = try CurveClientKeys(secretCertificate: publicInsteadOfSecret, serverCertificate: keys.server)
            Issue.record("a public certificate was taken for a secret one")
        } catch {
            #expect(error.code == .invalidConfiguration && error.message.contains(publicInsteadOfSecret), "\(error)")
        }
        #expect(throws: LyceumError.self) { try CurveClientKeys(secretCertificate: "\(keys.clients)/ops_secret", serverCertificate: "\(keys.clients)/none") }
    }
}

/// A server key and a directory of client keys (serve's `authorized-keys`), made by
/// `lyceum keys generate` in a temporary directory.
private struct KeyFiles {
    let directory: TemporaryDirectory
    /// The server's public certificate.
    let server: String
    /// The authorised clients' certificates.
    let clients: String

    init() throws {
        directory = try TemporaryDirectory()
        clients = directory.path + "/clients"
        let serverDirectory = directory.path + "/server"
        try FileManager.default.createDirectory(atPath: clients, withIntermediateDirectories: false)
        try FileManager.default.createDirectory(atPath: serverDirectory, withIntermediateDirectories: false)
        try Self.generate("serve", in: serverDirectory, role: "admin")
        server = serverDirectory + "/serve"
    }

    /// What makes serve require CURVE with these keys.
    var serveArguments: [String] { ["--curve-secret-key", server + "_secret", "--authorized-keys", clients] }

    /// A new authorised client key with `role` (and `options`, e.g. `--learners`), as the client reads it.
    func client(_ name: String, role: String, _ options: String...) throws -> CurveClientKeys {
        try Self.generate(name, in: clients, role: role, options)
        return try CurveClientKeys(secretCertificate: "\(clients)/\(name)_secret", serverCertificate: server)
    }

    func remove() { directory.remove() }

    private static func generate(_ name: String, in directory: String, role: String, _ options: [String] = []) throws {
        let run = try LyceumProcess.run(["keys", "generate", name, "--dir", directory, "--role", role] + options)
        #expect(run.status == 0, "keys generate \(name): \(run.stderr)")
    }
}
