import JSON

/// Who owns which partition, from the `describe` answers of the node services a broker lists:
/// what `lyceum status` adds as its `partitions` member. Every partition of every partitioned
/// service is listed with its owners; one with no owner is `unowned`, one with two or more is
/// `contested` (two journals of one partition: a move gone wrong, or a copied directory).
public struct PartitionOwnership: Sendable {
    /// One node service's answer to `describe`, or why there is none.
    public struct NodeAnswer: Sendable {
        /// The node service's name, `lyceum.node.<node>`.
        public let service: String
        /// The `result` of its `describe`, or the reason it has none.
        public let result: Result<JSONValue, NodeError>

        /// The answer of the node service `service`.
        public init(service: String, result: Result<JSONValue, NodeError>) {
            self.service = service
            self.result = result
        }
    }

    /// Why a node service gave no usable `describe` answer.
    public struct NodeError: Error, CustomStringConvertible {
        /// What went wrong, naming the node service.
        public let description: String

        /// The error `description`.
        public init(description: String) { self.description = description }
    }

    /// The partitioned services, e.g. `books`, `progress`.
    public let services: [String]
    /// The partition count: the `partitions` setting, else the count the first node reports.
    public let count: Int?
    /// The nodes' answers.
    public let answers: [NodeAnswer]

    /// The ownership of `count` partitions (`nil`: the count the first node reports) of each
    /// of `services`, from the nodes' `answers`.
    public init(services: [String], count: Int?, answers: [NodeAnswer]) {
        self.services = services
        self.count = count
        self.answers = answers
    }

    /// `{"count", "nodes": [{"service", "node", "held"} or {"service", "error"}], "unowned": n,
    /// "contested": n, "table": [{"service", "partition", "state", "owners": [{"node",
    /// "directory", "last_seq", "bytes", "state"}]}]}`. Replicated partitions (nodes answering
    /// with `replicas`) add to their row `"leader"` (the node leading, or null), `"epoch"` (the
    /// highest reported) and `"replicas": [{"node", "role", "epoch", "last_seq"}]`, with
    /// `"lag_records"` and `"lag_bytes"` for each follower the leader reported; such a node
    /// answer counts its `"replicas"`.
    public var json: JSONValue {
        var nodes: [JSONValue] = []
        var owners: [String: [JSONValue]] = [:]
        var replicas: [String: [Replica]] = [:]
        var reportedCount: Int?
        for answer in answers {
            var node = JSONObject()
            node.append("service", .string(answer.service))
            switch answer.result {
            case .failure(let error):
                node.append("error", .string(error.description))
            case .success(let result):
                var name = answer.service
                if case .string(let text)? = result["node"] { name = text }
                node.append("node", .string(name))
                // A count outside the scheme's (a confused or hostile node) is not believed.
                if case .integer(let partitions)? = result["partitions"], PartitionScheme.counts.contains(partitions) {
                    reportedCount = reportedCount ?? partitions
                }
                var held: [JSONValue] = []
                if case .array(let items)? = result["held"] { held = items }
                node.append("held", .integer(held.count))
                for item in held {
                    guard case .string(let service)? = item["service"], case .integer(let partition)? = item["partition"] else { continue }
                    var owner = JSONObject()
                    owner.append("node", .string(name))
                    for key in ["directory", "last_seq", "bytes", "state"] { owner.append(key, item[key] ?? .null) }
                    owners["\(service).\(partition)", default: []].append(.object(owner))
                }
                if case .array(let items)? = result["replicas"] {
                    node.append("replicas", .integer(items.count))
                    for item in items {
                        guard let replica = Replica(node: name, item) else { continue }
                        replicas["\(replica.service).\(replica.partition)", default: []].append(replica)
                    }
                }
            }
            nodes.append(.object(node))
        }
        let partitions = count ?? reportedCount ?? 0
        var table: [JSONValue] = []
        var unowned = 0
        var contested = 0
        for service in services {
            for partition in 0..<partitions {
                let holders = owners["\(service).\(partition)"] ?? []
                let state = holders.isEmpty ? "unowned" : holders.count == 1 ? "owned" : "contested"
                if holders.isEmpty { unowned += 1 } else if holders.count > 1 { contested += 1 }
                var row = JSONObject()
                row.append("service", .string(service))
                row.append("partition", .integer(partition))
                row.append("state", .string(state))
                row.append("owners", .array(holders))
                if let set = replicas["\(service).\(partition)"] { Replica.describe(set, into: &row) }
                table.append(.object(row))
            }
        }
        var object = JSONObject()
        object.append("count", .integer(partitions))
        object.append("nodes", .array(nodes))
        object.append("unowned", .integer(unowned))
        object.append("contested", .integer(contested))
        object.append("table", .array(table))
        return .object(object)
    }
}

/// One node's report of its replica of a partition (a `describe` answer's `replicas` entry),
/// for the partition's row in ``PartitionOwnership/json``.
private struct Replica {
    let node: String
    let service: String
    let partition: Int
    let object: JSONValue

    /// The entry `value` of node `node`; `nil` when it names no service and partition.
    init?(node: String, _ value: JSONValue) {
        guard case .string(let service)? = value["service"], case .integer(let partition)? = value["partition"] else { return nil }
        self.node = node
        self.service = service
        self.partition = partition
        object = value
    }

    var isLeading: Bool { object["role"] == .string("leading") }

    /// Adds `leader`, `epoch` and `replicas` (each replica's role, epoch and last sequence, with
    /// the lag its leader reports for it) to a partition's row.
    static func describe(_ set: [Replica], into row: inout JSONObject) {
        let leader = set.first(where: \.isLeading)
        var lags: [String: JSONValue] = [:]
        if case .array(let followers)? = leader?.object["followers"] {
            for follower in followers { if case .string(let node)? = follower["node"] { lags[node] = follower } }
        }
        let epochs = set.compactMap { replica -> Int? in if case .integer(let epoch)? = replica.object["epoch"] { epoch } else { nil } }
        row.append("leader", leader.map { .string($0.node) } ?? .null)
        row.append("epoch", epochs.max().map { .integer($0) } ?? .null)
        // A follower whose node did not answer (stopped, cut off) is listed from its leader's report.
        let reported = Set(set.map(\.node))
        let nodes = (reported.union(lags.keys)).sorted()
        let byNode = Dictionary(set.map { ($0.node, $0) }, uniquingKeysWith: { first, _ in first })
        row.append("replicas", .array(nodes.map { node in
            var entry = JSONObject()
            entry.append("node", .string(node))
            for key in ["role", "epoch", "last_seq"] { entry.append(key, byNode[node]?.object[key] ?? .null) }
            if let lag = lags[node] {
                entry.append("lag_records", lag["lag_records"] ?? .null)
                entry.append("lag_bytes", lag["lag_bytes"] ?? .null)
            }
            return .object(entry)
        }))
    }
}
