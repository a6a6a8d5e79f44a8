import Access
import JSON
import Journal
import LearningServices
import Partitions

/// A node service request of a partition move, as parsed from its frames: `move` (to the source,
/// from `lyceum partitions move`), `receive` in four steps and `adopt` (to the target, from the
/// source). Shapes in `protocol/partitions.md`, "Moving a partition".
public enum PartitionMoveRequest: Equatable, Sendable {
    /// Move `partition` of `service`, held here, to the node `to`. `id` (`move_id`), chosen by
    /// the command once per move, makes the request recognisable when it is sent again (through
    /// another broker after a timeout): the node answers it with the same move's outcome. With
    /// `leadership` (replicated partitions), only the leadership moves: this node, leading,
    /// hands it over to the replica on `to`.
    case move(PartitionMoveTicket, id: String? = nil, leadership: Bool = false)
    /// Start a fresh incoming copy.
    case begin(PartitionMoveTicket)
    /// One chunk of one file; its bytes are the request's second frame.
    case chunk(PartitionMoveTicket, JournalChunk)
    /// The copy is complete: it must hold exactly these files.
    case finish(PartitionMoveTicket, [JournalFileSummary])
    /// Forget the incoming copy: the source keeps the partition.
    case abort(PartitionMoveTicket)
    /// The source has renamed its copy away: open the received copy, which must hold exactly
    /// these files, and serve it.
    case adopt(PartitionMoveTicket, [JournalFileSummary])

    /// The ops this type parses; the node service hands every request whose `op` is one of them here.
    static let ops: Set<String> = ["move", "receive", "adopt"]

    /// Parses a request's frames: one JSON frame, plus the raw bytes for a `chunk`.
    /// - Throws: `ServiceError` `bad_request` naming the field at fault.
    init(frames: [[UInt8]]) throws(ServiceError) {
        guard let first = frames.first, frames.count <= 2 else {
            throw ServiceError(.badRequest, "a partition move request is one JSON frame (two for a chunk); this one has \(frames.count)")
        }
        do throws(JSONReadError) {
            let value: JSONValue
            do { value = try JSONParser(maxBytes: 64 * 1024, maxDepth: 8).parse(first) } catch {
                throw JSONReadError(path: "$", message: "is not JSON: \(error)")
            }
            var reader = try JSONObjectReader(value)
            let op = try reader.string("op")
            let ticket = try PartitionMoveTicket(reading: &reader, op: op)
            switch op {
            case "move":
                let id = try reader.optionalString("move_id", length: 1...Identifier.maximumLength)
                if let id, !Identifier.isValid(id) {
                    throw JSONReadError(path: reader.path(of: "move_id"), message: "is not a move id (1-\(Identifier.maximumLength) of A-Z a-z 0-9 . _ - : @ +)")
                }
                let leadership: Bool
                switch reader.optionalValue("leadership") {
                case nil: leadership = false
                case .bool(let value)?: leadership = value
                default: throw JSONReadError(path: reader.path(of: "leadership"), message: "must be true or false")
                }
                self = .move(ticket, id: id, leadership: leadership)
            case "adopt":
                self = .adopt(ticket, try Self.summaries(&reader))
            case "receive":
                self = try Self.receive(ticket, step: reader.string("step"), reader: &reader, frames: frames)
            default:
                throw JSONReadError(path: reader.path(of: "op"), message: "is not a partition move op")
            }
            guard frames.count == 1 || { if case .chunk = self { true } else { false } }() else {
                throw JSONReadError(path: "$", message: "only a chunk carries a second frame")
            }
            try reader.rejectUnknownMembers()
        } catch {
            throw ServiceError(error)
        }
    }

    private static func receive(
        _ ticket: PartitionMoveTicket, step: String, reader: inout JSONObjectReader, frames: [[UInt8]]
    ) throws(JSONReadError) -> PartitionMoveRequest {
        switch step {
        case "begin": return .begin(ticket)
        case "abort": return .abort(ticket)
        case "chunk":
            let file = try reader.string("file", length: 1...255)
            let offset = try reader.integer("offset", in: 0...Int.max)
            let crc = try reader.integer("crc32c", in: 0...Int(UInt32.max))
            guard frames.count == 2 else {
                throw JSONReadError(path: "$", message: "a chunk's bytes must follow as a second frame")
            }
            return .chunk(ticket, JournalChunk(file: file, offset: UInt64(offset), bytes: frames[1], crc32c: UInt32(crc)))
        case "finish":
            return .finish(ticket, try summaries(&reader))
        default:
            throw JSONReadError(path: reader.path(of: "step"), message: "must be begin, chunk, finish or abort")
        }
    }

