import Access
import Foundation
import LyceumLifecycle
import LyceumTestSupport
import Majordomo
import Security
import Synchronization
import Testing
import ZeroMQ

/// A CURVE broker on a free loopback port with a ZAP handler that lets in the keys of a
/// ``KeyTable`` (User-Id = the key's Z85 text, as Lyceum's), one key per role, and raw DEALER
/// peers that speak 7/MDP frame by frame.
final class SecuredBroker {
    let context: Context
    let serverKeys = try! CurveKeyPair.generate()
    let keys = KeyTable()
    let zap: ComponentThread
    let broker: RunningBroker
    let worker = try! CurveKeyPair.generate()
    let app = try! CurveKeyPair.generate()
    let ada = try! CurveKeyPair.generate()
    let dashboard = try! CurveKeyPair.generate()
    let admin = try! CurveKeyPair.generate()
    private var peers: [Socket] = []

    init(localServices: [LocalService] = [], servicePermissions: ServicePermissions = ServicePermissions()) throws {
        context = try Context()
        keys.add(try Z85.encode(worker.publicKey), as: Principal(name: "worker-1", role: .worker))
        keys.add(try Z85.encode(app.publicKey), as: Principal(name: "backend", role: .app))
        keys.add(try Z85.encode(ada.publicKey), as: Principal(name: "ada-phone", role: .learner, learners: ["ada"]))
        keys.add(try Z85.encode(dashboard.publicKey), as: Principal(name: "wall", role: .dashboard))
        keys.add(try Z85.encode(admin.publicKey), as: Principal(name: "operator", role: .admin))
        let table = keys
        let handler = try ZAPHandler(context: context) { request in
            guard let key = request.curvePublicKey, let text = try? Z85.encode(key), table.principal(forKey: text) != nil else {
                return .deny(reason: "unknown key")
            }
            return .allow(userID: text)
        }
        zap = ComponentThread(handler, name: "test-zap")
        try handler.waitUntilReady(timeout: .seconds(5))
        broker = try RunningBroker(BrokerConfiguration(
            heartbeat: fastHeartbeat, localServices: localServices,
            security: .curveServer(serverKeys, zapDomain: "lyceum.broker"), keyDirectory: keys,
            servicePermissions: servicePermissions), context: context)
    }

    /// A DEALER connected with `keys`.
    func peer(_ keys: CurveKeyPair) throws -> Socket {
        let socket = try context.socket(.dealer)
        try socket.set(.linger, to: 0)
        try socket.secure(.curveClient(keys, serverKey: serverKeys.publicKey))
        try socket.connect(broker.endpoint)
        peers.append(socket)
        return socket
    }

    /// Worker settings that connect with `keys` to this broker and trust its caller identities.
    func trustingWorker(_ keys: CurveKeyPair) -> WorkerConfiguration {
        WorkerConfiguration(heartbeat: fastHeartbeat, reconnectInitialDelay: .milliseconds(50),
                            security: .curveClient(keys, serverKey: serverKeys.publicKey), trustsCallerIdentities: true)
    }

    func stop() {
        for socket in peers { socket.close() }
        broker.stop()
        _ = zap.stop()
    }
}

/// Sends an MDP/Client request from a raw DEALER.
func sendRequest(_ socket: Socket, service: String, body: String) throws {
    _ = try socket.send(multipart: [[], MDP.clientHeader, bytes(service), bytes(body)])
}

/// The body of the next MDP/Client reply on a raw DEALER, or `nil` after `timeout`.
func replyBody(_ socket: Socket, timeout: Duration = .seconds(3)) throws -> [[UInt8]]? {
    guard let frames = try receive(socket, timeout: timeout), frames.count >= 4, frames[1] == MDP.clientHeader else { return nil }
    return Array(frames[3...])
}

@Suite("Broker authorization")
struct BrokerAuthorizationTests {
    static let disconnect: [[UInt8]] = [[], MDP.workerHeader, [0x05]]

    @Test func aKeyWithoutTheWorkerRoleIsNeverRegisteredNorGivenARequest() throws {
        let fixture = try SecuredBroker()
        defer { fixture.stop() }
        let impostor = try fixture.peer(fixture.app)
        _ = try impostor.send(multipart: WorkerCommand.ready(service: bytes("books")).frames)
        #expect(try receive(impostor) == Self.disconnect)
        // It keeps trying on the same connection: still no registration.
        _ = try impostor.send(multipart: WorkerCommand.ready(service: bytes("books")).frames)
        #expect(try receive(impostor) == Self.disconnect)

        let worker = try fixture.peer(fixture.worker)
        _ = try worker.send(multipart: WorkerCommand.ready(service: bytes("books")).frames)
        let client = try fixture.peer(fixture.app)
        for index in 0..<5 {
            try sendRequest(client, service: "books", body: "request \(index)")
            let request = try #require(try receive(worker) { (try? WorkerCommand(frames: $0[...]))?.kind == .request })
            guard case .request(let address, let body) = try WorkerCommand(frames: request[...]) else { Issue.record("not a request"); return }
            #expect(body == [bytes("request \(index)")])
            #expect(CallerIdentity.principal(inClientAddress: address) == Principal(name: "backend", role: .app))
            _ = try worker.send(multipart: WorkerCommand.reply(client: address, body: [bytes("reply \(index)")]).frames)
            #expect(try replyBody(client) == [bytes("reply \(index)")])
        }
        #expect(try receive(impostor, timeout: .milliseconds(300)) == nil)
    }

