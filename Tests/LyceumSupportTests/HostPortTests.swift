import LyceumSupport
import Testing

/// `HostPort` reads an etcd member's client URL as the settings and the etcd client both take it.
struct HostPortTests {
    @Test(arguments: [
        ("http://10.0.0.1:2379", "10.0.0.1", 2379), ("10.0.0.1:2379", "10.0.0.1", 2379),
        ("http://[::1]:2379/", "::1", 2379), ("etcd-1.example:2379", "etcd-1.example", 2379),
    ])
    func readsAHostAndAPort(text: String, host: String, port: Int) throws {
        let address = try HostPort(url: text, scheme: "http")
        #expect(address.host == host && Int(address.port) == port)
    }

    @Test(arguments: [
        ("https://e:2379", HostPort.Refusal.scheme("https")), ("e", .form), ("http://:2379", .form), ("http://a/b:1", .form),
        ("http://e:0", .port), ("http://e:65536", .port), ("http://e:x", .port),
    ])
    func refusesWhatIsNotOne(text: String, refusal: HostPort.Refusal) {
        #expect(throws: refusal) { try HostPort(url: text, scheme: "http") }
    }
}
