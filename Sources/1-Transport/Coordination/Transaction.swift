import JSON

/// An etcd transaction: comparisons on keys' revisions or values, the operations run when all
/// hold, and those run otherwise. Leadership uses it to create a leader key only where none
/// exists and to delete one only if it is still the same leadership.
public struct Transaction: Sendable, Equatable {
    /// One comparison on one key.
    public enum Comparison: Sendable, Equatable {
        /// The key's create revision equals `revision` (0: the key does not exist).
        case createRevision(key: String, equals: Int64)
        /// The key's mod revision equals `revision`.
        case modRevision(key: String, equals: Int64)
        /// The key's value equals `value`.
        case value(key: String, equals: [UInt8])
    }

    /// One operation of a branch.
    public enum Operation: Sendable, Equatable {
        /// Puts `value` at `key`, bound to `lease` (0: none).
        case put(key: String, value: [UInt8], lease: Int64)
        /// Reads `key`.
        case get(key: String)
        /// Deletes `key`.
        case delete(key: String)
    }

    /// Every comparison must hold for `success` to run.
    public var compare: [Comparison]
    /// Run when every comparison holds.
    public var success: [Operation]
    /// Run otherwise.
    public var failure: [Operation]

    /// A transaction of these comparisons and branches.
    public init(compare: [Comparison], success: [Operation], failure: [Operation] = []) {
        self.compare = compare
        self.success = success
        self.failure = failure
    }

    /// The gateway's request body.
    var json: JSONValue {
        func member(_ key: String, _ value: JSONValue) -> JSONObject.Member { JSONObject.Member(key: key, value: value) }
        let comparisons: [JSONValue] = compare.map { comparison in
            switch comparison {
            case .createRevision(let key, let revision):
                .object(JSONObject([member("key", GatewayJSON.base64(key)), member("target", "CREATE"), member("result", "EQUAL"), member("create_revision", .string(String(revision)))]))
            case .modRevision(let key, let revision):
                .object(JSONObject([member("key", GatewayJSON.base64(key)), member("target", "MOD"), member("result", "EQUAL"), member("mod_revision", .string(String(revision)))]))
            case .value(let key, let value):
                .object(JSONObject([member("key", GatewayJSON.base64(key)), member("target", "VALUE"), member("result", "EQUAL"), member("value", GatewayJSON.base64(value))]))
            }
        }
        func operations(_ list: [Operation]) -> JSONValue {
            .array(list.map { operation in
                switch operation {
                case .put(let key, let value, let lease):
                    var put = JSONObject([member("key", GatewayJSON.base64(key)), member("value", GatewayJSON.base64(value))])
                    if lease != 0 { put.append("lease", .string(String(lease))) }
                    return .object(JSONObject([member("request_put", .object(put))]))
                case .get(let key):
                    return .object(JSONObject([member("request_range", .object(JSONObject([member("key", GatewayJSON.base64(key))])))]))
                case .delete(let key):
                    return .object(JSONObject([member("request_delete_range", .object(JSONObject([member("key", GatewayJSON.base64(key))])))]))
                }
            })
        }
        return .object(JSONObject([member("compare", .array(comparisons)), member("success", operations(success)), member("failure", operations(failure))]))
    }
}

/// What a transaction did.
public struct TransactionResult: Sendable, Equatable {
    /// One operation's answer, in the order of the branch that ran.
    public enum Response: Sendable, Equatable {
        /// A put, and the store's revision after it.
        case put(revision: Int64)
        /// A read: the keys found.
        case range([KeyValue])
        /// A deletion: how many keys it deleted.
        case delete(count: Int)
    }

    /// Whether every comparison held (the `success` branch ran).
    public let succeeded: Bool
    /// The store's revision after the transaction.
    public let revision: Int64
    /// The answers of the branch that ran.
    public let responses: [Response]
}
