import Foundation
import LyceumClient
import LyceumTestSupport
import Testing
import Synchronization
import ZeroMQ

/// CURVE on the client's sockets, against a CURVE ROUTER that answers like Lyceum's broker
/// (serve has no CURVE yet; the security work adds it).
@Suite struct CurveTests {
    @Test("with the server's public key the call goes through encrypted; with another it never connects")
    func curveClient() async throws {
        let serverKeys = try CurveKeyPair.generate()
        let endpoint = try freeLoopbackEndpoint()
        let context = try Context()
        // Closing the ROUTER right after the reply can lose it; it stays open until the test is done.
        let done = StopFlag()
        let broker = ThreadResult("curve-broker") {
            let router = try context.socket(.router)
            try router.set(.curveServer, to: true)
            try router.set(.curveSecretKey, to: serverKeys.secretKey)
            try router.set(.receiveTimeout, to: 10_000)
            try router.bind(endpoint)
            defer { router.close() }
            // [peer, tag, "", MDPC01, service, body]: answer with the same envelope and a result.
            let request = try #require(try router.receiveMultipart())
            let reply = Array(#"{"ok":true,"result":{"categories":[{"name":"Secret","course_count":1}]}}"#.utf8)
            try router.send(multipart: Array(request.prefix(5)) + [reply])
            while !done.value.load(ordering: .relaxed) { Thread.sleep(forTimeInterval: 0.01) }
            return String(decoding: request[5], as: UTF8.self)
        }
        defer { done.value.store(true, ordering: .relaxed) }
        let clientKeys = try CurveKeyPair.generate()
        let lyceum = try LyceumClient(configuration: LyceumClientConfiguration(
            brokers: [endpoint], timeout: .seconds(5), attempts: 1,
            curve: CurveClientKeys(keyPair: clientKeys, serverPublicKey: serverKeys.publicKey)))
        defer { lyceum.close() }
        #expect(try await lyceum.catalog.listCategories().map(\.name) == ["Secret"])
        done.value.store(true, ordering: .relaxed)
        #expect(try broker.value(within: .seconds(10)) == #"{"op":"list_categories"}"#)

        let other = try freeLoopbackEndpoint()
        let impostor = try LyceumClient(configuration: LyceumClientConfiguration(
            brokers: [other], timeout: .milliseconds(300), attempts: 1,
            curve: CurveClientKeys(keyPair: clientKeys, serverPublicKey: try CurveKeyPair.generate().publicKey)))
        defer { impostor.close() }
        let listener = try context.socket(.router)
        try listener.set(.curveServer, to: true)
        try listener.set(.curveSecretKey, to: serverKeys.secretKey)
        try listener.bind(other)
        defer { listener.close() }
        let refused = await lyceumError { () async throws(LyceumError) in try await impostor.catalog.listCategories() }
        #expect(refused?.code == .brokerUnreachable, "\(String(describing: refused))")
    }
}
