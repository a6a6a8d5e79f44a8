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
    /// "directory", "last_seq", "bytes", "state"}]}]}`.
    public var json: JSONValue {
        var nodes: [JSONValue] = []
        var owners: [String: [JSONValue]] = [:]
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
                table.append(["service": .string(service), "partition": .integer(partition), "state": .string(state), "owners": .array(holders)])
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
