import Foundation
import JSON

/// One key of etcd with its value and the revisions that order it.
public struct KeyValue: Sendable, Equatable {
    /// The key, as UTF-8 text (Lyceum writes only text keys).
    public let key: String
    /// The value's bytes.
    public let value: [UInt8]
    /// The revision of the put that created the key (a leader key's epoch).
    public let createRevision: Int64
    /// The revision of the last put to the key.
    public let modRevision: Int64
    /// The lease the key is bound to, 0 when none.
    public let lease: Int64

    /// A key as etcd describes it.
    public init(key: String, value: [UInt8], createRevision: Int64, modRevision: Int64, lease: Int64) {
        self.key = key
        self.value = value
        self.createRevision = createRevision
        self.modRevision = modRevision
        self.lease = lease
    }
}

/// A lease etcd granted: keys bound to it are deleted when it expires.
public struct Lease: Sendable, Equatable {
    /// Its id, unique in the cluster.
    public let id: Int64
    /// The time to live etcd granted, in seconds (etcd may raise a request below its minimum).
    public let ttlSeconds: Int
}

/// Reading the gateway's JSON: 64-bit numbers come as strings, zero values are left out, bytes
/// are base64. Every reader names what it could not read.
enum GatewayJSON {
    /// `name`'s 64-bit integer, `0` when absent (etcd omits zero values).
    static func int64(_ object: JSONValue?, _ name: String) -> Int64? {
        switch object?[name] {
        case nil, .null?: 0
        case .string(let text)?: Int64(text)
        case .integer(let number)?: Int64(number)
        default: nil
        }
    }

    /// `name`'s base64 bytes, empty when absent.
    static func bytes(_ object: JSONValue?, _ name: String) -> [UInt8]? {
        switch object?[name] {
        case nil, .null?: []
        case .string(let text)?: Data(base64Encoded: text).map { Array($0) }
        default: nil
        }
    }

    static func base64(_ text: String) -> JSONValue { .string(Data(text.utf8).base64EncodedString()) }
    static func base64(_ bytes: [UInt8]) -> JSONValue { .string(Data(bytes).base64EncodedString()) }

    /// A `KeyValue` from one of a response's `kvs`, or `nil` when a member is not what etcd sends.
    static func keyValue(_ object: JSONValue) -> KeyValue? {
        guard let key = bytes(object, "key"), let value = bytes(object, "value"),
            let created = int64(object, "create_revision"), let modified = int64(object, "mod_revision"),
            let lease = int64(object, "lease")
        else { return nil }
        return KeyValue(key: String(decoding: key, as: UTF8.self), value: value, createRevision: created, modRevision: modified, lease: lease)
    }

    /// The key just after every key that starts with `prefix`: a prefix's `range_end`.
    static func rangeEnd(ofPrefix prefix: String) -> [UInt8] {
        var end = Array(prefix.utf8)
        while let last = end.last {
            if last < 0xFF {
                end[end.count - 1] = last + 1
                return end
            }
            end.removeLast()
        }
        return [0]
    }
}
