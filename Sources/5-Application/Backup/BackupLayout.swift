import Books
import JSON
import LyceumLogging
import Journal
import LearningServices
import Partitions
import Progress

/// Where each journal's snapshot sits inside a backup, and what a backup says of each: shared by
/// the server that writes the snapshots, the client that copies them and the manifest it writes.
package enum BackupLayout {
    /// The manifest's name inside a backup directory, written last.
    package static let manifest = "manifest.json"

    /// `books/journal.jsonl`, or a partition's `books/p3/journal.jsonl`: the journal file's path
    /// under a data directory, and under a backup directory alike.
    static func file(service: String, partition: Int?) -> String {
        let directory = partition.map { service + "/" + PartitionName.directory($0) } ?? service
        return directory + "/journal.jsonl"
    }

    /// The newest value format of each kind of stored value this build writes and reads.
    static let newestValueFormats: [String: Int] = [
        "books": Book.valueFormat, "progress": CourseProgress.valueFormat, RequestLedger.collection: RequestLedger.valueFormat,
    ]

    /// ``newestValueFormats`` as a JSON object.
    static var valueFormats: JSONValue {
        var object = JSONObject()
        for (kind, format) in newestValueFormats.sorted(by: { $0.key < $1.key }) { object.append(kind, .integer(format)) }
        return .object(object)
    }
}

/// A request to `lyceum.backup`, parsed: `{"op":"begin"}`, `{"op":"read","backup","file","offset","max_bytes"?}`,
/// `{"op":"end","backup","complete"}`.
package enum BackupRequest: Equatable {
    case begin
    case read(String, file: String, offset: Int, maxBytes: Int)
    case end(String, complete: Bool)

    /// What a node service's backup ops start with: `backup_begin`, `backup_read`, `backup_end`.
    package static let nodeOpPrefix = "backup_"

    /// Parses one request frame, whose op is `opPrefix` followed by `begin`, `read` or `end`.
    /// - Throws: `ServiceError` `bad_request` naming the field at fault, `unknown_op`.
    init(_ frame: [UInt8], opPrefix: String = "") throws(ServiceError) {
        var unknown: String?
        do throws(JSONReadError) {
            let value: JSONValue
            do { value = try JSONParser(maxBytes: 4096, maxDepth: 4).parse(frame) } catch {
                throw JSONReadError(path: "$", message: "is not JSON: \(error)")
            }
            var reader = try JSONObjectReader(value)
            let op = try reader.string("op")
            switch op.hasPrefix(opPrefix) ? op.dropFirst(opPrefix.count) : "" {
            case "begin": self = .begin
            case "read":
                self = .read(try reader.string("backup", length: 1...32), file: try reader.string("file", length: 1...512),
                             offset: try reader.integer("offset", in: 0...Int.max),
                             maxBytes: try reader.optionalInteger("max_bytes", in: 1...JournalChunk.maxBytes) ?? JournalChunk.maxBytes)
            case "end":
                let complete = reader.optionalValue("complete")
                guard complete == nil || complete == .bool(true) || complete == .bool(false) else {
                    throw JSONReadError(path: reader.path(of: "complete"), message: "is not a boolean")
                }
                self = .end(try reader.string("backup", length: 1...32), complete: complete == .bool(true))
            default:
                unknown = op
                self = .begin
            }
            try reader.rejectUnknownMembers()
        } catch {
            throw ServiceError(error)
        }
        if let unknown {
            throw ServiceError(.unknownOp, "there is no backup operation \(PeerText.excerpt(unknown)); there are \(["begin", "read", "end"].map { opPrefix + $0 }.joined(separator: ", "))", field: "$.op")
        }
    }
}

/// A backup that cannot be taken, verified or restored: the file or directory at fault and why.
package struct BackupError: Error, CustomStringConvertible {
    /// The file or directory at fault.
    package let path: String
    /// What is wrong with it.
    package let message: String

    /// An error about `path`.
    package init(path: String, _ message: String) {
        self.path = path
        self.message = message
    }

    /// `BACKUP/books/journal.jsonl: has 1234 bytes; the manifest says 2048`.
    package var description: String { "\(path): \(message)" }
}
