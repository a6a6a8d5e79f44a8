import LyceumSupport

/// Writes one JSON object straight into bytes, member by member, in the order written: the same
/// compact output as ``JSONValue/serialized()``, for hot paths where building a ``JSONValue``
/// first would cost more than the output itself.
///
/// Keys are static strings written as they are, so they must need no escaping; values are
/// escaped like ``JSONValue/write(_:to:)-(String,_)``.
public struct JSONObjectWriter {
    private var bytes: [UInt8]
    private var isEmpty = true

    /// An empty object, with room for `capacity` bytes before it grows.
    public init(reservingCapacity capacity: Int = 256) {
        bytes = []
        bytes.reserveCapacity(capacity)
        bytes.append(UInt8(ascii: "{"))
    }

    private init(continuing bytes: consuming [UInt8]) {
        self.bytes = bytes
        self.bytes.append(UInt8(ascii: "{"))
    }

    /// `"key": number`.
    public mutating func member(_ key: StaticString, _ value: Int) {
        writeKey(key)
        JSONValue.write(value, to: &bytes)
    }

    /// `"key": "text"`.
    public mutating func member(_ key: StaticString, _ value: String) {
        writeKey(key)
        JSONValue.write(value, to: &bytes)
    }

    /// `"key": "text"`, or `"key": null` when `value` is `nil`.
    public mutating func member(_ key: StaticString, _ value: String?) {
        guard let value else { return member(key, JSONValue.null) }
        member(key, value)
    }

    /// `"key": true` or `false`.
    public mutating func member(_ key: StaticString, _ value: Bool) {
        writeKey(key)
        bytes.append(contentsOf: (value ? "true" : "false").utf8)
    }

    /// `"key": value`, for anything a ``JSONValue`` holds.
    public mutating func member(_ key: StaticString, _ value: JSONValue) {
        writeKey(key)
        value.write(to: &bytes)
    }

    /// `"key": {…}`, the nested object's members written by `write`.
    public mutating func member(_ key: StaticString, object write: (inout JSONObjectWriter) -> Void) {
        writeKey(key)
        writeNested(write)
    }

    /// `"key": [{…}, …]`: one object per element of `elements`, each written by `write`.
    public mutating func member<Elements: Sequence>(
        _ key: StaticString, objects elements: Elements, _ write: (inout JSONObjectWriter, Elements.Element) -> Void
    ) {
        writeArray(key, elements) { writer, element in writer.writeNested { write(&$0, element) } }
    }

    /// `"key": ["text", …]`.
    public mutating func member(_ key: StaticString, strings: some Sequence<String>) {
        writeArray(key, strings) { writer, text in JSONValue.write(text, to: &writer.bytes) }
    }

    /// `"key": [number, …]`.
    public mutating func member(_ key: StaticString, integers: some Sequence<Int>) {
        writeArray(key, integers) { writer, number in JSONValue.write(number, to: &writer.bytes) }
    }

    /// `"key": {"name": value, …}`, an object whose member names are data (escaped as strings
    /// are), in the order of `members`; the caller keeps the names distinct.
    public mutating func member(_ key: StaticString, members: some Sequence<(key: String, value: JSONValue)>) {
        writeSequence(key, "{", "}", members) { writer, member in
            JSONValue.write(member.key, to: &writer.bytes)
            writer.bytes.append(UInt8(ascii: ":"))
            member.value.write(to: &writer.bytes)
        }
    }

    /// `"key": value`, with `json` the value already encoded; the caller answers for it being
    /// exactly one JSON value, e.g. an array it assembled from pieces it had to measure first.
    public mutating func member(_ key: StaticString, encoded json: some Collection<UInt8>) {
        writeKey(key)
        bytes.append(contentsOf: json)
    }

    /// The bytes written so far; the finished object has one more, its closing brace.
    public var byteCount: Int { bytes.count }

    /// The finished object's bytes.
    public consuming func finish() -> [UInt8] {
        bytes.append(UInt8(ascii: "}"))
        return bytes
    }

    /// Appends to `output` the object that `write` writes, for an object that is one part of a
    /// larger document the caller assembles itself (a page of a listing).
    public static func append(to output: inout [UInt8], _ write: (inout JSONObjectWriter) -> Void) {
        var taken: [UInt8] = []
        swap(&taken, &output)
        var writer = JSONObjectWriter(continuing: consume taken)
        write(&writer)
        output = writer.finish()
    }

    /// Appends an object written by `write`, handing the buffer over rather than copying it.
    private mutating func writeNested(_ write: (inout JSONObjectWriter) -> Void) {
        Self.append(to: &bytes, write)
    }

    /// `"key": [e1, e2, …]`, each element written by `write`.
    private mutating func writeArray<Elements: Sequence>(
        _ key: StaticString, _ elements: Elements, _ write: (inout JSONObjectWriter, Elements.Element) -> Void
    ) {
        writeSequence(key, "[", "]", elements, write)
    }

    /// `"key":` then `opener`, the elements written by `write` and separated by commas, `closer`.
    private mutating func writeSequence<Elements: Sequence>(
        _ key: StaticString, _ opener: Unicode.Scalar, _ closer: Unicode.Scalar, _ elements: Elements,
        _ write: (inout JSONObjectWriter, Elements.Element) -> Void
    ) {
        writeKey(key)
        bytes.append(UInt8(ascii: opener))
        var isFirst = true
        for element in elements {
            if !isFirst { bytes.append(UInt8(ascii: ",")) }
            isFirst = false
            write(&self, element)
        }
        bytes.append(UInt8(ascii: closer))
    }

    private mutating func writeKey(_ key: StaticString) {
        if !isEmpty { bytes.append(UInt8(ascii: ",")) }
        isEmpty = false
        bytes.append(UInt8(ascii: "\""))
        bytes.append(contentsOf: UnsafeBufferPointer(start: key.utf8Start, count: key.utf8CodeUnitCount))
        bytes.append(utf8: #"":"#)
    }
}
