import JSON
import Synchronization

/// A client of etcd v3's JSON gateway (HTTP/1.1, POST with a JSON body, no gRPC library): leases,
/// keys, transactions comparing revisions, and watches. Each call is bounded in time and size
/// (``GatewayLimits``); a call that cannot reach a member tries the next one, starting from the
/// member that answered last. Thread-safe: every call opens a connection of its own.
public final class EtcdClient: Sendable {
    /// The members' client URLs, in the order they are tried.
    public let endpoints: [GatewayEndpoint]
    /// The time and size limits of every call.
    public let limits: GatewayLimits
    /// The index of the endpoint that answered last.
    private let preferred = Atomic<Int>(0)
    private static let parser = JSONParser(maxBytes: Int.max, maxDepth: 32)

    /// A client of the members at `endpoints` (`http://HOST:PORT`, at least one).
    public init(endpoints: [String], limits: GatewayLimits = GatewayLimits()) throws(CoordinationError) {
        guard !endpoints.isEmpty else {
            throw CoordinationError(.badEndpoint, operation: "configure", detail: "no etcd endpoint given")
        }
        var parsed: [GatewayEndpoint] = []
        for text in endpoints { parsed.append(try GatewayEndpoint(text)) }
        self.endpoints = parsed
        self.limits = limits
    }

    // MARK: Leases

    /// Grants a lease of `ttlSeconds`.
    public func grantLease(ttlSeconds: Int) throws(CoordinationError) -> Lease {
        let (answer, endpoint) = try call("/v3/lease/grant", ["TTL": .integer(ttlSeconds)])
        guard let id = GatewayJSON.int64(answer, "ID"), id != 0, let ttl = GatewayJSON.int64(answer, "TTL"), ttl > 0 else {
            throw malformed(endpoint, "/v3/lease/grant", "no lease ID or TTL")
        }
        return Lease(id: id, ttlSeconds: Int(ttl))
    }

    /// Renews lease `id` once (one POST: several keep-alives in one chunked request do not work
    /// with the gateway), within `timeout` at most.
    /// - Returns: the lease's time to live, in seconds, from now.
    /// - Throws: ``CoordinationError/Kind/leaseExpired`` when etcd no longer has it.
    public func keepAlive(lease id: Int64, timeout: Duration? = nil) throws(CoordinationError) -> Int {
        let (answer, endpoint) = try call("/v3/lease/keepalive", ["ID": .string(String(id))], timeout: timeout, streamed: true)
        guard let ttl = GatewayJSON.int64(answer, "TTL") else { throw malformed(endpoint, "/v3/lease/keepalive", "TTL is not a number") }
        guard ttl > 0 else {
            throw CoordinationError(.leaseExpired, endpoint: endpoint, operation: "/v3/lease/keepalive", detail: "lease \(id) has expired or was revoked")
        }
        return Int(ttl)
    }

    /// Revokes lease `id`, deleting every key bound to it. A lease already gone is not an error.
    public func revokeLease(_ id: Int64) throws(CoordinationError) {
        do throws(CoordinationError) {
            _ = try call("/v3/lease/revoke", ["ID": .string(String(id))])
        } catch where error.kind == .rejected && error.detail.contains("lease not found") {
            return
        }
    }

    // MARK: Keys

    /// The key `key`, or `nil` when it does not exist.
    public func get(_ key: String) throws(CoordinationError) -> KeyValue? {
        try range(["key": GatewayJSON.base64(key)], operation: "/v3/kv/range").values.first
    }

    /// Every key starting with `prefix`, in key order, and the store's revision they were read at.
    public func list(prefix: String) throws(CoordinationError) -> (values: [KeyValue], revision: Int64) {
        try range(["key": GatewayJSON.base64(prefix), "range_end": GatewayJSON.base64(GatewayJSON.rangeEnd(ofPrefix: prefix))], operation: "/v3/kv/range")
    }

