import Foundation
import Testing

/// docs/ARCHITECTURE.md, *Threads and sockets*: shared state sits behind `Mutex` (or in an
/// `Atomic`), and what a thread waits on sits in a `Monitor`, the one condition primitive. This
/// holds the sources to it, so that the page stays true.
@Suite struct LockPrimitiveTests {
    static let forbidden = ["NSLock", "NSRecursiveLock", "NSCondition", "NSConditionLock", "DispatchSemaphore", "DispatchGroup"]

    @Test func noSourceUsesAnotherLockOrConditionPrimitive() throws {
        let sources = ModuleTableTests.repository.appendingPathComponent("Sources")
        var swiftFiles = 0
        var uses: [String] = []
        let walker = FileManager.default.enumerator(at: sources, includingPropertiesForKeys: nil)
        while let file = walker?.nextObject() as? URL {
            guard file.pathExtension == "swift" else { continue }
            swiftFiles += 1
            let lines = try String(contentsOf: file, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false)
            for (index, line) in lines.enumerated() {
                // Comments may name them (to say why they are not used).
                let code = line.split(separator: "//", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
                for name in Self.forbidden where Self.mentions(code, name) {
                    uses.append("\(file.path.replacingOccurrences(of: sources.path + "/", with: "")):\(index + 1): \(name)")
                }
            }
        }
        #expect(swiftFiles > 100, "the walk found the sources")
        #expect(uses.isEmpty, "use Mutex/Atomic, or Monitor for state a thread waits on: \(uses)")
    }

    @Test func aNameInsideALongerIdentifierIsNotAUse() {
        #expect(Self.mentions("let lock = NSLock()", "NSLock"))
        #expect(!Self.mentions("let lock = NSLockless()", "NSLock"))
        #expect(!Self.mentions("let x = MyDispatchSemaphore()", "DispatchSemaphore"))
    }

    /// Whether `code` names `identifier` as a whole word.
    static func mentions(_ code: Substring, _ identifier: String) -> Bool {
        var rest = code[...]
        while let range = rest.range(of: identifier) {
            let before = range.lowerBound == code.startIndex ? nil : code[code.index(before: range.lowerBound)]
            let after = range.upperBound == code.endIndex ? nil : code[range.upperBound]
            let isWordCharacter = { (character: Character?) in character.map { $0.isLetter || $0.isNumber || $0 == "_" } ?? false }
            if !isWordCharacter(before) && !isWordCharacter(after) { return true }
            rest = code[range.upperBound...]
        }
        return false
    }
}
