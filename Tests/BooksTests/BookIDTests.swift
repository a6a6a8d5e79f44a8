@testable import Books
import Foundation
import Testing

@Suite struct BookIDTests {
    static let id = "0123abcd-ef45-6789-abcd-ef0123456789"

    @Test func parsesEitherCaseToTheSameBitsAndSpellsLowercase() throws {
        let parsed = try #require(BookID(Self.id))
        #expect(parsed == BookID(Self.id.uppercased()))
        #expect(parsed.high == 0x0123_abcd_ef45_6789)
        #expect(parsed.low == 0xabcd_ef01_2345_6789)
        #expect(parsed.text == Self.id)
    }

    /// Every byte that is no hexadecimal digit, at every digit's place, is refused.
    @Test func refusesAnyOtherByteAtAnyPlace() {
        let digits = Set("0123456789abcdefABCDEF".utf8)
        for place in Array(Self.id.utf8).indices where place != 8 && place != 13 && place != 18 && place != 23 {
            for byte in UInt8.min...UInt8.max where !digits.contains(byte) {
                var utf8 = Array(Self.id.utf8)
                utf8[place] = byte
                #expect(utf8.withUnsafeBufferPointer { BookID(utf8: $0) } == nil, "byte \(byte) at \(place)")
            }
        }
        #expect(BookID(Self.id.replacingOccurrences(of: "-", with: "_")) == nil)
        #expect(BookID(String(Self.id.dropLast())) == nil)
    }
}
