import JSON

/// Who holds a partition, as the nodes' `describe` answers tell it: the nodes serving it (or
/// giving it up), and the nodes that renamed their copy away in a move to a given target, whose
/// `move` finishes that move.
public struct PartitionHolders: Equatable, Sendable {
    /// Why no node can be sent the `move`.
    public enum Refusal: Error, Equatable, Sendable {
        /// No node holds the partition, nor gave it up to the target.
        case noHolder
        /// The target holds it already.
        case alreadyThere
        /// More than one node holds it (or gave it up): these.
        case ambiguous([String])
    }

    /// Nodes whose `held` lists the partition.
    public var holders: [String] = []
    /// Nodes whose `moved` lists a copy of the partition renamed away for the target.
    public var givenUp: [String] = []

    /// The holders of `partition` of `service` in `describes` (node → its `describe` result),
    /// with `givenUp` counting only moves to `target`.
    public init(service: String, partition: Int, target: String, describes: [String: JSONValue]) {
        for (node, describe) in describes.sorted(by: { $0.key < $1.key }) {
            if Self.partitions(of: service, in: describe["held"]).contains(partition) { holders.append(node) }
            if Self.partitions(of: service, in: describe["moved"], to: target).contains(partition) { givenUp.append(node) }
        }
    }

    /// The node to send the `move` to, or why there is none.
    public func source(target: String) -> Result<String, Refusal> {
        switch (holders.count, givenUp.count) {
        case (1, _): holders == [target] ? .failure(.alreadyThere) : .success(holders[0])
        case (0, 1): .success(givenUp[0])
        case (0, 0): .failure(.noHolder)
        default: .failure(.ambiguous(holders + givenUp))
        }
    }

    /// The partitions of `service` in a `describe` list (`held`, or `moved` with `to` = `target`).
    public static func partitions(of service: String, in list: JSONValue?, to target: String? = nil) -> [Int] {
        guard case .array(let entries)? = list else { return [] }
        return entries.compactMap { entry in
            guard entry["service"] == .string(service), case .integer(let partition)? = entry["partition"],
                  target.map({ entry["to"] == .string($0) }) ?? true else { return nil }
            return partition
        }
    }
}
