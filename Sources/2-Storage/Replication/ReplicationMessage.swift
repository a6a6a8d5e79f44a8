import JSON
import Journal

/// Where a replica's log ends: the epoch that wrote its last record, and that record's sequence
/// number. Positions order lexicographically, epoch first: the greatest position among a
/// majority holds every acknowledged record (protocol/replication.md).
public struct LogPosition: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The epoch of the last record (0 before any epoch).
    public let epoch: Int64
    /// The last record's sequence number.
    public let sequence: UInt64

    /// The position of a log ending with record `sequence` written in `epoch`.
    public init(epoch: Int64, sequence: UInt64) {
        self.epoch = epoch
        self.sequence = sequence
    }

    /// Epoch first, then sequence.
    public static func < (lhs: LogPosition, rhs: LogPosition) -> Bool {
        (lhs.epoch, lhs.sequence) < (rhs.epoch, rhs.sequence)
    }

    /// `epoch:sequence`.
    public var description: String { "\(epoch):\(sequence)" }
}

/// One message of the replication channel (protocol/replication.md, *Replication messages*):
/// a JSON frame, followed by one frame per record line for `append`.
public enum ReplicationMessage: Sendable, Equatable {
    /// follower → leader: "I follow you in `epoch`; my log ends at `position`"; `node` names
    /// the follower's node (for `lyceum status` and the lag metrics; empty when not said).
    case follow(partition: String, epoch: Int64, position: LogPosition, node: String = "")
    /// leader → follower: the records after `previous`, with the epoch starts among them, and
    /// the highest sequence known durable on a majority.
    case append(partition: String, epoch: Int64, previous: LogPosition, commit: UInt64, epochs: [EpochHistory.Start], records: [ReplicatedRecord])
    /// follower → leader: every record up to `durable` is fdatasync'ed here.
    case ack(partition: String, epoch: Int64, durable: UInt64)
    /// follower → leader: the append was not written, and why; `epoch` is the follower's
    /// adopted epoch, `position` where its log ends.
    case refuse(partition: String, epoch: Int64, reason: ReplicationError.Code, position: LogPosition)
    /// leader → follower: "cut your records after `after`: my log does not have them".
    case truncate(partition: String, epoch: Int64, after: UInt64)
    /// recovering leader → the follower with the greatest position: "send me your records
    /// after where our logs agree; mine ends at `position`".
    case fetch(partition: String, epoch: Int64, position: LogPosition)
    /// follower → recovering leader: its records after `after` (where both logs agree), with
    /// the epoch starts among them; `end` is where the follower's log ends.
    case records(partition: String, epoch: Int64, after: UInt64, end: LogPosition, epochs: [EpochHistory.Start], records: [ReplicatedRecord])
    /// source → a replica behind its snapshot: `bytes` at `offset` of its journal image of `size`
    /// bytes, which ends at `end`, with the epoch starts of the records it holds; `crc` (the
    /// CRC-32C of the whole image) comes with the last piece only. A second frame holds the bytes.
    case snapshot(partition: String, epoch: Int64, offset: UInt64, size: UInt64, end: LogPosition, epochs: [EpochHistory.Start], crc: UInt32?, bytes: [UInt8])
    /// a replica being rebuilt → its source: "send the image's bytes from `offset`, at most
    /// `maxBytes`" (offset 0: a new image).
    case snapshotFetch(partition: String, epoch: Int64, offset: UInt64, maxBytes: Int)

    /// Limits on what a peer may send.
    public struct Limits: Sendable, Equatable {
        /// The largest JSON frame.
        public var maxHeaderBytes = 64 << 10
        /// The most records in one append.
        public var maxRecords = 1024
        /// The most bytes of record lines in one append.
        public var maxRecordBytes = 8 << 20
        /// The most bytes of a journal image in one `snapshot` message.
        public var maxChunkBytes = JournalChunk.maxBytes

        /// The defaults: 64 KiB headers, 1024 records or 8 MiB per append.
        public init() {}
    }

