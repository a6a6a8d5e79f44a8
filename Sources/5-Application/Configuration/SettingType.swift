#if canImport(Glibc)
import Glibc
#endif
import Access

/// A setting's type: how its text becomes a value, with the check and the error message every
/// source gets, and how the value is written back as a text that `parse` accepts.
struct SettingType<Value>: Sendable {
    /// The value of `text`.
    let parse: @Sendable (String) throws(SettingRefusal) -> Value
    /// The text of a value.
    let format: @Sendable (Value) -> String

    /// The values `accept` gives, refused as "expected `expectation`, got '…'" when it gives none.
    init(expecting expectation: String, _ accept: @escaping @Sendable (String) -> Value?, format: @escaping @Sendable (Value) -> String) {
        parse = { text throws(SettingRefusal) in
            guard let value = accept(text) else { throw .expected(expectation, got: text) }
            return value
        }
        self.format = format
    }

    /// A type whose `parse` refuses with messages of its own.
    init(parse: @escaping @Sendable (String) throws(SettingRefusal) -> Value, format: @escaping @Sendable (Value) -> String) {
        self.parse = parse
        self.format = format
    }
}

/// Why a setting's text was refused; `Settings.set` adds the key and the origin.
struct SettingRefusal: Error {
    /// What was wrong.
    let message: String

    /// `expected EXPECTATION, got 'TEXT'`, the refusal of most values.
    static func expected(_ expectation: String, got text: String) -> SettingRefusal {
        SettingRefusal(message: "expected \(expectation), got '\(text)'")
    }
}

extension SettingType<Int> {
    /// A whole number within `range`, called `unit` in errors (`expected bytes from 4096 to …`).
    static func integer(_ range: ClosedRange<Int>, _ unit: String = "an integer") -> Self {
        Self(expecting: "\(unit) from \(range.lowerBound) to \(range.upperBound)", { Int($0).flatMap { range.contains($0) ? $0 : nil } }, format: String.init)
    }

    /// A TCP port, 0 meaning none.
    static let port = integer(0...65535, "a TCP port")
}

extension SettingType<Duration> {
    /// Whole milliseconds within `range`.
    static func milliseconds(_ range: ClosedRange<Int>) -> Self {
        let count = SettingType<Int>.integer(range, "milliseconds")
        return Self(parse: { text throws(SettingRefusal) in .milliseconds(try count.parse(text)) }, format: { String($0.milliseconds) })
    }
}

extension SettingType<String> {
    /// Any text but the empty one, which is refused as "expected `expectation`, got ''".
    static func nonEmpty(_ expectation: String) -> Self {
        Self(expecting: expectation, { $0.isEmpty ? nil : $0 }, format: { $0 })
    }

    /// A ZeroMQ endpoint (`tcp://`, `ipc://` or `inproc://` and more), e.g. `example`.
    static func endpoint(example: String) -> Self {
        Self(expecting: "an endpoint such as \(example)", { isEndpoint($0) ? $0 : nil }, format: { $0 })
    }

    /// An identifier (`Access.Identifier`): a service or node name.
    static func identifier(_ expectation: String) -> Self {
        Self(expecting: expectation, { Identifier.isValid($0) ? $0 : nil }, format: { $0 })
    }

    /// A dotted IPv4 address.
    static let ipv4 = Self(expecting: "an IPv4 address such as 127.0.0.1", { text in
        var address = in_addr()
        return inet_pton(AF_INET, text, &address) == 1 ? text : nil
    }, format: { $0 })

    /// A bearer token (`TokenFile.isBearerToken`).
    static let bearerToken = Self(expecting: TokenFile.bearerTokenRule, { TokenFile.isBearerToken($0) ? $0 : nil }, format: { $0 })

    /// Whether `text` is a ZeroMQ endpoint of a transport Lyceum binds or connects.
    static func isEndpoint(_ text: String) -> Bool {
        ["tcp://", "ipc://", "inproc://"].contains { text.hasPrefix($0) && text.count > $0.count }
    }
}

extension SettingType<Bool> {
    /// `true` or `false`.
    static let boolean = Self(expecting: "true or false", { ["true": true, "false": false][$0] }, format: { String($0) })
}
