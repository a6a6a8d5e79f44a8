/// The grammar of learner ids and key names: 1–128 of `A–Z a–z 0–9 . _ - : @ +` (an account
/// id, an e-mail address, a device name). One rule, so that a certificate's `learners` list can
/// name exactly the learners a request may name, and both are safe in journal keys and logs.
public enum Identifier {
    /// The most bytes an identifier may have.
    public static let maximumLength = 128

    /// Whether `byte` may appear in an identifier.
    public static func isAllowed(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
            UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "-"), UInt8(ascii: ":"), UInt8(ascii: "@"), UInt8(ascii: "+"):
            true
        default: false
        }
    }

    /// Whether `text` is 1–``maximumLength`` allowed bytes.
    public static func isValid(_ text: String) -> Bool {
        (1...maximumLength).contains(text.utf8.count) && hasOnlyAllowedBytes(text)
    }

    /// Whether every byte of `text` may appear in an identifier, whatever its length. Over the
    /// contiguous UTF-8: `text.utf8.allSatisfy` walks the view generically, about 70
    /// instructions a byte, 1.5% of a book read (issue 26).
    public static func hasOnlyAllowedBytes(_ text: String) -> Bool {
        var text = text
        return text.withUTF8 { $0.allSatisfy(isAllowed) }
    }
}
