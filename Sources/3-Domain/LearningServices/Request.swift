import Access
import JSON
import Partitions

/// One parsed request frame: the operation, the optional idempotency key, and a reader over
/// the operation's parameters that refuses unknown fields once the operation has read its own.
public struct Request {
    /// The operation name, `$.op`.
    public let op: String
    /// The contract version the request states, `$.v`; `nil` when it states none (the newest).
    public let version: Int?
    /// The client's idempotency key, `$.request_id`, when given.
    public let requestID: String?
    /// The remaining members; `op`, `request_id` and `v` are already consumed.
    public var parameters: JSONObjectReader
    /// A hash of the whole request, telling a retry from a different request with the same id;
    /// computed only when `requestID` is present.
    let fingerprint: UInt64

    /// Parses and checks the envelope of a request frame.
    public init(_ bytes: [UInt8]) throws(ServiceError) {
        guard bytes.count <= Contract.maxRequestBytes else {
            throw ServiceError(.tooLarge, "the request is \(bytes.count) bytes; the limit is \(Contract.maxRequestBytes)")
        }
        let value: JSONValue
        do {
            value = try JSONParser(maxBytes: Contract.maxRequestBytes, maxDepth: Contract.maxRequestDepth).parse(bytes)
        } catch {
            throw ServiceError(.badRequest, "the request is not valid JSON: \(error)")
        }
        do throws(JSONReadError) {
            var reader = try JSONObjectReader(value)
            version = try reader.optionalInteger("v")
            if let version, !Contract.versions.contains(version) {
                throw JSONReadError(
                    path: "$.v", message: "names contract version \(version); this server speaks versions \(Contract.versions.lowerBound) to \(Contract.versions.upperBound)")
            }
            op = try reader.string("op", length: 1...64)
            requestID = try reader.optionalString("request_id", length: 1...128)
            if let requestID, !Identifier.hasOnlyAllowedBytes(requestID) {
                throw JSONReadError(path: "$.request_id", message: "may contain only letters, digits and . _ - : @ +")
            }
            parameters = reader
        } catch {
            throw ServiceError(error)
        }
        // Only idempotent writes need the hash; reads skip the re-serialization. Members are
        // hashed in key order so that a retry that reorders them is still the same request.
        fingerprint = requestID == nil ? 0 : Request.fnv1a(Request.sortedMembers(value).serialized())
    }

    /// Throws unless the request lacks `request_id`: only writes take one.
    public func refuseRequestID() throws(ServiceError) {
        guard requestID == nil else {
            throw ServiceError(.badRequest, "$.request_id is not a known field of \(op), which is not a write", field: "$.request_id")
        }
    }

    /// Reads the parameters with `body`, then refuses members the operation did not read.
    public mutating func read<T>(_ body: (inout JSONObjectReader) throws(JSONReadError) -> T) throws(ServiceError) -> T {
        do throws(JSONReadError) {
            let result = try body(&parameters)
            try parameters.rejectUnknownMembers()
            return result
        } catch {
            throw ServiceError(error)
        }
    }

    private static func sortedMembers(_ value: JSONValue) -> JSONValue {
        guard case .object(let object) = value else { return value }
        return .object(JSONObject(object.members.sorted { $0.key < $1.key }))
    }

    /// The 64-bit FNV-1a hash of `bytes`: stable across processes, unlike `Hasher`.
    static func fnv1a(_ bytes: [UInt8]) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        return hash
    }

    /// The request in `frame`; or `nil`, once `completion` has been given the error reply of a
    /// frame that is no request. The one prologue of the services' `handleWithCommit`: an error
    /// is answered from the request as parsed, never from a copy made beforehand for it (a copy
    /// and its release were about 200 instructions a request, issue 26).
    static func parsed<Event>(_ frame: [UInt8], answeringErrorsWith completion: (HandledRequest<Event>) -> Void) -> Request? {
        do throws(ServiceError) {
            return try Request(frame)
        } catch {
            completion(HandledRequest(error, to: nil))
            return nil
        }
    }
}

extension JSONObjectReader {
    /// The required `learner` member: 1–128 of the identifier characters, and when the service
    /// instance holds one partition (`partition`), a learner of that partition.
    mutating func learner(in partition: OwnedPartition?) throws(JSONReadError) -> String {
        let learner = try string("learner", length: 1...Identifier.maximumLength)
        guard Identifier.hasOnlyAllowedBytes(learner) else {
            throw JSONReadError(path: path(of: "learner"), message: "may contain only letters, digits and . _ - : @ +")
        }
        if let refusal = partition?.refusal(ofLearner: learner) {
            throw JSONReadError(path: path(of: "learner"), message: refusal)
        }
        return learner
    }

    /// The required id member `key` (a book, course or lesson id): 1–`Contract.maxIDLength`
    /// characters, so that no id costs more than that to look up or to quote in an error.
    mutating func id(_ key: String) throws(JSONReadError) -> String {
        try string(key, length: 1...Contract.maxIDLength)
    }

    /// An optional page size within `1...maximum`, else `standard`.
    mutating func limit(standard: Int, maximum: Int) throws(JSONReadError) -> Int {
        try optionalInteger("limit", in: 1...maximum) ?? standard
    }
}
