import Access

/// How a key's principal is written in its public certificate's metadata, and read back:
/// `role = "learner"`, `learners = "ada,bob"` (learner keys only: 1 to ``maximumLearners``
/// learner ids, comma-separated) and an optional `name`. The key's name is its file's name.
public enum CertificatePrincipal {
    /// The metadata name of the role.
    public static let roleName = "role"
    /// The metadata name of a learner key's learners.
    public static let learnersName = "learners"
    /// The metadata name CZMQ's tools use for a human-readable name.
    public static let nameName = "name"
    /// The most learners one learner key may act for.
    public static let maximumLearners = 32

    /// The principal a certificate's `metadata` describes, for the key called `name`.
    /// - Throws: ``CertificatePrincipalError`` naming the metadata at fault: no or an unknown
    ///   role; a learner key without learners; learners on another role; a bad learner list.
    public static func principal(named name: String, metadata: [String: String]) throws(CertificatePrincipalError) -> Principal {
        guard let text = metadata[roleName] else {
            throw CertificatePrincipalError(metadata: roleName, "is required (one of \(roleList))")
        }
        guard let role = Role(rawValue: text) else {
            throw CertificatePrincipalError(metadata: roleName, "'\(text)' is not one of \(roleList)")
        }
        let list = metadata[learnersName]
        guard role == .learner else {
            if list != nil { throw CertificatePrincipalError(metadata: learnersName, "is only for role learner, not \(role.rawValue)") }
            return Principal(name: name, role: role)
        }
        guard let list else { throw CertificatePrincipalError(metadata: learnersName, "is required for role learner") }
        return Principal(name: name, role: role, learners: try learners(from: list))
    }

    /// The learners of a `learners` list: comma-separated learner ids (spaces around them are
    /// ignored), 1 to ``maximumLearners`` of them.
    /// - Throws: ``CertificatePrincipalError`` naming the first bad entry.
    public static func learners(from list: String) throws(CertificatePrincipalError) -> Set<String> {
        let entries = list.split(separator: ",", omittingEmptySubsequences: false).map { $0.trimmingSpaces() }
        guard entries.count <= maximumLearners else {
            throw CertificatePrincipalError(metadata: learnersName, "lists \(entries.count) learners; at most \(maximumLearners)")
        }
        for entry in entries where !Identifier.isValid(entry) {
            throw CertificatePrincipalError(
                metadata: learnersName,
                "'\(entry.prefix(Identifier.maximumLength + 1))' is not a learner id (1–\(Identifier.maximumLength) of A–Z a–z 0–9 . _ - : @ +)")
        }
        return Set(entries)
    }

    /// Why `name` cannot name a key (a certificate file in a key directory), or `nil` when it
    /// can: a key name is an identifier (as learner ids are) that does not start with `.` (a
    /// hidden file) or end with `_secret` (a secret file).
    public static func refusal(ofKeyName name: String) -> String? {
        guard Identifier.isValid(name) else { return "a key name is 1–\(Identifier.maximumLength) of A–Z a–z 0–9 . _ - : @ +" }
        guard !name.hasPrefix(".") else { return "a key name may not start with '.'" }
        guard !name.hasSuffix("_secret") else { return "a key name may not end with '_secret'" }
        return nil
    }

    /// The metadata that describes `principal`: what `lyceum keys generate` writes.
    public static func metadata(for principal: Principal) -> [String: String] {
        var metadata = [nameName: principal.name, roleName: principal.role.rawValue]
        if principal.role == .learner { metadata[learnersName] = principal.learners.sorted().joined(separator: ",") }
        return metadata
    }

    private static let roleList = Role.allCases.map(\.rawValue).joined(separator: ", ")
}

/// Certificate metadata that does not describe a principal: which entry, and why.
public struct CertificatePrincipalError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The metadata name at fault, e.g. `learners`.
    public let metadata: String
    /// What is wrong with it.
    public let message: String

    /// A refusal of metadata `metadata`.
    public init(metadata: String, _ message: String) {
        self.metadata = metadata
        self.message = message
    }

    /// `metadata learners: …`.
    public var description: String { "metadata \(metadata): \(message)" }
}

extension Substring {
    fileprivate func trimmingSpaces() -> String {
        String(drop { $0 == " " }.reversed().drop { $0 == " " }.reversed())
    }
}