    @Test func aDashboardKeyIsForbiddenTheServicesAndOnlyAdminKeysMayManage() throws {
        let fixture = try SecuredBroker()
        defer { fixture.stop() }
        let dashboard = try fixture.peer(fixture.dashboard)
        try sendRequest(dashboard, service: "books", body: #"{"op":"list","learner":"ada"}"#)
        let refused = try #require(try replyBody(dashboard))
        #expect(BrokerRejection(body: refused)?.code == .forbidden)

        let app = try fixture.peer(fixture.app)
        try sendRequest(app, service: "mmi.service", body: "books")
        #expect(BrokerRejection(body: try #require(try replyBody(app)))?.code == .forbidden)
        let admin = try fixture.peer(fixture.admin)
        try sendRequest(admin, service: "mmi.service", body: "books")
        #expect(try replyBody(admin) == [MDP.notFound])
        // A worker key calls nothing.
        let worker = try fixture.peer(fixture.worker)
        try sendRequest(worker, service: "books", body: "{}")
        #expect(BrokerRejection(body: try #require(try replyBody(worker)))?.code == .forbidden)
    }

    /// The same rules in 18/MDP: a dashboard key's RFC 18 request gets `forbidden` as a FINAL, a
    /// key without the worker role is told DISCONNECT in majortomo's framing, and an app key's
    /// majortomo request reaches a 7/MDP worker with its caller identity.
    @Test func eighteenMDPPeersMeetTheSameRoles() throws {
        let fixture = try SecuredBroker()
        defer { fixture.stop() }
        let dashboard = try fixture.peer(fixture.dashboard)
        try dashboard.send(multipart: ClientMessage(service: bytes("books"), body: [bytes("{}")]).requestFrames(in: .rfc18))
        let refused = try #require(try receive(dashboard))
        #expect(Array(refused.prefix(3)) == [bytes("MDPC02"), [0x03], bytes("books")])
        #expect(BrokerRejection(body: Array(refused.dropFirst(3)))?.code == .forbidden)

        let impostor = try fixture.peer(fixture.app)
        try impostor.send(multipart: WorkerCommand.ready(service: bytes("books")).frames(in: .majortomo))
        #expect(try receive(impostor, timeout: .seconds(3)) == WorkerCommand.disconnect.frames(in: .majortomo))

        // The worker trusts caller identities: it would answer `unauthenticated` to a request
        // whose client address carried none, so its echo shows the identity came along.
        let worker = try RunningWorkers(endpoint: fixture.broker.endpoint, service: "books",
                                        configuration: fixture.trustingWorker(fixture.worker), context: fixture.context) { body in body }
        defer { worker.stop() }
        let app = try fixture.peer(fixture.app)
        #expect(try eventually {
            try app.send(multipart: ClientMessage(service: bytes("books"), body: [bytes("hello")]).requestFrames(in: .majortomo))
            return try receive(app, timeout: .milliseconds(500)) == [[], bytes("MDPC02"), [0x04], bytes("hello")]
        })
    }

    /// The application says which names need which permission (Lyceum: its node services need
    /// `manage_partitions`, its other own services `manage`); the longest matching prefix
    /// decides, so only `worker` and `admin` keys may call `app.node.*`, and `app.*` stays admin's.
    @Test func theApplicationsPrefixesDecideWhoMayCallAService() throws {
        let fixture = try SecuredBroker(servicePermissions: ServicePermissions([
            .init(prefix: "app.node.", permission: .managePartitions), .init(prefix: "app.", permission: .manage),
        ]))
        defer { fixture.stop() }
        let node = try RunningWorkers(endpoint: fixture.broker.endpoint, service: "app.node.w1",
                                      configuration: fixture.trustingWorker(fixture.worker), context: fixture.context) { _ in [bytes("described")] }
        defer { node.stop() }
        let admin = try fixture.peer(fixture.admin)
        #expect(try eventually {
            try sendRequest(admin, service: "mmi.service", body: "app.node.w1")
            return try replyBody(admin) == [MDP.found]
        })
        for keys in [fixture.app, fixture.ada] {
            let refused = try fixture.peer(keys)
            try sendRequest(refused, service: "app.node.w1", body: #"{"op":"describe"}"#)
            #expect(BrokerRejection(body: try #require(try replyBody(refused)))?.code == .forbidden)
        }
        for keys in [fixture.admin, fixture.worker] {
            let allowed = try fixture.peer(keys)
            try sendRequest(allowed, service: "app.node.w1", body: #"{"op":"describe"}"#)
            #expect(try replyBody(allowed) == [bytes("described")])
        }
        let worker = try fixture.peer(fixture.worker)
        try sendRequest(worker, service: "app.status", body: "{}")
        #expect(BrokerRejection(body: try #require(try replyBody(worker)))?.code == .forbidden)
    }

    @Test func aKeyRemovedFromTheDirectoryIsRefusedOnItsNextRequestOnTheSameConnection() throws {
        let callers = Mutex<[Caller]>([])
        let echo = LocalService(name: "echo") { body, caller, _ in
            callers.withLock { $0.append(caller) }
            return body
        }
        let fixture = try SecuredBroker(localServices: [echo])
        defer { fixture.stop() }
        let client = try fixture.peer(fixture.ada)
        let other = try fixture.peer(fixture.app)
        try sendRequest(client, service: "echo", body: "before")
        #expect(try replyBody(client) == [bytes("before")])
        #expect(callers.withLock { $0 } == [.authenticated(Principal(name: "ada-phone", role: .learner, learners: ["ada"]))])

        fixture.keys.revoke(try Z85.encode(fixture.ada.publicKey))
        try sendRequest(client, service: "echo", body: "after")
        let refused = try #require(try replyBody(client))
        #expect(BrokerRejection(body: refused)?.code == .unauthenticated)
        try sendRequest(other, service: "echo", body: "still served")
        #expect(try replyBody(other) == [bytes("still served")])
        #expect(callers.withLock { $0.count } == 2)
    }

    @Test func aRegisteredWorkerWhoseKeyIsRevokedReturnsTheRequestInHandThenIsDisconnected() throws {
        let fixture = try SecuredBroker()
        defer { fixture.stop() }
        let worker = try fixture.peer(fixture.worker)
        _ = try worker.send(multipart: WorkerCommand.ready(service: bytes("books")).frames)
        let client = try fixture.peer(fixture.app)
        try sendRequest(client, service: "books", body: "in flight")
        let request = try #require(try receive(worker) { (try? WorkerCommand(frames: $0[...]))?.kind == .request })
        guard case .request(let address, _) = try WorkerCommand(frames: request[...]) else { Issue.record("not a request"); return }
        fixture.keys.revoke(try Z85.encode(fixture.worker.publicKey))
        _ = try worker.send(multipart: WorkerCommand.reply(client: address, body: [bytes("done")]).frames)
        #expect(try replyBody(client) == [bytes("done")])
        #expect(try receive(worker) { $0 == Self.disconnect } != nil)
        // Not registered any more: the next request waits for a worker and is refused.
        try sendRequest(client, service: "books", body: "later")
        #expect(BrokerRejection(body: try #require(try replyBody(client, timeout: .seconds(5))))?.code == .serviceUnknown)
    }

    @Test func aTrustingPoolGetsTheCallerAndAPlainPoolGetsUnverified() throws {
        let fixture = try SecuredBroker()
        defer { fixture.stop() }
        let describe: WorkerPool.Handler = { _, caller, _ in
            switch caller {
            case .unverified: [bytes("unverified")]
            case .authenticated(let principal): [bytes("\(principal.name) \(principal.role.rawValue) \(principal.learners.sorted())")]
            }
        }
        let trusting = ComponentThread(try WorkerPool(
            endpoint: fixture.broker.endpoint, service: "who", sessions: 2, configuration: fixture.trustingWorker(fixture.worker),
            context: fixture.context, handler: describe), name: "trusting-pool")
        defer { _ = trusting.stop() }
        var plainConfiguration = fixture.trustingWorker(fixture.worker)
        plainConfiguration.trustsCallerIdentities = false
        let plain = ComponentThread(try WorkerPool(
            endpoint: fixture.broker.endpoint, service: "plain", sessions: 1, configuration: plainConfiguration,
            context: fixture.context, handler: describe), name: "plain-pool")
        defer { _ = plain.stop() }
        let client = try fixture.peer(fixture.ada)
        try sendRequest(client, service: "who", body: "?")
        #expect(try replyBody(client, timeout: .seconds(5)) == [bytes(#"ada-phone learner ["ada"]"#)])
        try sendRequest(client, service: "plain", body: "?")
        #expect(try replyBody(client, timeout: .seconds(5)) == [bytes("unverified")])
    }

    @Test func aTrustingPoolRefusesRequestsThatCarryNoIdentity() throws {
        // A broker without a key directory appends no identity.
        let context = try Context()
        let broker = try RunningBroker(context: context)
        defer { broker.stop() }
        let pool = ComponentThread(try WorkerPool(
            endpoint: broker.endpoint, service: "who", sessions: 1,
            configuration: WorkerConfiguration(heartbeat: fastHeartbeat, trustsCallerIdentities: true),
            context: context) { body, _, _ in body }, name: "trusting-pool")
        defer { _ = pool.stop() }
        let client = quickClient(broker.endpoint, context: context, timeout: .seconds(3))
        let error = #expect(throws: MajordomoError.self) { try client.call("who", body: [bytes("?")]) }
        #expect(error?.code == .unauthenticated)
    }
}
