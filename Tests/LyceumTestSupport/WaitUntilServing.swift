import Majordomo
import ZeroMQ

/// Waits until the broker at `endpoint` has a worker (or answers itself) for every one of
/// `services`, asking 8/MMI's `mmi.service` every 20 ms: the one way the suites wait for a server
/// they started (`serve`, a broker and its workers, a fake). Under CURVE, `security` is a
/// client of a key that may `manage`, which `mmi.` needs.
/// - Throws: `TestTimeout` naming the services missing at the hang limit `timeout`, followed by
///   `log()` (the server's standard error, say).
public func waitUntilServing(
    _ services: [String], at endpoint: String, security: SocketSecurity = .plaintext, timeout: Duration = .hangLimit,
    log: () -> String = { "" }
) throws {
    let context = try Context()
    var configuration = ClientConfiguration(timeout: .milliseconds(500), attempts: 1)
    configuration.security = security
    let client = Client(endpoint: endpoint, configuration: configuration, context: context)
    defer { client.close() }
    var missing = services
    let serving = eventually(timeout: timeout) {
        missing = missing.filter { (try? client.isRegistered($0)) != true }
        return missing.isEmpty
    }
    guard serving else {
        throw TestTimeout(what: "\(missing.joined(separator: ", ")) to be served at \(endpoint)\n\(log())", limit: timeout)
    }
}