    /// The partition the message concerns.
    public var partition: String {
        switch self {
        case .follow(let partition, _, _, _), .append(let partition, _, _, _, _, _), .ack(let partition, _, _),
             .refuse(let partition, _, _, _), .truncate(let partition, _, _), .fetch(let partition, _, _),
             .records(let partition, _, _, _, _, _), .snapshot(let partition, _, _, _, _, _, _, _),
             .snapshotFetch(let partition, _, _, _): partition
        }
    }

    /// The message as frames in format `version` (``ReplicationFormat``): its JSON, then an
    /// append's record lines. Version 1, the default, says no version (every build reads it);
    /// a later one says `"v"` first.
    public func frames(version: Int = ReplicationFormat.oldest) -> [[UInt8]] {
        var header = JSONObject()
        if version > ReplicationFormat.oldest { header.append("v", .integer(version)) }
        func position(_ value: LogPosition) -> JSONValue { ["epoch": .integer(Int(value.epoch)), "seq": .integer(Int(value.sequence))] }
        switch self {
        case .follow(let partition, let epoch, let at, let node):
            header.append("op", "follow"); header.append("partition", .string(partition)); header.append("epoch", .integer(Int(epoch)))
            header.append("position", position(at))
            if !node.isEmpty { header.append("node", .string(node)) }
        case .append(let partition, let epoch, let previous, let commit, let epochs, let records):
            header.append("op", "append"); header.append("partition", .string(partition)); header.append("epoch", .integer(Int(epoch)))
            header.append("prev", position(previous)); header.append("commit", .integer(Int(commit)))
            header.append("epochs", .array(epochs.map { ["epoch": .integer(Int($0.epoch)), "start_seq": .integer(Int($0.startSequence))] }))
            return [JSONValue.object(header).serialized()] + records.map(\.line)
        case .ack(let partition, let epoch, let durable):
            header.append("op", "ack"); header.append("partition", .string(partition)); header.append("epoch", .integer(Int(epoch)))
            header.append("durable_seq", .integer(Int(durable)))
        case .refuse(let partition, let epoch, let reason, let at):
            header.append("op", "refuse"); header.append("partition", .string(partition)); header.append("epoch", .integer(Int(epoch)))
            header.append("reason", .string(reason.rawValue)); header.append("position", position(at))
        case .truncate(let partition, let epoch, let after):
            header.append("op", "truncate"); header.append("partition", .string(partition)); header.append("epoch", .integer(Int(epoch)))
            header.append("after_seq", .integer(Int(after)))
        case .fetch(let partition, let epoch, let at):
            header.append("op", "fetch"); header.append("partition", .string(partition)); header.append("epoch", .integer(Int(epoch)))
            header.append("position", position(at))
        case .records(let partition, let epoch, let after, let end, let epochs, let records):
            header.append("op", "records"); header.append("partition", .string(partition)); header.append("epoch", .integer(Int(epoch)))
            header.append("after_seq", .integer(Int(after))); header.append("end", position(end))
            header.append("epochs", .array(epochs.map { ["epoch": .integer(Int($0.epoch)), "start_seq": .integer(Int($0.startSequence))] }))
            return [JSONValue.object(header).serialized()] + records.map(\.line)
        case .snapshot(let partition, let epoch, let offset, let size, let end, let epochs, let crc, let bytes):
            header.append("op", "snapshot"); header.append("partition", .string(partition)); header.append("epoch", .integer(Int(epoch)))
            header.append("offset", .integer(Int(offset))); header.append("size", .integer(Int(size))); header.append("end", position(end))
            header.append("epochs", .array(epochs.map { ["epoch": .integer(Int($0.epoch)), "start_seq": .integer(Int($0.startSequence))] }))
            header.append("chunk_crc", .integer(Int(CRC32C.checksum(bytes))))
            if let crc { header.append("crc", .integer(Int(crc))) }
            return [JSONValue.object(header).serialized(), bytes]
        case .snapshotFetch(let partition, let epoch, let offset, let maxBytes):
            header.append("op", "snapshot_fetch"); header.append("partition", .string(partition)); header.append("epoch", .integer(Int(epoch)))
            header.append("offset", .integer(Int(offset))); header.append("max_bytes", .integer(maxBytes))
        }
        return [JSONValue.object(header).serialized()]
    }

