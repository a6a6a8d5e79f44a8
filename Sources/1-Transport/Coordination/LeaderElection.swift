/// Who leads one resource (a partition) and in which epoch. The epoch is the leader key's
/// create revision: etcd's revisions only grow, so every new leadership of a key has a higher
/// epoch than any before it, and the epoch is the fencing token the followers check.
public struct Leadership: Sendable, Equatable, CustomStringConvertible {
    /// The leader's candidate name (the leader key's value).
    public let leader: String
    /// The leader key's create revision.
    public let epoch: Int64

    /// `leader` leading in `epoch`.
    public init(leader: String, epoch: Int64) {
        self.leader = leader
        self.epoch = epoch
    }

    /// `leader@epoch`.
    public var description: String { "\(leader)@\(epoch)" }
}

/// What a campaign found.
public enum CampaignOutcome: Sendable, Equatable {
    /// The candidate now leads, in this epoch.
    case elected(epoch: Int64)
    /// Another leadership holds the key.
    case following(Leadership)
}

/// The etcd operations of one leader key: a campaign creates it bound to the candidate's lease
/// only where none exists; a resignation deletes it only if it is still the same leadership.
public struct LeaderElection: Sendable {
    /// The client it talks through.
    public let client: EtcdClient
    /// The leader key (`lyceum/leader/books.p7`).
    public let key: String

    /// The election of `key`.
    public init(client: EtcdClient, key: String) {
        self.client = client
        self.key = key
    }

    /// Creates the leader key with `candidate` as its value, bound to `lease`, unless it exists.
    /// A campaign whose answer was lost and that is retried finds its own key (same lease): it
    /// is elected in the epoch it created.
    public func campaign(as candidate: String, lease: Int64) throws(CoordinationError) -> CampaignOutcome {
        let result = try client.transaction(Transaction(
            compare: [.createRevision(key: key, equals: 0)],
            success: [.put(key: key, value: Array(candidate.utf8), lease: lease)],
            failure: [.get(key: key)]
        ))
        if result.succeeded {
            guard case .put(let revision)? = result.responses.first, revision > 0 else {
                throw CoordinationError(.malformedResponse, endpoint: client.endpoints[0].description, operation: "campaign", detail: "a put without its revision")
            }
            return .elected(epoch: revision)
        }
        guard case .range(let values)? = result.responses.first, let current = values.first else {
            // Deleted between the comparison and the read: impossible in one transaction; a
            // gateway that says so is not etcd.
            throw CoordinationError(.malformedResponse, endpoint: client.endpoints[0].description, operation: "campaign", detail: "the comparison failed but the key is absent")
        }
        if current.lease == lease, current.value == Array(candidate.utf8) { return .elected(epoch: current.createRevision) }
        return .following(Leadership(leader: String(decoding: current.value, as: UTF8.self), epoch: current.createRevision))
    }

    /// The current leadership, or `nil` when nobody leads.
    public func current() throws(CoordinationError) -> Leadership? {
        try client.get(key).map { Leadership(leader: String(decoding: $0.value, as: UTF8.self), epoch: $0.createRevision) }
    }

    /// Deletes the leader key if it still belongs to the leadership of `epoch`.
    /// - Returns: whether it did.
    @discardableResult
    public func resign(epoch: Int64) throws(CoordinationError) -> Bool {
        try client.transaction(Transaction(compare: [.createRevision(key: key, equals: epoch)], success: [.delete(key: key)])).succeeded
    }
}
