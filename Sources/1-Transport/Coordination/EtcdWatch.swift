import JSON

/// One event of a watch: a key put or deleted at a revision.
public struct WatchEvent: Sendable, Equatable {
    /// Whether the key was put or deleted.
    public enum Kind: Sendable, Equatable {
        /// The key was created or changed.
        case put
        /// The key was deleted (by a client, or with its expired lease).
        case delete
    }

    /// What happened.
    public let kind: Kind
    /// The key after a put; after a deletion, its key and the deletion's `modRevision`.
    public let keyValue: KeyValue
}

/// A stream of changes to a key or a prefix, on one connection to one etcd member (etcd's
/// `/v3/watch`: newline-separated JSON messages in a chunked body). Owned by one thread; its
/// connection is closed when it is released. A broken stream throws: the owner opens a new
/// watch from the revision after the last one it saw.
public final class EtcdWatch {
    /// The member this watch reads from.
    public let endpoint: GatewayEndpoint
    private let connection: GatewayConnection
    private let limits: GatewayLimits
    /// Bytes of a message not yet ended by its newline.
    private var pending: [UInt8] = []
    /// The revision of the store when the watch was created.
    public private(set) var createdRevision: Int64 = 0

    init(endpoint: GatewayEndpoint, limits: GatewayLimits, body: [UInt8]) throws(CoordinationError) {
        self.endpoint = endpoint
        self.limits = limits
        connection = try GatewayConnection(to: endpoint, limits: limits, operation: "/v3/watch")
        let deadline = ContinuousClock.now + limits.requestTimeout
        try connection.post("/v3/watch", body: body, deadline: deadline)
        let head = try connection.readHead(deadline: deadline)
        guard head.status == 200, head.chunked else {
            let body = try? connection.readBody(head, deadline: deadline)
            if let body { _ = try EtcdClient.decode(body, endpoint: endpoint.description, operation: "/v3/watch") }
            throw CoordinationError(.malformedResponse, endpoint: endpoint.description, operation: "/v3/watch", detail: "HTTP status \(head.status), not a stream")
        }
        // The first message confirms the watch.
        guard let first = try nextMessage(deadline: deadline) else {
            throw CoordinationError(.timedOut, endpoint: endpoint.description, operation: "/v3/watch", detail: "the watch was not confirmed in time")
        }
        createdRevision = GatewayJSON.int64(first["header"], "revision") ?? 0
        if first["created"] != .bool(true) { throw failure(.malformedResponse, "the first message did not confirm the watch") }
    }

    private func failure(_ kind: CoordinationError.Kind, _ detail: String) -> CoordinationError {
        CoordinationError(kind, endpoint: endpoint.description, operation: "/v3/watch", detail: detail)
    }

    /// The events of the next message, waiting at most `timeout`.
    /// - Returns: `nil` when nothing arrived in time (the watch is still open).
    /// - Throws: when the stream ends or breaks, sends something that is not etcd's, or etcd
    ///   cancels the watch (its start revision was compacted: the detail says from which).
    public func next(timeout: Duration) throws(CoordinationError) -> [WatchEvent]? {
        let deadline = ContinuousClock.now + timeout
        while true {
            guard let message = try nextMessage(deadline: deadline) else { return nil }
            if message["canceled"] == .bool(true) {
                let compacted = GatewayJSON.int64(message, "compact_revision") ?? 0
                throw failure(.rejected, "the watch was canceled (compacted up to revision \(compacted))")
            }
            guard case .array(let items)? = message["events"] else { continue }  // a progress notice
            var events: [WatchEvent] = []
            for item in items {
                guard let keyValue = item["kv"].flatMap(GatewayJSON.keyValue) else { throw failure(.malformedResponse, "an event without a key") }
                events.append(WatchEvent(kind: item["type"] == .string("DELETE") ? .delete : .put, keyValue: keyValue))
            }
            return events
        }
    }

    /// The `result` of the next newline-ended message, or `nil` when `deadline` passed first.
    private func nextMessage(deadline: ContinuousClock.Instant) throws(CoordinationError) -> JSONValue? {
        while true {
            if let end = pending.firstIndex(of: UInt8(ascii: "\n")) {
                let message = Array(pending[..<end])
                pending.removeSubrange(...end)
                if message.allSatisfy({ $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\r") }) { continue }
                let value = try EtcdClient.decode(message, endpoint: endpoint.description, operation: "/v3/watch")
                guard let result = value["result"] else { throw failure(.malformedResponse, "a message without result") }
                return result
            }
            let piece: ArraySlice<UInt8>?
            do throws(CoordinationError) {
                piece = try connection.nextChunkBytes(limit: limits.maxMessageBytes - pending.count, deadline: deadline)
            } catch where error.kind == .timedOut {
                return nil
            } catch where error.kind == .responseTooLarge {
                throw failure(.responseTooLarge, "a message over \(limits.maxMessageBytes) bytes")
            }
            guard let piece else { throw failure(.connectionLost, "the watch stream ended") }
            pending.append(contentsOf: piece)
            guard pending.count <= limits.maxMessageBytes else { throw failure(.responseTooLarge, "a message over \(limits.maxMessageBytes) bytes") }
        }
    }
}
