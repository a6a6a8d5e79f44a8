#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import JSON
import LyceumSupport

/// What one journal line is, once its checksum and shape have been verified.
enum LineKind: Equatable {
    /// The first line: the format version, the sequence number the snapshot reflects, its part count.
    case header(version: UInt64, base: UInt64, parts: UInt64)
    /// One part of the compacted snapshot that follows the header.
    case snapshot(part: UInt64)
    /// One committed transaction.
    case record(sequence: UInt64)
}

/// Writes and reads journal lines exactly as `protocol/journal.md` specifies them.
enum RecordFormat {
    /// The format version this build writes and reads.
    static let version: UInt64 = 1
    /// `,"crc":"` + 8 hex digits + `"}`: the fixed tail of every line, before its newline.
    static let checksumSuffixLength = 18
    /// The longest line the format allows, newline included; anything longer is damage. It bounds
    /// the memory that reading a damaged file can take.
    static let maximumLineBytes = 256 << 20
    /// The most a record line adds around its changes: `{"seq":` + 20 digits + checksum + newline.
    static let lineOverhead = 64
    /// The deepest nesting of arrays and objects a stored value may have.
    static let maximumValueDepth = 256

    // MARK: Writing

    /// Checks that the journal can store `change` unchanged on one line, its value as deeply as
    /// `check` says.
    static func validate(_ change: JournalChange, _ check: ValueCheck = .full) throws {
        guard !change.collection.isEmpty, !change.key.isEmpty else {
            throw JournalError(.invalidChange, "a change needs a non-empty collection and key (collection '\(change.collection)', key '\(change.key)')")
        }
        guard let value = change.value else { return }
        if case .framing = check {
            guard value.first == 0x7B, value.last == 0x7D, !containsNewline(value) else {
                throw JournalError(.invalidChange, "the value of \(change.collection)/\(change.key) is not framed as one JSON object on one line")
            }
            assert((try? JSONParser(maxBytes: .max, maxDepth: maximumValueDepth).validate(value)) != nil,
                   "a value vouched for as well-formed is not: \(change.collection)/\(change.key)")
            return
        }
        // The JSON module's parser decides what is well-formed (UTF-8 included), validating without
        // building the value (this runs on every append), with the limits lifted that suit
        // requests but not stored values: the record's size limit bounds them.
        let valid = value.first == 0x7B && !value.contains(0x0A)
            && (try? JSONParser(maxBytes: .max, maxDepth: maximumValueDepth).validate(value)) != nil
        guard valid else {
            let reason = value.contains(0x0A) ? "contains a raw newline" : "is not one well-formed JSON object in UTF-8"
            throw JournalError(.invalidChange, "the value of \(change.collection)/\(change.key) \(reason)")
        }
    }

    /// Whether `bytes` holds a raw newline, found with `memchr` rather than byte by byte.
    private static func containsNewline(_ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBytes { buffer in
            guard let start = buffer.baseAddress else { return false }
            return memchr(start, 0x0A, buffer.count) != nil
        }
    }

