import Foundation
import ZeroMQ

/// CURVE key pairs of a test, as `lyceum keys generate` writes them (zcert files with a `name`,
/// a `role` and `learners`), in a temporary directory removed when released: `keys/NAME` and
/// `keys/NAME_secret`, and `authorized/`, a directory of authorised public keys.
public final class CurveKeys {
    /// Where the keys are.
    public let directory: TemporaryDirectory
    /// The directory of authorised public keys, for `--authorized-keys`.
    public var authorized: String { directory.path + "/authorized" }

    /// An empty set.
    public init() throws {
        directory = try TemporaryDirectory()
        for folder in ["keys", "authorized"] {
            try FileManager.default.createDirectory(atPath: directory.path + "/" + folder, withIntermediateDirectories: true)
        }
    }

    deinit { directory.remove() }

    /// Makes the pair `name` with `role`, authorised unless `authorize` is false.
    @discardableResult
    public func make(_ name: String, role: String, learners: String? = nil, authorize: Bool = true) throws -> CurveKeys {
        var metadata = ["name": name, "role": role]
        metadata["learners"] = learners
        try CurveCertificate(keyPair: try CurveKeyPair.generate(), metadata: metadata).save(to: publicPath(name))
        if authorize { try FileManager.default.copyItem(atPath: publicPath(name), toPath: authorized + "/" + name) }
        return self
    }

    /// The public certificate of `name`.
    public func publicPath(_ name: String) -> String { directory.path + "/keys/" + name }
    /// The secret certificate of `name`.
    public func secretPath(_ name: String) -> String { publicPath(name) + "_secret" }
    /// Removes `name` from the authorised keys.
    public func revoke(_ name: String) throws { try FileManager.default.removeItem(atPath: authorized + "/" + name) }

    /// `--curve-secret-key` and `--curve-server-key` of a client with key `name`.
    public func client(_ name: String) -> [String] {
        ["--curve-secret-key", secretPath(name), "--curve-server-key", publicPath("server")]
    }
}