    /// The partition a message's header names, read without checking the rest: whom to refuse
    /// a message that cannot be read (`nil`: the header is not JSON, or names no partition).
    public static func partition(inHeader header: [UInt8], limits: Limits = Limits()) -> String? {
        guard header.count <= limits.maxHeaderBytes else { return nil }
        let value: JSONValue
        do { value = try JSONParser(maxBytes: limits.maxHeaderBytes, maxDepth: 8).parse(header) } catch { return nil }
        guard case .string(let partition)? = value["partition"], (1...128).contains(partition.utf8.count) else { return nil }
        return partition
    }

    /// Reads a message from its frames, checking every member and limit, of any format version
    /// this build reads (``ReplicationFormat``; no `"v"`: version 1).
    /// - Throws: `unsupported_version` for a newer version, before anything else of the message
    ///   is read; `bad_message` naming the member, or `bad_record` for a damaged record line.
    public init(frames: [[UInt8]], limits: Limits = Limits()) throws(ReplicationError) {
        guard let first = frames.first else { throw ReplicationError(.badMessage, "no frame") }
        guard first.count <= limits.maxHeaderBytes else { throw ReplicationError(.badMessage, "a header of \(first.count) bytes, over \(limits.maxHeaderBytes)") }
        let value: JSONValue
        do { value = try JSONParser(maxBytes: limits.maxHeaderBytes, maxDepth: 8).parse(first) } catch {
            throw ReplicationError(.badMessage, "not JSON: \(error)")
        }
        let version: Int
        do throws(JSONReadError) {
            var peek = try JSONObjectReader(value)
            version = try peek.optionalInteger("v", in: 1...Int.max) ?? ReplicationFormat.oldest
        } catch {
            throw ReplicationError(.badMessage, "\(error)")
        }
        // Nothing of a newer format is read: its members may mean what this build cannot know.
        guard version <= ReplicationFormat.newest else { throw ReplicationFormat.refused(version: version) }
        let header: ReplicationMessage
        do throws(JSONReadError) {
            var reader = try JSONObjectReader(value)
            _ = try reader.optionalInteger("v", in: 1...ReplicationFormat.newest)
            let op = try reader.string("op", length: 1...16)
            let partition = try reader.string("partition", length: 1...128)
            let epoch = Int64(try reader.integer("epoch", in: 0...Int.max))
            func position(_ key: String) throws(JSONReadError) -> LogPosition {
                var inner = try reader.object(key)
                let position = LogPosition(epoch: Int64(try inner.integer("epoch", in: 0...Int.max)), sequence: UInt64(try inner.integer("seq", in: 0...Int.max)))
                try inner.rejectUnknownMembers()
                return position
            }
            let message: ReplicationMessage
            switch op {
            case "follow":
                let node = try reader.optionalString("node", length: 1...64) ?? ""
                guard node.utf8.allSatisfy({ (0x21...0x7E).contains($0) }) else {
                    throw JSONReadError(path: reader.path(of: "node"), message: "a node name is printable ASCII without spaces")
                }
                message = .follow(partition: partition, epoch: epoch, position: try position("position"), node: node)
            case "ack":
                message = .ack(partition: partition, epoch: epoch, durable: UInt64(try reader.integer("durable_seq", in: 0...Int.max)))
            case "refuse":
                let text = try reader.string("reason", length: 1...32)
                guard let reason = ReplicationError.Code(rawValue: text) else { throw JSONReadError(path: reader.path(of: "reason"), message: "unknown reason \(text)") }
                message = .refuse(partition: partition, epoch: epoch, reason: reason, position: try position("position"))
            case "truncate":
                message = .truncate(partition: partition, epoch: epoch, after: UInt64(try reader.integer("after_seq", in: 0...Int.max)))
            case "fetch":
                message = .fetch(partition: partition, epoch: epoch, position: try position("position"))
            case "snapshot_fetch":
                message = .snapshotFetch(
                    partition: partition, epoch: epoch, offset: UInt64(try reader.integer("offset", in: 0...Int.max)),
                    maxBytes: try reader.integer("max_bytes", in: 1...limits.maxChunkBytes))
            case "snapshot":
                let epochs = try Self.epochStarts(&reader)
                let offset = UInt64(try reader.integer("offset", in: 0...Int.max))
                let size = UInt64(try reader.integer("size", in: 1...Int.max))
                let end = try position("end")
                let chunkCRC = UInt32(try reader.integer("chunk_crc", in: 0...Int(UInt32.max)))
                let crc = try reader.optionalInteger("crc", in: 0...Int(UInt32.max)).map(UInt32.init)
                guard frames.count == 2 else { throw JSONReadError(path: reader.path(of: "op"), message: "a snapshot has exactly one frame of bytes") }
                let bytes = frames[1]
                guard bytes.count <= limits.maxChunkBytes, !bytes.isEmpty, offset + UInt64(bytes.count) <= size else {
                    throw JSONReadError(path: reader.path(of: "offset"), message: "\(bytes.count) bytes at \(offset) of \(size): empty, over \(limits.maxChunkBytes) or past the end")
                }
                guard CRC32C.checksum(bytes) == chunkCRC else { throw JSONReadError(path: reader.path(of: "chunk_crc"), message: "the bytes do not match their CRC-32C") }
                guard (crc != nil) == (offset + UInt64(bytes.count) == size) else {
                    throw JSONReadError(path: reader.path(of: "crc"), message: "the whole image's crc comes with its last piece, and only then")
                }
                message = .snapshot(partition: partition, epoch: epoch, offset: offset, size: size, end: end, epochs: epochs, crc: crc, bytes: bytes)
            case "append", "records":
                let epochs = try Self.epochStarts(&reader)
                if op == "append" {
                    let previous = try position("prev")
                    let commit = UInt64(try reader.integer("commit", in: 0...Int.max))
                    message = .append(partition: partition, epoch: epoch, previous: previous, commit: commit, epochs: epochs, records: [])
                } else {
                    let after = UInt64(try reader.integer("after_seq", in: 0...Int.max))
                    message = .records(partition: partition, epoch: epoch, after: after, end: try position("end"), epochs: epochs, records: [])
                }
            default:
                throw JSONReadError(path: reader.path(of: "op"), message: "unknown op \(op)")
            }
            try reader.rejectUnknownMembers()
            header = message
        } catch {
            throw ReplicationError(.badMessage, "\(error)")
        }
        let lines = frames.dropFirst()
        let carriesRecords: Bool
        switch header {
        case .append, .records: carriesRecords = true
        default: carriesRecords = false
        }
        if case .snapshot = header {
            self = header
            return
        }
        guard carriesRecords else {
            guard lines.isEmpty else { throw ReplicationError(.badMessage, "only append and records have more than one frame") }
            self = header
            return
        }
        guard lines.count <= limits.maxRecords, lines.reduce(0, { $0 + $1.count }) <= limits.maxRecordBytes else {
            throw ReplicationError(.badMessage, "a message over \(limits.maxRecords) records or \(limits.maxRecordBytes) bytes")
        }
        var records: [ReplicatedRecord] = []
        for line in lines {
            do { records.append(try ReplicatedRecord(line: line)) } catch {
                throw ReplicationError(.badRecord, "record \(records.count + 1) of the message: \(error)")
            }
        }
        switch header {
        case .append(let partition, let epoch, let previous, let commit, let epochs, _):
            self = .append(partition: partition, epoch: epoch, previous: previous, commit: commit, epochs: epochs, records: records)
        case .records(let partition, let epoch, let after, let end, let epochs, _):
            self = .records(partition: partition, epoch: epoch, after: after, end: end, epochs: epochs, records: records)
        default:
            self = header
        }
    }

    /// An `append`'s, `records`' or `snapshot`'s epoch starts, at most 64.
    private static func epochStarts(_ reader: inout JSONObjectReader) throws(JSONReadError) -> [EpochHistory.Start] {
        var epochs: [EpochHistory.Start] = []
        for (item, path) in try reader.array("epochs") {
            var start = try JSONObjectReader(item, path: path)
            epochs.append(EpochHistory.Start(epoch: Int64(try start.integer("epoch", in: 1...Int.max)), startSequence: UInt64(try start.integer("start_seq", in: 1...Int.max))))
            try start.rejectUnknownMembers()
        }
        guard epochs.count <= 64 else { throw JSONReadError(path: reader.path(of: "epochs"), message: "more than 64 epoch starts") }
        return epochs
    }
}