    /// Appends the `"changes":[…]` member (with its leading comma) for already validated changes.
    static func appendChanges(_ changes: [JournalChange], to output: inout [UInt8]) {
        output.append(utf8: #","changes":["#)
        for (position, change) in changes.enumerated() {
            if position > 0 { output.append(0x2C) }
            if let value = change.value {
                output.append(utf8: #"{"put":"#)
                JSONValue.write(change.collection, to: &output)
                output.append(utf8: #","key":"#)
                JSONValue.write(change.key, to: &output)
                output.append(utf8: #","value":"#)
                output.append(contentsOf: value)
            } else {
                output.append(utf8: #"{"delete":"#)
                JSONValue.write(change.collection, to: &output)
                output.append(utf8: #","key":"#)
                JSONValue.write(change.key, to: &output)
            }
            output.append(0x7D)
        }
        output.append(0x5D)
    }

    /// At least the bytes `appendChanges` adds for `change` when no character of its names
    /// needs escaping, without reading them: room to reserve for a record, where an escape only
    /// costs the buffer one more growth. (`encodedLength(of:)` is exact and walks the names.)
    static func lengthEstimate(of change: JournalChange) -> Int {
        change.collection.utf8.count + change.key.utf8.count + (change.value?.count ?? 0) + #"{"delete":"","key":"","value":}"#.utf8.count
    }

    /// The bytes `appendChanges` adds for `change`, not counting the separating comma.
    static func encodedLength(of change: JournalChange) -> Int {
        let names = JSONString.encodedLength(of: change.collection) + JSONString.encodedLength(of: change.key)
        if let value = change.value { return names + value.count + #"{"put":,"key":,"value":}"#.utf8.count }
        return names + #"{"delete":,"key":}"#.utf8.count
    }

    /// A complete line (with its checksum and newline) of the given kind; `body` is what
    /// `appendChanges` produced, or empty for a header.
    static func line(_ kind: LineKind, body: [UInt8]) -> [UInt8] {
        var line: [UInt8] = []
        line.reserveCapacity(body.count + 64)
        switch kind {
        case let .header(version, base, parts):
            line.append(utf8: #"{"format":"lyceum-journal","version":"#)
            JSONValue.write(version, to: &line)
            line.append(utf8: #","base":"#)
            JSONValue.write(base, to: &line)
            line.append(utf8: #","parts":"#)
            JSONValue.write(parts, to: &line)
        case let .snapshot(part):
            line.append(utf8: #"{"part":"#)
            JSONValue.write(part, to: &line)
        case let .record(sequence):
            line.append(utf8: #"{"seq":"#)
            JSONValue.write(sequence, to: &line)
        }
        line.append(contentsOf: body)
        let crc = CRC32C.checksum(line)
        line.append(utf8: #","crc":""#)
        for shift in stride(from: 28, through: 0, by: -4) {
            line.append(JSONString.hexDigits[Int((crc >> UInt32(shift)) & 0xF)])
        }
        line.append(utf8: "\"}\n")
        return line
    }

    // MARK: Reading

    /// Whether `line` (without its newline) ends in a checksum that matches the bytes before it.
    static func checksumMatches(_ line: UnsafeRawBufferPointer) -> Bool {
        let count = line.count
        guard count > checksumSuffixLength + 2 else { return false }
        let bodyEnd = count - checksumSuffixLength
        var cursor = LineCursor(line, from: bodyEnd)
        guard cursor.consume(#","crc":""#) else { return false }
        var stored: UInt32 = 0
        for _ in 0..<8 {
            let byte = cursor.base[cursor.index]
            // Only lowercase digits are written; anything else is damage.
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            default: return false
            }
            stored = stored << 4 | UInt32(digit)
            cursor.index += 1
        }
        guard cursor.consume("\"}") else { return false }
        return CRC32C.checksum(UnsafeRawBufferPointer(rebasing: line[0..<bodyEnd])) == stored
    }
}

/// Reads verified lines back; keeps a little state so that replaying millions of records with the
/// same collection name builds that name once.
struct LineParser {
    private var lastCollectionBytes: [UInt8] = []
    private var lastCollection = ""

    /// The line's kind, with its changes appended to `changes`; nil if the line is damaged or not
    /// in the journal's exact format. `line` excludes the newline.
    mutating func parse(_ line: UnsafeRawBufferPointer, into changes: inout [JournalChange]) -> LineKind? {
        guard RecordFormat.checksumMatches(line) else { return nil }
        let bodyEnd = line.count - RecordFormat.checksumSuffixLength
        var cursor = LineCursor(UnsafeRawBufferPointer(rebasing: line[0..<bodyEnd]))
        let kind: LineKind
        if cursor.consume(#"{"seq":"#) {
            guard let sequence = cursor.readUnsigned() else { return nil }
            kind = .record(sequence: sequence)
        } else if cursor.consume(#"{"part":"#) {
            guard let part = cursor.readUnsigned() else { return nil }
            kind = .snapshot(part: part)
        } else if cursor.consume(#"{"format":"lyceum-journal","version":"#) {
            guard let version = cursor.readUnsigned(), cursor.consume(#","base":"#),
                  let base = cursor.readUnsigned(), cursor.consume(#","parts":"#),
                  let parts = cursor.readUnsigned(), cursor.isAtEnd
            else { return nil }
            return .header(version: version, base: base, parts: parts)
        } else {
            return nil
        }
        guard cursor.consume(#","changes":["#) else { return nil }
        let firstChange = changes.count
        repeat {
            guard let change = readChange(&cursor) else {
                changes.removeSubrange(firstChange...)
                return nil
            }
            changes.append(change)
        } while cursor.consume(0x2C)
        guard cursor.consume(0x5D), cursor.isAtEnd else {
            changes.removeSubrange(firstChange...)
            return nil
        }
        return kind
    }

    private mutating func readChange(_ cursor: inout LineCursor) -> JournalChange? {
        let isPut: Bool
        if cursor.consume(#"{"put":"#) { isPut = true } else if cursor.consume(#"{"delete":"#) { isPut = false } else { return nil }
        guard let collection = readCollection(&cursor), cursor.consume(#","key":"#),
              let key = cursor.readString() else { return nil }
        var value: [UInt8]?
        if isPut {
            guard cursor.consume(#","value":"#), cursor.index < cursor.end, cursor.base[cursor.index] == 0x7B else { return nil }
            let start = cursor.index
            guard cursor.skipContainer() else { return nil }
            let count = cursor.index - start
            let source = cursor.base + start
            value = [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
                buffer.baseAddress!.initialize(from: source, count: count)
                initialized = count
            }
        }
        guard cursor.consume(0x7D) else { return nil }
        return JournalChange(collection: collection, key: key, value: value)
    }

    private mutating func readCollection(_ cursor: inout LineCursor) -> String? {
        // The cached bytes include both quotes, so a prefix match is an exact match.
        let known = lastCollectionBytes.count
        if known > 0, cursor.end - cursor.index >= known,
           lastCollectionBytes.withUnsafeBytes({ memcmp(cursor.base + cursor.index, $0.baseAddress!, known) }) == 0 {
            cursor.index += known
            return lastCollection
        }
        let start = cursor.index
        guard let name = cursor.readString() else { return nil }
        let raw = UnsafeBufferPointer(start: cursor.base + start, count: cursor.index - start)
        lastCollectionBytes = Array(raw)
        lastCollection = name
        return name
    }
}

extension Journal {
    /// The journal format version this build writes and reads (the header's `version`,
    /// protocol/journal.md): what a node publishes for the others to know (issue 35).
    public static let formatVersion = Int(RecordFormat.version)
}
