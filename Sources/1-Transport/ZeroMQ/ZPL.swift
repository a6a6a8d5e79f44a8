/// A ZPL document (ZeroMQ RFC 4, "ZeroMQ Property Language") as CZMQ's `zconfig` reads and
/// writes it: a tree of named items, each with an optional value, nested by indentation of
/// four spaces a level, with `#` comments. Kept as a flat list in file order, each item knowing
/// its parent, because certificates only ever ask "the first item named X under Y".
struct ZPLDocument: Sendable {
    /// One named line of the document.
    struct Item: Sendable {
        /// Its name: letters, digits and `$ - _ @ . & + /` (not starting or ending with `/`).
        let name: String
        /// The text after `=`, unquoted; `nil` when the line has no `=` (a section).
        let value: String?
        /// The 1-based line it was read from (0 for items built in memory).
        let line: Int
        /// The index of the item it is nested in; `nil` at the top level.
        let parent: Int?
    }

    /// The items in file order.
    private(set) var items: [Item] = []
    /// Comment lines written before the first item, without their `#`.
    var comments: [String] = []

    /// An empty document.
    init() {}

    /// The indices of the items directly under `parent` (the top level when `nil`), in order.
    func children(of parent: Int?) -> [Int] {
        items.indices.filter { items[$0].parent == parent }
    }

    /// Appends an item under `parent` and returns its index.
    @discardableResult
    mutating func append(_ name: String, value: String? = nil, under parent: Int? = nil) -> Int {
        items.append(Item(name: name, value: value, line: 0, parent: parent))
        return items.count - 1
    }
}

/// A ZPL line that `zconfig` would refuse, and why.
struct ZPLSyntaxError: Error, Sendable, Equatable {
    /// The 1-based line.
    let line: Int
    /// What is wrong with it.
    let message: String
}

extension ZPLDocument {
    /// Parses `text` with zconfig's rules: lines end at `\n` and lose trailing white space; a
    /// line is blank, a comment (`#…`), or `name`, `name = value`, `name = "value"` or
    /// `name = 'value'` (a comment may follow), indented by four spaces per level below the
    /// item it belongs to. An unquoted value runs to a `#` or the end of the line.
    /// - Throws: the first line zconfig would refuse (it refuses the whole document, so do we).
    init(parsing text: [UInt8]) throws(ZPLSyntaxError) {
        self.init()
        // The latest item at each depth: a new item at depth d goes under latest[d - 1].
        var latest: [Int] = []
        var number = 0
        var rest = text[...]
        while !rest.isEmpty {
            number += 1
            let end = rest.firstIndex(of: UInt8(ascii: "\n")) ?? rest.endIndex
            var line = rest[rest.startIndex..<end]
            rest = end == rest.endIndex ? rest[end...] : rest[rest.index(after: end)...]
            while let last = line.last, Self.isSpace(last) { line = line.dropLast() }
            if line.first == UInt8(ascii: "#") {
                if items.isEmpty { comments.append(String(decoding: line.dropFirst(), as: UTF8.self)) }
                continue
            }
            let indentation = line.prefix { $0 == UInt8(ascii: " ") }.count
            guard indentation % 4 == 0 else { throw ZPLSyntaxError(line: number, message: "indent 4 spaces a level") }
            let depth = indentation / 4
            line = line.dropFirst(indentation)
            let name = line.prefix(while: Self.isNameByte)
            line = line.dropFirst(name.count)
            guard !name.isEmpty else {
                try Self.requireEndOfLine(line, number)
                continue
            }
            guard name.first != UInt8(ascii: "/"), name.last != UInt8(ascii: "/") else {
                throw ZPLSyntaxError(line: number, message: "'/' may not start or end a name")
            }
            guard depth <= latest.count else {
                throw ZPLSyntaxError(line: number, message: "indented \(depth) levels under an item \(latest.count) deep")
            }
            let value = try Self.value(of: line, number)
            latest.removeSubrange(depth...)
            items.append(Item(name: String(decoding: name, as: UTF8.self), value: value, line: number, parent: depth == 0 ? nil : latest[depth - 1]))
            latest.append(items.count - 1)
        }
    }

    /// The text `zconfig_save` writes: the comments, a blank line, then each item on its own
    /// line, indented four spaces a level, as `name` or `name = "value"`.
    var text: String {
        var lines = comments.map { "#" + $0 }
        if !comments.isEmpty { lines.append("") }
        func write(under parent: Int?, depth: Int) {
            for index in children(of: parent) {
                let item = items[index]
                let indentation = String(repeating: " ", count: depth * 4)
                lines.append(indentation + item.name + (item.value.map { " = \"\($0)\"" } ?? ""))
                write(under: index, depth: depth + 1)
            }
        }
        write(under: nil, depth: 0)
        return lines.map { $0 + "\n" }.joined()
    }

    /// Why `name` cannot be written as a ZPL name, or `nil` when it can.
    static func refusal(ofName name: String) -> String? {
        guard !name.isEmpty, name.utf8.allSatisfy(isNameByte) else { return "a name is 1 or more of letters, digits and $ - _ @ . & + /" }
        guard name.first != "/", name.last != "/" else { return "'/' may not start or end a name" }
        return nil
    }

    /// Why `value` cannot be written between double quotes (zconfig has no escapes), or `nil`.
    static func refusal(ofValue value: String) -> String? {
        value.utf8.contains { $0 == UInt8(ascii: "\"") || $0 < 0x20 || $0 == 0x7F }
            ? "a value may not contain a double quote or a control character" : nil
    }

    private static func value(of line: ArraySlice<UInt8>, _ number: Int) throws(ZPLSyntaxError) -> String? {
        var rest = line.drop(while: isSpace)
        guard rest.first == UInt8(ascii: "=") else {
            try requireEndOfLine(rest, number)
            return nil
        }
        rest = rest.dropFirst().drop(while: isSpace)
        if let quote = rest.first, quote == UInt8(ascii: "\"") || quote == UInt8(ascii: "'") {
            let inside = rest.dropFirst()
            guard let close = inside.firstIndex(of: quote) else {
                throw ZPLSyntaxError(line: number, message: "missing closing \(Character(Unicode.Scalar(quote)))")
            }
            try requireEndOfLine(inside[inside.index(after: close)...], number)
            return String(decoding: inside[..<close], as: UTF8.self)
        }
        var unquoted = rest.prefix { $0 != UInt8(ascii: "#") }
        while let last = unquoted.last, isSpace(last) { unquoted = unquoted.dropLast() }
        return String(decoding: unquoted, as: UTF8.self)
    }

    /// Only white space or a comment may end a line.
    private static func requireEndOfLine(_ rest: ArraySlice<UInt8>, _ number: Int) throws(ZPLSyntaxError) {
        let trailing = rest.drop(while: isSpace)
        guard trailing.isEmpty || trailing.first == UInt8(ascii: "#") else {
            throw ZPLSyntaxError(line: number, message: "unexpected '\(String(decoding: trailing.prefix(20), as: UTF8.self))'")
        }
    }

    /// C's `isspace` in the C locale.
    private static func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || (0x09...0x0D).contains(byte) }

    /// zconfig's name characters: ASCII letters and digits and `$ - _ @ . & + /`.
    private static func isNameByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
            UInt8(ascii: "$"), UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "@"), UInt8(ascii: "."), UInt8(ascii: "&"),
            UInt8(ascii: "+"), UInt8(ascii: "/"):
            true
        default: false
        }
    }
}
