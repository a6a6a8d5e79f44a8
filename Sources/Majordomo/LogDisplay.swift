import Logging

extension Logger {
    /// Bytes as printable text when they are, hex otherwise: routing ids and service names in logs.
    static func display(_ bytes: some Collection<UInt8>) -> String {
        if !bytes.isEmpty, bytes.allSatisfy({ $0 >= 0x21 && $0 < 0x7F }) {
            return String(decoding: bytes, as: UTF8.self)
        }
        return "0x" + bytes.map { String($0, radix: 16).leftPadded(to: 2) }.joined()
    }
}

private extension String {
    func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
