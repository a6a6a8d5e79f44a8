import Access
import Foundation
@testable import LyceumServer
import LyceumLogging
import LyceumTestSupport
import Security
import Testing
import ZeroMQ

/// The process's own key: an `app` caller of itself unless its authorised keys list it, in
/// which case it keeps its role there (workers of one host sharing one `worker` key admit one
/// another on their replication links).
@Suite struct OwnKeyDirectoryTests {
    @Test func theOwnKeyIsAnAppUnlessTheDirectoryListsIt() throws {
        let keys = try CurveKeys().make("w1", role: "worker").make("self", role: "worker", authorize: false)
        let ring = try KeyRing(directory: keys.authorized, logger: Logger(component: "keys"))
        let listed = try Z85.encode(try CurveCertificate.load(from: keys.publicPath("w1")).publicKey)
        let unlisted = try Z85.encode(try CurveCertificate.load(from: keys.publicPath("self")).publicKey)
        #expect(OwnKeyDirectory(keyRing: ring, ownKey: unlisted).principal(forKey: unlisted)?.role == .app)
        #expect(OwnKeyDirectory(keyRing: ring, ownKey: listed).principal(forKey: listed)?.role == .worker)
        #expect(OwnKeyDirectory(keyRing: ring, ownKey: listed).principal(forKey: unlisted) == nil)
    }
}
