import JSON
import Journal

/// The replies of recent idempotent writes of one service, so that a retried write (same
/// learner, same `request_id`) gets the original reply instead of applying twice.
///
/// Entries are journal changes in the `requests` collection, committed atomically with the
/// write they answer, so they survive restarts. Retention: recording an entry deletes the
/// learner's oldest in the same commit when the learner holds `maximumPerLearner`, or holds
/// `retainedPerLearner` and the oldest was recorded `retention` or more ago. The age matters
/// because a copy of a request can arrive late: a broker hands a worker the requests it queued
/// while that worker was unreachable, after the client retried elsewhere and went on writing.
public struct RequestLedger: Sendable {
    /// The journal collection of ledger entries; keys are `service/learner/request_id`.
    public static let collection = "requests"
    /// How many request ids per learner and service are remembered whatever their age.
    public static let retainedPerLearner = 64
    /// How many request ids per learner and service are remembered at most, young or old.
    public static let maximumPerLearner = 1024
    /// How long an entry is kept at least (up to `maximumPerLearner`), in milliseconds: longer
    /// than a broker may hold a request (60 s) plus a client's attempts at it.
    public static let retention: Int64 = 600_000

    struct Entry: Sendable {
        /// Order of recording within the learner, to find the oldest.
        let sequence: Int
        /// Milliseconds since 1970 when it was recorded; nil for entries journaled before
        /// entries carried it, which count as old.
        let recorded: Int64?
        let fingerprint: UInt64
        let reply: [UInt8]
    }

    /// The service whose entries this ledger holds; others in the collection are ignored.
    public let service: String
    private var learners: [String: [String: Entry]] = [:]
    /// The newest value format of a stored entry, the one this build writes. Version 1 is also
    /// what entries stored before values were versioned are.
    public static let valueFormat = 1

    /// An empty ledger for `service`.
    public init(service: String) { self.service = service }

    /// Number of remembered request ids across learners.
    public var count: Int { learners.values.reduce(0) { $0 + $1.count } }

    func entry(learner: String, requestID: String) -> Entry? { learners[learner]?[requestID] }

    /// The changes that remember `reply` for `requestID`, recorded at `now` (milliseconds since
    /// 1970), evicting the learner's oldest entry once it is past retention or the learner is full.
    func recording(_ reply: [UInt8], fingerprint: UInt64, learner: String, requestID: String, now: Int64) -> [JournalChange] {
        let entries = learners[learner] ?? [:]
        let sequence = (entries.values.map(\.sequence).max() ?? 0) + 1
        let entry = Entry(sequence: sequence, recorded: now, fingerprint: fingerprint, reply: reply)
        var changes = [JournalChange.put(Self.collection, key: key(learner, requestID), value: entry.journalValue())]
        if entries.count >= Self.retainedPerLearner, let oldest = entries.min(by: { $0.value.sequence < $1.value.sequence }),
           entries.count >= Self.maximumPerLearner || now - (oldest.value.recorded ?? .min / 2) >= Self.retention {
            changes.append(.delete(Self.collection, key: key(learner, oldest.key)))
        }
        return changes
    }

    /// Applies a `requests` change of this service; ignores any other change.
    /// - Throws: `UndecodableValue` for a key that is not `service/learner/request_id`, or a put
    ///   whose value is not an entry this build reads; the ledger is unchanged then.
    public mutating func apply(_ change: JournalChange) throws(UndecodableValue) {
        guard change.collection == Self.collection, change.key.hasPrefix(service + "/") else { return }
        let rest = change.key.dropFirst(service.count + 1)
        guard let slash = rest.firstIndex(of: "/") else {
            throw UndecodableValue(change, .malformed("the key is not service/learner/request_id"))
        }
        let learner = String(rest[..<slash])
        let requestID = String(rest[rest.index(after: slash)...])
        guard let bytes = change.value else {
            learners[learner]?[requestID] = nil
            if learners[learner]?.isEmpty == true { learners[learner] = nil }
            return
        }
        do throws(ValueDecodingError) {
            learners[learner, default: [:]][requestID] = try Entry(journalValue: bytes)
        } catch {
            throw UndecodableValue(change, error)
        }
    }

    /// Changes that rebuild this ledger.
    public func snapshot() -> [JournalChange] {
        learners.flatMap { learner, entries in
            entries.map { requestID, entry in .put(Self.collection, key: key(learner, requestID), value: entry.journalValue()) }
        }
    }

    private func key(_ learner: String, _ requestID: String) -> String { service + "/" + learner + "/" + requestID }
}

extension RequestLedger.Entry {
    /// The entry as a journal payload, stamped with `RequestLedger.valueFormat`.
    func journalValue() -> [UInt8] {
        var object = JSONObject()
        object.append("value_format", .integer(RequestLedger.valueFormat))
        object.append("sequence", .integer(sequence))
        // An optional field of format 1: builds that predate it ignore it and keep entries by count.
        if let recorded { object.append("recorded", .integer(Int(recorded))) }
        object.append("fingerprint", .integer(Int(bitPattern: UInt(fingerprint))))
        object.append("reply", JSONValue.parsedReply(reply))
        return JSONValue.object(object).serialized()
    }

    /// Decodes a journal payload of any value format up to `RequestLedger.valueFormat`.
    init(journalValue bytes: [UInt8]) throws(ValueDecodingError) {
        // Version 1 is the only format so far; a later one migrates older values here.
        _ = try ValueFormat.version(of: bytes, newest: RequestLedger.valueFormat)
        guard case .success(let value) = Result(catching: { () throws(JSONParseError) in try JSONParser().parse(bytes) })
        else { throw .malformed("not JSON") }
        guard case .integer(let sequence)? = value["sequence"] else { throw .malformed("sequence is missing or not an integer") }
        guard case .integer(let fingerprint)? = value["fingerprint"] else { throw .malformed("fingerprint is missing or not an integer") }
        let reply = try ValueDecodingError.required(value["reply"], "reply")
        var recorded: Int64?
        switch value["recorded"] {
        case nil: recorded = nil
        case .integer(let milliseconds)?: recorded = Int64(milliseconds)
        default: throw .malformed("recorded is not an integer")
        }
        self.init(sequence: sequence, recorded: recorded, fingerprint: UInt64(UInt(bitPattern: fingerprint)), reply: reply.serialized())
    }
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
