import Access
import Testing

@Suite struct IdentifierTests {
    @Test func learnerIdsAndKeyNamesShareOneGrammar() {
        for valid in ["ada", "ada.lovelace@example.org", "user:42", "a+b_c-d", String(repeating: "x", count: 128)] {
            #expect(Identifier.isValid(valid), "\(valid)")
        }
        for invalid in ["", "b o b", "ada/bob", "é", "a,b", String(repeating: "x", count: 129)] {
            #expect(!Identifier.isValid(invalid), "\(invalid)")
        }
    }
}
