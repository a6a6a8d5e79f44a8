import JSON
import Partitions

/// The last `move` outcomes a source node gave, kept in `DATA/partition-moves.json` so that a
/// `move` sent again with the same `move_id` after the source restarted gets the outcome it
/// had, not a second move. Rewritten durably after each move (a temporary file, fsync, rename,
/// fsync of the directory): a crash leaves the previous list or the new one.
public struct PartitionMoveOutcomeFile: Sendable {
    /// One finished move: its id, what it moved where, and the reply frame it was answered with.
    struct Outcome: Equatable {
        let id: String
        let ticket: PartitionMoveTicket
        let reply: [UInt8]
    }

    /// The file's name in the data directory.
    static let fileName = "partition-moves.json"
    /// The most bytes the file may have; a larger one is refused unread.
    static let maximumBytes = 4 << 20

    /// The file's path.
    let path: String

    /// The file of the data directory `dataDirectory`.
    public init(dataDirectory: String) {
        path = dataDirectory + "/" + Self.fileName
    }

    /// The outcomes in the file, oldest first; none when there is no file.
    /// - Throws: `PartitionLayoutError` naming the file when it cannot be read or is not such a list.
    func read() throws(PartitionLayoutError) -> [Outcome] {
        guard LayoutFiles.exists(path) else { return [] }
        let bytes = try LayoutFiles.contents(of: path, limit: Self.maximumBytes)
        do {
            var file = try JSONObjectReader(JSONParser(maxBytes: Self.maximumBytes, maxDepth: 4).parse(bytes))
            let outcomes = try file.array("moves").map { entry throws(JSONReadError) in
                var move = try JSONObjectReader(entry.value, path: entry.path)
                let outcome = Outcome(
                    id: try move.string("move_id", length: 1...256),
                    ticket: PartitionMoveTicket(
                        service: try move.string("service", length: 1...64), partition: try move.integer("partition", in: 0...Int(Int32.max)),
                        from: try move.string("from", length: 0...256), to: try move.string("to", length: 1...256)),
                    reply: Array(try move.string("reply").utf8))
                try move.rejectUnknownMembers()
                return outcome
            }
            try file.rejectUnknownMembers()
            return outcomes
        } catch {
            throw PartitionLayoutError(path: path, "is not a list of partition move outcomes: \(error)")
        }
    }

    /// Replaces the file's list with `outcomes`, durably.
    func write(_ outcomes: [Outcome]) throws(PartitionLayoutError) {
        let moves: [JSONValue] = outcomes.map { outcome in
            var move = JSONObject()
            move.append("move_id", .string(outcome.id))
            move.append("service", .string(outcome.ticket.service))
            move.append("partition", .integer(outcome.ticket.partition))
            move.append("from", .string(outcome.ticket.from))
            move.append("to", .string(outcome.ticket.to))
            move.append("reply", .string(String(decoding: outcome.reply, as: UTF8.self)))
            return .object(move)
        }
        var file = JSONObject()
        file.append("moves", .array(moves))
        try LayoutFiles.replace(path, with: JSONValue.object(file).serialized() + [UInt8(ascii: "\n")])
    }
}