    private func range(_ request: JSONValue, operation: String) throws(CoordinationError) -> (values: [KeyValue], revision: Int64) {
        let (answer, endpoint) = try call(operation, request)
        let values = try keyValues(answer["kvs"], endpoint: endpoint, operation: operation)
        return (values, GatewayJSON.int64(answer["header"], "revision") ?? 0)
    }

    /// Puts `value` at `key`, bound to `lease` (0: none).
    /// - Returns: the revision of the put.
    @discardableResult
    public func put(_ key: String, value: [UInt8], lease: Int64 = 0) throws(CoordinationError) -> Int64 {
        var request = JSONObject([.init(key: "key", value: GatewayJSON.base64(key)), .init(key: "value", value: GatewayJSON.base64(value))])
        if lease != 0 { request.append("lease", .string(String(lease))) }
        let (answer, _) = try call("/v3/kv/put", .object(request))
        return GatewayJSON.int64(answer["header"], "revision") ?? 0
    }

    /// Deletes `key`.
    /// - Returns: how many keys were deleted (0 or 1).
    @discardableResult
    public func delete(_ key: String) throws(CoordinationError) -> Int {
        let (answer, _) = try call("/v3/kv/deleterange", ["key": GatewayJSON.base64(key)])
        return Int(GatewayJSON.int64(answer, "deleted") ?? 0)
    }

    // MARK: Transactions

    /// Runs `transaction` atomically: its `success` operations if every comparison holds, else
    /// its `failure` operations.
    public func transaction(_ transaction: Transaction) throws(CoordinationError) -> TransactionResult {
        let operation = "/v3/kv/txn"
        let (answer, endpoint) = try call(operation, transaction.json)
        var responses: [TransactionResult.Response] = []
        if case .array(let items)? = answer["responses"] {
            for item in items {
                if let put = item["response_put"] {
                    responses.append(.put(revision: GatewayJSON.int64(put["header"], "revision") ?? 0))
                } else if let range = item["response_range"] {
                    responses.append(.range(try keyValues(range["kvs"], endpoint: endpoint, operation: operation)))
                } else if let deletion = item["response_delete_range"] {
                    responses.append(.delete(count: Int(GatewayJSON.int64(deletion, "deleted") ?? 0)))
                } else {
                    throw malformed(endpoint, operation, "a response of an unknown kind")
                }
            }
        }
        let succeeded: Bool
        switch answer["succeeded"] {
        case nil, .null?: succeeded = false  // a zero value: left out
        case .bool(let flag)?: succeeded = flag
        default: throw malformed(endpoint, operation, "succeeded is not a boolean")
        }
        return TransactionResult(succeeded: succeeded, revision: GatewayJSON.int64(answer["header"], "revision") ?? 0, responses: responses)
    }

    // MARK: Watches

    /// Opens a watch of `key` (every key under it when `prefix`) from `startRevision` (0: from
    /// now on), on the first member that accepts it.
    public func watch(_ key: String, prefix: Bool = false, startRevision: Int64 = 0) throws(CoordinationError) -> EtcdWatch {
        var create = JSONObject([.init(key: "key", value: GatewayJSON.base64(key))])
        if prefix { create.append("range_end", GatewayJSON.base64(GatewayJSON.rangeEnd(ofPrefix: key))) }
        if startRevision > 0 { create.append("start_revision", .string(String(startRevision))) }
        let request: JSONValue = ["create_request": .object(create)]
        let body = request.serialized()
        var lastError: CoordinationError?
        for index in order() {
            do throws(CoordinationError) {
                let watch = try EtcdWatch(endpoint: endpoints[index], limits: limits, body: body)
                preferred.store(index, ordering: .relaxed)
                return watch
            } catch where error.isTransient {
                lastError = error
            }
        }
        throw lastError!
    }

    // MARK: Calls

    /// Endpoint indices, the one that answered last first.
    private func order() -> [Int] {
        let first = preferred.load(ordering: .relaxed)
        return (0..<endpoints.count).map { (first + $0) % endpoints.count }
    }

