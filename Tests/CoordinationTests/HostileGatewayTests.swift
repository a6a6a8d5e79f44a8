import Coordination
import Foundation
import LyceumTestSupport
import Testing

/// A broken or hostile endpoint gets a typed error naming it, within the call's limits: it
/// neither hangs a caller nor makes it buffer without bound.
@Suite(.serialized, .offTheCooperativePool) struct HostileGatewayTests {
    static let limits = GatewayLimits(connectTimeout: .milliseconds(500), requestTimeout: .milliseconds(500), maxHeadBytes: 4096, maxBodyBytes: 64 << 10, maxMessageBytes: 16 << 10)

    private func failure(of script: [UInt8], repeatForever: Bool = false, closeAfterScript: Bool = false, _ call: (EtcdClient) throws -> Void) throws -> CoordinationError? {
        let gateway = try FakeGateway(script: script, repeatForever: repeatForever, closeAfterScript: closeAfterScript)
        defer { gateway.stop() }
        let client = try EtcdClient(endpoints: [gateway.endpoint], limits: Self.limits)
        let error = #expect(throws: CoordinationError.self) { try call(client) }
        #expect(error?.endpoint == gateway.endpoint)
        return error
    }

    @Test func aSilentEndpointTimesOut() throws {
        let listener = try LoopbackListener()  // accepts into its backlog, never answers
        let client = try EtcdClient(endpoints: [listener.endpoint.replacingOccurrences(of: "tcp://", with: "http://")], limits: Self.limits)
        let error = #expect(throws: CoordinationError.self) { try client.get("k") }
        #expect(error?.kind == .timedOut)
    }

    @Test func endlessHeadersAreCutAtTheLimit() throws {
        let error = try failure(of: Array("HTTP/1.1 200 OK\r\n".utf8) + Array("X-Filler: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\r\n".utf8), repeatForever: false) { client in
            _ = try client.get("k")
        }
        // The head never ends: either the limit or the time limit ends the call.
        #expect(error?.kind == .timedOut || error?.kind == .responseTooLarge)
        let header = Array("X-Filler: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\r\n".utf8)
        let flood = try failure(of: Array("HTTP/1.1 200 OK\r\n".utf8) + Array([[UInt8]](repeating: header, count: 200).joined())) { client in
            _ = try client.get("k")
        }
        #expect(flood?.kind == .responseTooLarge)
    }

    @Test func aHugeBodyIsRefusedBeforeItIsRead() throws {
        let error = try failure(of: Array("HTTP/1.1 200 OK\r\nContent-Length: 999999999999\r\n\r\n{".utf8)) { client in _ = try client.get("k") }
        #expect(error?.kind == .responseTooLarge)
        let chunked = try failure(of: Array("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4000\r\n".utf8) + [UInt8](repeating: 0x20, count: 16384) + Array("\r\n".utf8), repeatForever: true) { client in
            _ = try client.get("k")
        }
        #expect(chunked?.kind == .responseTooLarge || chunked?.kind == .malformedResponse)
    }

    @Test func garbageIsMalformedAndEtcdsErrorsAreRejections() throws {
        let garbage = try failure(of: Array("SSH-2.0-OpenSSH\r\n\r\n".utf8), closeAfterScript: true) { client in _ = try client.get("k") }
        #expect(garbage?.kind == .malformedResponse)
        let notJSON = try failure(of: Array("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello".utf8)) { client in _ = try client.get("k") }
        #expect(notJSON?.kind == .malformedResponse)
        let body = #"{"error":"etcdserver: requested lease not found","message":"etcdserver: requested lease not found","code":5}"#
        let rejected = try failure(of: Array("HTTP/1.1 200 OK\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)".utf8)) { client in
            _ = try client.keepAlive(lease: 1)
        }
        #expect(rejected?.kind == .rejected)
        #expect(rejected?.detail == "code 5 etcdserver: requested lease not found")
        let cut = try failure(of: Array("HTTP/1.1 200 OK\r\nContent-Length: 50\r\n\r\n{\"hea".utf8), closeAfterScript: true) { client in _ = try client.get("k") }
        #expect(cut?.kind == .connectionLost)
    }

    @Test func aWatchMessageOverTheLimitEndsTheWatch() throws {
        let created = #"{"result":{"header":{"revision":"1"},"created":true}}"# + "\n"
        let head = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + String(created.utf8.count, radix: 16) + "\r\n" + created + "\r\n"
        let filler = "4000\r\n" + String(repeating: "a", count: 16384) + "\r\n"
        let gateway = try FakeGateway(script: Array((head + filler + filler).utf8))
        defer { gateway.stop() }
        let client = try EtcdClient(endpoints: [gateway.endpoint], limits: Self.limits)
        let watch = try client.watch("k")
        let error = #expect(throws: CoordinationError.self) { _ = try watch.next(timeout: .seconds(5)) }
        #expect(error?.kind == .responseTooLarge)
    }

    @Test func endpointsAndTimingsAreChecked() throws {
        #expect(try GatewayEndpoint("http://10.0.0.1:2379").description == "http://10.0.0.1:2379")
        #expect(try GatewayEndpoint("[::1]:2379").description == "http://[::1]:2379")
        #expect(throws: CoordinationError.self) { try GatewayEndpoint("https://e:2379") }
        #expect(throws: CoordinationError.self) { try GatewayEndpoint("http://e:0") }
        #expect(throws: CoordinationError.self) { try GatewayEndpoint("e") }
        #expect(throws: CoordinationError.self) { try EtcdClient(endpoints: []) }
        let timing = try LeaseTiming(ttlSeconds: 5, keepAlivePeriod: .seconds(1), retry: .seconds(2))
        #expect(timing.actingWindow == .seconds(5))
        let broken = #expect(throws: CoordinationError.self) { try LeaseTiming(ttlSeconds: 4, keepAlivePeriod: .seconds(1), retry: .seconds(2)) }
        #expect(broken?.kind == .invalidSettings)
    }
}