    /// The `files` member: each file's name, length and CRC-32C.
    private static func summaries(_ reader: inout JSONObjectReader) throws(JSONReadError) -> [JournalFileSummary] {
        var summaries: [JournalFileSummary] = []
        for (value, path) in try reader.array("files") {
            var file = try JSONObjectReader(value, path: path)
            summaries.append(JournalFileSummary(
                file: try file.string("file", length: 1...255),
                bytes: UInt64(try file.integer("bytes", in: 0...Int.max)),
                crc32c: UInt32(try file.integer("crc32c", in: 0...Int(UInt32.max)))))
            try file.rejectUnknownMembers()
        }
        return summaries
    }

    /// The request's frames, as the source (or the command) sends them.
    public var frames: [[UInt8]] {
        var writer = JSONObjectWriter()
        let op: String = switch self {
        case .move: "move"
        case .adopt: "adopt"
        case .begin, .chunk, .finish, .abort: "receive"
        }
        writer.member("op", op)
        switch self {
        case .move(let ticket, let id, let leadership):
            ticket.write(to: &writer)
            if let id { writer.member("move_id", id) }
            if leadership { writer.member("leadership", true) }
        case .begin(let ticket):
            ticket.write(to: &writer)
            writer.member("step", "begin")
        case .abort(let ticket):
            ticket.write(to: &writer)
            writer.member("step", "abort")
        case .chunk(let ticket, let chunk):
            ticket.write(to: &writer)
            writer.member("step", "chunk")
            writer.member("file", chunk.file)
            writer.member("offset", Int(chunk.offset))
            writer.member("crc32c", Int(chunk.crc32c))
            return [writer.finish(), chunk.bytes]
        case .finish(let ticket, let summaries):
            ticket.write(to: &writer)
            writer.member("step", "finish")
            Self.write(summaries, to: &writer)
        case .adopt(let ticket, let summaries):
            ticket.write(to: &writer)
            Self.write(summaries, to: &writer)
        }
        return [writer.finish()]
    }
}

extension PartitionMoveRequest {
    private static func write(_ summaries: [JournalFileSummary], to writer: inout JSONObjectWriter) {
        writer.member("files", objects: summaries) { file, summary in
            file.member("file", summary.file)
            file.member("bytes", Int(summary.bytes))
            file.member("crc32c", Int(summary.crc32c))
        }
    }
}

/// Which partition a move concerns and between which nodes: the members every move request has.
public struct PartitionMoveTicket: Equatable, Sendable {
    /// The partitioned service (`books`, `progress`).
    let service: String
    /// The partition number.
    let partition: Int
    /// The node giving the partition up (empty in `move`, which goes to it).
    let from: String
    /// The node taking it.
    let to: String

    public init(service: String, partition: Int, from: String, to: String) {
        self.service = service
        self.partition = partition
        self.from = from
        self.to = to
    }

    /// Reads `service`, `partition`, `to` and (except for `move`) `from`.
    init(reading reader: inout JSONObjectReader, op: String) throws(JSONReadError) {
        service = try reader.string("service", length: 1...64)
        partition = try reader.integer("partition", in: 0...4095)
        from = op == "move" ? "" : try reader.string("from", length: 1...Identifier.maximumLength)
        to = try reader.string("to", length: 1...Identifier.maximumLength)
        for (key, name) in [("to", to), ("from", from)] where !name.isEmpty && !Identifier.isValid(name) {
            throw JSONReadError(path: reader.path(of: key), message: "is not a node name (1-\(Identifier.maximumLength) of A-Z a-z 0-9 . _ - : @ +)")
        }
    }

    func write(to writer: inout JSONObjectWriter) {
        writer.member("service", service)
        writer.member("partition", partition)
        if !from.isEmpty { writer.member("from", from) }
        writer.member("to", to)
    }

    /// `books.p3`, for messages.
    var name: String { PartitionName.service(service, partition: partition) }

}
