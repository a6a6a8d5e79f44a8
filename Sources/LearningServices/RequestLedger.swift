import JSON
import Journal

/// The replies of recent idempotent writes of one service, so that a retried write (same
/// learner, same `request_id`) gets the original reply instead of applying twice.
///
/// Entries are journal changes in the `requests` collection, committed atomically with the
/// write they answer, so they survive restarts. Retention: the last `retainedPerLearner`
/// request ids of each learner; recording one more deletes the oldest in the same commit.
public struct RequestLedger: Sendable {
    /// The journal collection of ledger entries; keys are `service/learner/request_id`.
    public static let collection = "requests"
    /// How many request ids per learner and service are remembered.
    public static let retainedPerLearner = 64

    struct Entry: Sendable {
        /// Order of recording within the learner, to find the oldest.
        let sequence: Int
        let fingerprint: UInt64
        let reply: [UInt8]
    }

    /// The service whose entries this ledger holds; others in the collection are ignored.
    public let service: String
    private var learners: [String: [String: Entry]] = [:]
    /// Entries whose payload could not be decoded during `apply`; they are skipped.
    public private(set) var undecodableChanges = 0

    /// An empty ledger for `service`.
    public init(service: String) { self.service = service }

    /// Number of remembered request ids across learners.
    public var count: Int { learners.values.reduce(0) { $0 + $1.count } }

    func entry(learner: String, requestID: String) -> Entry? { learners[learner]?[requestID] }

    /// The changes that remember `reply` for `requestID`, evicting the learner's oldest if full.
    func recording(_ reply: [UInt8], fingerprint: UInt64, learner: String, requestID: String) -> [JournalChange] {
        let entries = learners[learner] ?? [:]
        let sequence = (entries.values.map(\.sequence).max() ?? 0) + 1
        let value: JSONValue = [
            "sequence": .integer(sequence), "fingerprint": .integer(Int(bitPattern: UInt(fingerprint))),
            "reply": JSONValue.parsedReply(reply),
        ]
        var changes = [JournalChange.put(Self.collection, key: key(learner, requestID), value: value.serialized())]
        if entries.count >= Self.retainedPerLearner, let oldest = entries.min(by: { $0.value.sequence < $1.value.sequence }) {
            changes.append(.delete(Self.collection, key: key(learner, oldest.key)))
        }
        return changes
    }

    /// Applies a `requests` change of this service; ignores any other change.
    public mutating func apply(_ change: JournalChange) {
        guard change.collection == Self.collection, change.key.hasPrefix(service + "/") else { return }
        let rest = change.key.dropFirst(service.count + 1)
        guard let slash = rest.firstIndex(of: "/") else {
            undecodableChanges += 1
            return
        }
        let learner = String(rest[..<slash])
        let requestID = String(rest[rest.index(after: slash)...])
        guard let bytes = change.value else {
            learners[learner]?[requestID] = nil
            if learners[learner]?.isEmpty == true { learners[learner] = nil }
            return
        }
        guard case .success(let value) = Result(catching: { () throws(JSONParseError) in try JSONParser().parse(bytes) }),
            case .integer(let sequence)? = value["sequence"], case .integer(let fingerprint)? = value["fingerprint"],
            let reply = value["reply"]
        else {
            undecodableChanges += 1
            return
        }
        learners[learner, default: [:]][requestID] = Entry(
            sequence: sequence, fingerprint: UInt64(UInt(bitPattern: fingerprint)), reply: reply.serialized())
    }

    /// Changes that rebuild this ledger.
    public func snapshot() -> [JournalChange] {
        learners.flatMap { learner, entries in
            entries.map { requestID, entry in
                let value: JSONValue = [
                    "sequence": .integer(entry.sequence), "fingerprint": .integer(Int(bitPattern: UInt(entry.fingerprint))),
                    "reply": JSONValue.parsedReply(entry.reply),
                ]
                return .put(Self.collection, key: key(learner, requestID), value: value.serialized())
            }
        }
    }

    private func key(_ learner: String, _ requestID: String) -> String { service + "/" + learner + "/" + requestID }
}

extension JSONValue {
    /// Parses a reply this process serialized; such bytes always parse.
    fileprivate static func parsedReply(_ bytes: [UInt8]) -> JSONValue {
        switch Result(catching: { () throws(JSONParseError) in try JSONParser().parse(bytes) }) {
        case .success(let value): return value
        case .failure(let error): preconditionFailure("stored reply does not parse: \(error)")
        }
    }
}
