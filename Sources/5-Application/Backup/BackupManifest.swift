import JSON
import LyceumSupport
import ServiceHosting

/// A backup's `manifest.json`, written last by `lyceum backup` so that a backup without one is
/// known to be incomplete: where the copy came from and when, the Lyceum version and value
/// formats that wrote it, the partition count, and for every journal its sequence, entries,
/// length and checksum (protocol/backup.md).
package struct BackupManifest: Equatable {
    /// One journal's snapshot in the backup.
    package struct Entry: Equatable {
        /// The service, e.g. `books`.
        package let service: String
        /// Its partition, in a partitioned cluster.
        package let partition: Int?
        /// The file's path inside the backup: ``BackupLayout/file(service:partition:)``.
        package let file: String
        /// The sequence the snapshot reflects: every write through it, none after.
        package let sequence: UInt64
        /// The live entries it holds (request ledger entries included).
        package let entries: Int
        /// The file's length.
        package let bytes: UInt64
        /// The CRC-32C of the whole file.
        package let crc32c: UInt32

        /// `{"service", "partition" (when partitioned), "file", "sequence", "entries", "bytes", "crc32c"}`.
        var json: JSONValue {
            var entry = JSONObject()
            entry.append("service", .string(service))
            if let partition { entry.append("partition", .integer(partition)) }
            entry.append("file", .string(file))
            entry.append("sequence", .integer(Int(sequence)))
            entry.append("entries", .integer(entries))
            entry.append("bytes", .integer(Int(bytes)))
            entry.append("crc32c", .integer(Int(crc32c)))
            return .object(entry)
        }
    }

    /// `format`'s value.
    static let format = "lyceum-backup"
    /// The manifest version this build writes and reads.
    static let version = 1
    /// The most bytes a manifest may have: one line per journal, so far more than any cluster needs.
    package static let maximumBytes = 16 << 20

    package let created: String
    package let source: String
    package let lyceumVersion: String
    package let valueFormats: [String: Int]
    package let partitions: Int
    package let journals: [Entry]

    /// The manifest of a backup copied from `source` now, as `begin`'s `result` describes it.
    /// - Throws: `JSONReadError` when the result is not one.
    package init(begun result: JSONValue, source: String) throws(JSONReadError) {
        var reader = try JSONObjectReader(result)
        _ = try reader.string("backup")
        try self.init(reading: &reader, created: RFC3339.now(), source: source)
        try reader.rejectUnknownMembers()
    }

    /// One manifest of the parts of a cluster's backup, one per node: their journals together.
    /// - Throws: `BackupError` when the parts disagree on the partition count, Lyceum version or
    ///   value formats, or do not hold each partition of a service exactly once (a partition
    ///   moving while the backup began, or a node missing).
    package init(combining parts: [BackupManifest], source: String) throws(BackupError) {
        guard let first = parts.first else { throw BackupError(path: source, "no node answered with a backup") }
        for part in parts where part.partitions != first.partitions || part.lyceumVersion != first.lyceumVersion || part.valueFormats != first.valueFormats {
            throw BackupError(path: part.source, "describes \(part.partitions) partitions, Lyceum \(part.lyceumVersion), value formats \(part.valueFormats); "
                              + "\(first.source) \(first.partitions), \(first.lyceumVersion), \(first.valueFormats)")
        }
        let journals = parts.flatMap(\.journals)
        if first.partitions > 0 {
            for service in Set(journals.map(\.service)).sorted() {
                let held = journals.filter { $0.service == service }.compactMap(\.partition).sorted()
                guard held == Array(0..<first.partitions) else {
                    throw BackupError(path: source, "the nodes hold partitions \(held) of \(service), not each of 0-\(first.partitions - 1) once; "
                                      + "is a partition moving, or a node missing? (lyceum status)")
                }
            }
        }
        created = first.created
        self.source = source
        lyceumVersion = first.lyceumVersion
        valueFormats = first.valueFormats
        partitions = first.partitions
        self.journals = journals
    }

    /// The manifest in `bytes`, read from a backup's `manifest.json`.
    /// - Throws: `JSONReadError` naming the member at fault.
    package init(bytes: [UInt8]) throws(JSONReadError) {
        let value: JSONValue
        do { value = try JSONParser(maxBytes: Self.maximumBytes, maxDepth: 6).parse(bytes) } catch {
            throw JSONReadError(path: "$", message: "is not JSON (truncated or damaged): \(error)")
        }
        var reader = try JSONObjectReader(value)
        guard try reader.string("format") == Self.format else {
            throw JSONReadError(path: "$.format", message: "is not \(Self.format)")
        }
        let version = try reader.integer("version", in: 1...Int.max)
        guard version <= Self.version else {
            throw JSONReadError(path: "$.version", message: "is \(version), written by a newer Lyceum; this build reads up to \(Self.version)")
        }
        let created = try reader.string("created")
        let source = try reader.string("source")
        try self.init(reading: &reader, created: created, source: source)
        try reader.rejectUnknownMembers()
    }

    private init(reading reader: inout JSONObjectReader, created: String, source: String) throws(JSONReadError) {
        self.created = created
        self.source = source
        lyceumVersion = try reader.string("lyceum_version", length: 1...64)
        var formats = try reader.object("value_formats")
        var valueFormats: [String: Int] = [:]
        for kind in BackupLayout.newestValueFormats.keys.sorted() {
            valueFormats[kind] = try formats.integer(kind, in: 1...Int.max)
        }
        try formats.rejectUnknownMembers()
        self.valueFormats = valueFormats
        partitions = try reader.integer("partitions", in: 0...Int(Int32.max))
        journals = try reader.array("journals").map { item throws(JSONReadError) in try Self.journal(item.value, path: item.path) }
    }

    private static func journal(_ value: JSONValue, path: String) throws(JSONReadError) -> Entry {
        var reader = try JSONObjectReader(value, path: path)
        let service = try reader.string("service", length: 1...64)
        let partition = try reader.optionalInteger("partition", in: 0...Int(Int32.max))
        let file = try reader.string("file", length: 1...512)
        // The one place a file may be, so that no manifest (or server) can name a path outside the backup.
        guard ServiceRegistry.standard[service]?.isJournaled == true, file == BackupLayout.file(service: service, partition: partition) else {
            throw JSONReadError(path: reader.path(of: "file"), message: "is not the journal file of a journaled service's \(partition.map { "partition \($0)" } ?? "data")")
        }
        let journal = Entry(
            service: service, partition: partition, file: file, sequence: UInt64(try reader.integer("sequence", in: 0...Int.max)),
            entries: try reader.integer("entries", in: 0...Int.max), bytes: UInt64(try reader.integer("bytes", in: 0...Int.max)),
            crc32c: UInt32(try reader.integer("crc32c", in: 0...Int(UInt32.max))))
        try reader.rejectUnknownMembers()
        return journal
    }

    /// The manifest as written to `manifest.json`, with a final newline.
    package var bytes: [UInt8] {
        var object = JSONObject()
        object.append("format", .string(Self.format))
        object.append("version", .integer(Self.version))
        object.append("created", .string(created))
        object.append("source", .string(source))
        object.append("lyceum_version", .string(lyceumVersion))
        var formats = JSONObject()
        for (kind, format) in valueFormats.sorted(by: { $0.key < $1.key }) { formats.append(kind, .integer(format)) }
        object.append("value_formats", .object(formats))
        object.append("partitions", .integer(partitions))
        object.append("journals", .array(journals.map(\.json)))
        return JSONValue.object(object).serialized() + [UInt8(ascii: "\n")]
    }

    /// The sum of the journals' lengths.
    package var totalBytes: UInt64 { journals.reduce(0) { $0 + $1.bytes } }
}