    /// POSTs `request` to `path` on each member in turn until one answers, within `timeout`
    /// (default: ``GatewayLimits/requestTimeout``) in all.
    /// - Parameter streamed: the answer is one message of a stream (`{"result": …}`).
    /// - Returns: the answer's JSON object and the endpoint that gave it.
    private func call(_ path: String, _ request: JSONValue, timeout: Duration? = nil, streamed: Bool = false) throws(CoordinationError) -> (JSONValue, String) {
        let deadline = ContinuousClock.now + (timeout ?? limits.requestTimeout)
        let body = request.serialized()
        var lastError: CoordinationError?
        for index in order() {
            let endpoint = endpoints[index]
            guard ContinuousClock.now < deadline else { break }
            do throws(CoordinationError) {
                let answer = try exchange(endpoint, path, body, deadline: deadline, streamed: streamed)
                preferred.store(index, ordering: .relaxed)
                return (answer, endpoint.description)
            } catch where error.isTransient {
                lastError = error
            }
        }
        throw lastError ?? CoordinationError(.timedOut, endpoint: endpoints[0].description, operation: path, detail: "no time left to try a member")
    }

    private func exchange(_ endpoint: GatewayEndpoint, _ path: String, _ body: [UInt8], deadline: ContinuousClock.Instant, streamed: Bool) throws(CoordinationError) -> JSONValue {
        let connection = try GatewayConnection(to: endpoint, limits: limits, operation: path)
        try connection.post(path, body: body, deadline: deadline)
        let head = try connection.readHead(deadline: deadline)
        let bytes = try connection.readBody(head, deadline: deadline)
        // A stream's messages are separated by newlines; a keep-alive's answer is its first.
        let message = streamed ? Array(bytes.prefix { $0 != UInt8(ascii: "\n") }) : bytes
        let answer = try Self.decode(message, endpoint: endpoint.description, operation: path)
        guard head.status == 200 else {
            throw CoordinationError(.malformedResponse, endpoint: endpoint.description, operation: path, detail: "HTTP status \(head.status)")
        }
        if streamed {
            guard let result = answer["result"] else { throw malformed(endpoint.description, path, "a stream message without result") }
            return result
        }
        return answer
    }

    /// The JSON object of a message; etcd's error objects (`{"error", "code", "message"}`, sent
    /// with any status) become ``CoordinationError/Kind/rejected``.
    static func decode(_ bytes: [UInt8], endpoint: String, operation: String) throws(CoordinationError) -> JSONValue {
        let value: JSONValue
        do { value = try parser.parse(bytes) } catch {
            throw CoordinationError(.malformedResponse, endpoint: endpoint, operation: operation, detail: "not JSON: \(error)")
        }
        guard case .object = value else { throw CoordinationError(.malformedResponse, endpoint: endpoint, operation: operation, detail: "not a JSON object") }
        if let message = value["message"] ?? value["error"]?["message"] ?? value["error"] {
            let code = GatewayJSON.int64(value, "code") ?? GatewayJSON.int64(value["error"], "grpc_code") ?? 0
            let text: String = if case .string(let text) = message { text } else { "error" }
            throw CoordinationError(.rejected, endpoint: endpoint, operation: operation, detail: "code \(code) \(text)")
        }
        return value
    }

    private func keyValues(_ value: JSONValue?, endpoint: String, operation: String) throws(CoordinationError) -> [KeyValue] {
        guard let value, value != .null else { return [] }
        guard case .array(let items) = value else { throw malformed(endpoint, operation, "kvs is not an array") }
        var values: [KeyValue] = []
        for item in items {
            guard let keyValue = GatewayJSON.keyValue(item) else { throw malformed(endpoint, operation, "a key-value that is not etcd's") }
            values.append(keyValue)
        }
        return values
    }

    private func malformed(_ endpoint: String, _ operation: String, _ detail: String) -> CoordinationError {
        CoordinationError(.malformedResponse, endpoint: endpoint, operation: operation, detail: detail)
    }
}
