import Access
import Books
import JSON
import LearningServices
import LearningServicesTestSupport
import LyceumLifecycle
import LyceumServer
import LyceumTestSupport
import Majordomo
import Security
@testable import ServiceHosting
import Testing
import ZeroMQ

/// A `books` worker pool behind a CURVE broker in the same process: the pool trusts the
/// broker's caller identities, so the service enforces the per-learner rules on requests that
/// crossed the broker, as a `lyceum worker` in another process does.
@Suite struct WorkerAuthorizationTests {
    @Test func aLearnerKeyIsForbiddenAnotherLearnersBooksThroughAWorker() throws {
        let context = try Context()
        let server = try CurveKeyPair.generate(), workerKeys = try CurveKeyPair.generate()
        let appKeys = try CurveKeyPair.generate(), adaKeys = try CurveKeyPair.generate()
        let keys = KeyTable()
        keys.add(try Z85.encode(workerKeys.publicKey), as: Principal(name: "books-worker", role: .worker))
        keys.add(try Z85.encode(appKeys.publicKey), as: Principal(name: "backend", role: .app))
        keys.add(try Z85.encode(adaKeys.publicKey), as: Principal(name: "ada-phone", role: .learner, learners: ["ada"]))
        let zapHandler = try ZAPHandler(context: context) { request in
            guard let key = request.curvePublicKey, let text = try? Z85.encode(key), keys.principal(forKey: text) != nil else {
                return .deny(reason: "unknown key")
            }
            return .allow(userID: text)
        }
        let zap = ComponentThread(zapHandler, name: "test-zap")
        defer { _ = zap.stop() }
        try zapHandler.waitUntilReady(timeout: .seconds(5))
        let broker = try Broker(
            endpoints: ["tcp://127.0.0.1:*"],
            configuration: BrokerConfiguration(security: .curveServer(server, zapDomain: "lyceum.broker"), keyDirectory: keys),
            context: context)
        let brokerThread = ComponentThread(broker, name: "test-broker")
        defer { _ = brokerThread.stop() }
        let endpoint = try broker.waitUntilBound()[0]

        let log = InMemoryChangeLog()
        let books = BooksService(log: log)
        let handler = FrameHandler.handler { frame, caller, reply in
            books.handleWithCommit(frame, caller: caller) { reply($0.reply) }
        }
        let pool = ComponentThread(try WorkerPool(
            endpoint: endpoint, service: "books", sessions: 2,
            configuration: WorkerConfiguration(security: .curveClient(workerKeys, serverKey: server.publicKey), trustsCallerIdentities: true),
            context: context, handler: handler), name: "test-books-pool")
        defer { _ = pool.stop() }

        func call(_ keys: CurveKeyPair, _ request: String) throws -> JSONValue {
            let socket = try context.socket(.dealer)
            defer { socket.close() }
            try socket.set(.linger, to: 0)
            try socket.secure(.curveClient(keys, serverKey: server.publicKey))
            try socket.connect(endpoint)
            _ = try socket.send(multipart: [[], MDP.clientHeader, Array("books".utf8), Array(request.utf8)])
            try socket.set(.receiveTimeout, to: 10_000)
            let frames = try #require(try socket.receiveMultipart())
            return try JSONParser().parse(try #require(frames.last))
        }

        let created = try call(appKeys, #"{"op":"create","learner":"bob","title":"Emma","author":"Jane Austen","genre":"Romance","rating":4}"#)
        guard case .string(let id)? = created["result"]?["book"]?["id"] else { Issue.record("create failed: \(created)"); return }
        let recordsBefore = log.records
        for request in [
            #"{"op":"get","learner":"bob","id":"\#(id)"}"#, #"{"op":"update","learner":"bob","id":"\#(id)","title":"Defaced"}"#,
            #"{"op":"delete","learner":"bob","id":"\#(id)"}"#, #"{"op":"list","learner":"bob"}"#,
        ] {
            let refused = try call(adaKeys, request)
            #expect(refused["error"]?["code"] == "forbidden", "\(request)")
            #expect(refused["error"]?["field"] == "$.learner")
        }
        #expect(log.records == recordsBefore)
        #expect(try call(appKeys, #"{"op":"get","learner":"bob","id":"\#(id)"}"#)["result"]?["book"]?["title"] == "Emma")
        #expect(try call(adaKeys, #"{"op":"list","learner":"ada"}"#)["ok"] == true)
    }
}
