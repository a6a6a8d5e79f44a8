/// The members of one JSON object left where they lie in the checked input: each key's and value's
/// location, decoded only when read. What a reader of a request needs, without the `JSONValue`
/// tree a full parse would build (issue 19: a request is read once, straight from its bytes).
struct JSONByteMembers {
    /// One member: its key as `Scanner.skipObject` found it, and the bytes of its value.
    struct Member {
        let key: OpenKey
        let value: Range<Int>
    }

    /// The whole input, already accepted by the scanner's checks.
    let bytes: [UInt8]
    /// The object's members in document order.
    let members: [Member]

    /// The position of the member named `key` (equal as `String`s, as parsed keys compare).
    func position(of key: String) -> Int? {
        let asciiKey = key.utf8.allSatisfy { $0 < 0x80 }
        return bytes.withUnsafeBufferPointer { buffer in
            members.firstIndex { member in
                // Plain keys equal an ASCII key exactly when their bytes do; anything else is
                // compared as decoded text, up to canonical equivalence.
                guard member.key.plain, asciiKey else { return Self.text(of: member.key, in: buffer) == key }
                let content = UnsafeBufferPointer(rebasing: buffer[member.key.content])
                return content.count == key.utf8.count && content.elementsEqual(key.utf8)
            }
        }
    }

    /// The decoded key of the member at `position`.
    func key(at position: Int) -> String {
        bytes.withUnsafeBufferPointer { Self.text(of: members[position].key, in: $0) }
    }

    /// The value of the member at `position`, decoded now.
    func value(at position: Int) -> JSONValue {
        bytes.withUnsafeBufferPointer { buffer in
            var scanner = Scanner(bytes: buffer, maxDepth: .max)
            scanner.position = members[position].value.lowerBound
            // The scanner checked these bytes before recording them, by the rules `value(depth:)`
            // applies, so decoding them cannot fail; `null` only keeps the signature total.
            return (try? scanner.value(depth: 0)) ?? .null
        }
    }

    private static func text(of key: OpenKey, in buffer: UnsafeBufferPointer<UInt8>) -> String {
        if key.plain { return String(decoding: UnsafeBufferPointer(rebasing: buffer[key.content]), as: UTF8.self) }
        var scanner = Scanner(bytes: buffer, maxDepth: 0)
        return (try? scanner.text(of: key)) ?? ""
    }
}
