import JSON

/// Who holds a partition, as the nodes' `describe` answers tell it: the nodes serving it (or
/// giving it up), and the nodes that renamed their copy away in a move to a given target, whose
/// `move` finishes that move.
struct PartitionHolders: Equatable {
    /// Nodes whose `held` lists the partition.
    var holders: [String] = []
    /// Nodes whose `moved` lists a copy of the partition renamed away for the target.
    var givenUp: [String] = []

    /// The holders of `partition` of `service` in `describes` (node → its `describe` result),
    /// with `givenUp` counting only moves to `target`.
    init(service: String, partition: Int, target: String, describes: [String: JSONValue]) {
        for (node, describe) in describes.sorted(by: { $0.key < $1.key }) {
            if Self.lists(describe["held"], service: service, partition: partition, to: nil) { holders.append(node) }
            if Self.lists(describe["moved"], service: service, partition: partition, to: target) { givenUp.append(node) }
        }
    }

    /// The node to send the `move` to, or why there is none.
    func source(target: String) -> Result<String, PartitionMoveCommand.Refusal> {
        switch (holders.count, givenUp.count) {
        case (1, _): holders == [target] ? .failure(.alreadyThere) : .success(holders[0])
        case (0, 1): .success(givenUp[0])
        case (0, 0): .failure(.noHolder)
        default: .failure(.ambiguous(holders + givenUp))
        }
    }

    private static func lists(_ entries: JSONValue?, service: String, partition: Int, to target: String?) -> Bool {
        guard case .array(let entries)? = entries else { return false }
        return entries.contains { entry in
            entry["service"] == .string(service) && entry["partition"] == .integer(partition)
                && (target.map { entry["to"] == .string($0) } ?? true)
        }
    }
}
