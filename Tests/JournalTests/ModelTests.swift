import Journal
import LyceumSupport
import Testing

@Suite struct ModelTests {
    /// Random puts, deletes, multi-change transactions, compactions and restarts, checked after
    /// every step against a plain dictionary.
    @Test(arguments: [1, 2, 3] as [UInt64])
    func randomOperationsMatchADictionary(seed: UInt64) throws {
        try withTemporaryDirectory { directory in
            var generator = SeededGenerator(seed: seed)
            var model: [String: [String: [UInt8]]] = [:]
            var service = try GuardedState(directory: directory, options: JournalOptions(durability: .none))
            func randomChange() -> JournalChange {
                let collection = Bool.random(using: &generator) ? "books" : "progress"
                let key = "k\(Int.random(in: 0..<25, using: &generator))"
                if Int.random(in: 0..<3, using: &generator) == 0 { return .delete(collection, key: key) }
                return .put(collection, key: key, value: bookValue(Int.random(in: 0..<1_000_000, using: &generator)))
            }
            for step in 0..<600 {
                switch Int.random(in: 0..<100, using: &generator) {
                case 0..<75:
                    let changes = (0..<Int.random(in: 1...4, using: &generator)).map { _ in randomChange() }
                    try service.write(changes)
                    for change in changes { model[change.collection, default: [:]][change.key] = change.value }
                case 75..<88:
                    try service.journal.compact(capture: service.capture)
                default:
                    service.journal.close()
                    service = try GuardedState(directory: directory, options: JournalOptions(durability: .none))
                }
                // The journal's state drops a collection with its last key; the model keeps it empty.
                let expected = model.filter { !$0.value.isEmpty }
                #expect(service.state.withLock { $0.collections } == expected, "seed \(seed) step \(step)")
            }
            service.journal.close()
        }
    }
}
