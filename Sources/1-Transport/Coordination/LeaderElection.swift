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
    /// Nobody leads, but a hand-over names another candidate (by node) as the successor: only
    /// it may take the key until that name expires.
    case waiting(successor: String)
}

/// The etcd operations of one leader key: a campaign creates it bound to the candidate's lease
/// only where none exists; a resignation deletes it only if it is still the same leadership; a
/// hand-over deletes it the same way and names the successor in ``successorKey``, which only
/// that candidate may then take it past.
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

    /// The key naming the successor while a leadership is handed over (`lyceum/successor/books.p7`
    /// for `lyceum/leader/books.p7`), bound to a lease of its own: a successor that never
    /// campaigns holds the others back for that lease's TTL at most.
    public var successorKey: String {
        key.contains("/leader/") ? key.replacing("/leader/", with: "/successor/", maxReplacements: 1) : key + "/successor"
    }

    /// The node a candidate name stands for: its first word (`w1` of `w1 tcp://10.0.0.11:5570`).
    public static func node(of candidate: String) -> String {
        String(candidate.split(separator: " ", maxSplits: 1).first ?? Substring(candidate))
    }

    /// Creates the leader key with `candidate` as its value, bound to `lease`, unless it exists
    /// or a hand-over names another node as the successor (checked in the same transaction: the
    /// successor key must be absent, or name this candidate's node, which then removes it). A
    /// campaign whose answer was lost and that is retried finds its own key (same lease): it is
    /// elected in the epoch it created.
    public func campaign(as candidate: String, lease: Int64) throws(CoordinationError) -> CampaignOutcome {
        let node = Array(Self.node(of: candidate).utf8)
        let named = try client.get(successorKey)
        if let named, named.value != node { return .waiting(successor: String(decoding: named.value, as: UTF8.self)) }
        let result = try client.transaction(Transaction(
            compare: [.createRevision(key: key, equals: 0), named == nil ? .createRevision(key: successorKey, equals: 0) : .value(key: successorKey, equals: node)],
            success: [.put(key: key, value: Array(candidate.utf8), lease: lease)] + (named == nil ? [] : [.delete(key: successorKey)]),
            failure: [.get(key: key), .get(key: successorKey)]
        ))
        if result.succeeded {
            guard case .put(let revision)? = result.responses.first, revision > 0 else {
                throw CoordinationError(.malformedResponse, endpoint: client.endpoints[0].description, operation: "campaign", detail: "a put without its revision")
            }
            return .elected(epoch: revision)
        }
        guard case .range(let values)? = result.responses.first, let current = values.first else {
            // No leader: a hand-over began (or ended) between the read and the transaction.
            if result.responses.count == 2, case .range(let successors) = result.responses[1], let successor = successors.first, successor.value != node {
                return .waiting(successor: String(decoding: successor.value, as: UTF8.self))
            }
            // The successor key went between the read and the transaction: campaign again.
            return try campaign(as: candidate, lease: lease)
        }
        if current.lease == lease, current.value == Array(candidate.utf8) { return .elected(epoch: current.createRevision) }
        return .following(Leadership(leader: String(decoding: current.value, as: UTF8.self), epoch: current.createRevision))
    }

    /// The current leadership, or `nil` when nobody leads.
    public func current() throws(CoordinationError) -> Leadership? {
        try client.get(key).map { Leadership(leader: String(decoding: $0.value, as: UTF8.self), epoch: $0.createRevision) }
    }

    /// Hands the leadership of `epoch` over to the candidate of node `successor`: in one
    /// transaction, if the key still belongs to that leadership, deletes it and names the
    /// successor in ``successorKey``, bound to `lease`.
    /// - Returns: whether it did (false: the leadership had already ended).
    public func handOff(epoch: Int64, to successor: String, lease: Int64) throws(CoordinationError) -> Bool {
        try client.transaction(Transaction(
            compare: [.createRevision(key: key, equals: epoch)],
            success: [.delete(key: key), .put(key: successorKey, value: Array(successor.utf8), lease: lease)]
        )).succeeded
    }

    /// Deletes the leader key if it still belongs to the leadership of `epoch`.
    /// - Returns: whether it did.
    @discardableResult
    public func resign(epoch: Int64) throws(CoordinationError) -> Bool {
        try client.transaction(Transaction(compare: [.createRevision(key: key, equals: epoch)], success: [.delete(key: key)])).succeeded
    }
}
