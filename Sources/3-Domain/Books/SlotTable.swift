/// A shelf's books by id: an open-addressing hash table of 4-byte slot numbers whose keys are
/// the ids the books in those slots carry (issue 40). A `[BookID: UInt32]` held each id again
/// beside its slot, 20 bytes a bucket; these buckets take 4, which is what kept a million
/// books' memory near where it was before every book joined four ordered indexes.
///
/// Linear probing at most three quarters full; a removal shifts the entries after it back, so
/// no bucket is ever a tombstone and a lookup stops at the first empty one.
struct SlotTable: Sendable {
    private static let empty = UInt32.max
    private var buckets: [UInt32] = []
    private(set) var count = 0

    /// The slot of the book `id`, reading each candidate's id from `books`.
    func slot(of id: BookID, in books: [StoredBook]) -> UInt32? {
        guard !buckets.isEmpty else { return nil }
        var index = home(of: id)
        while true {
            let slot = buckets[index]
            if slot == Self.empty { return nil }
            if books[Int(slot)].id == id { return slot }
            index = (index + 1) & (buckets.count - 1)
        }
    }

    /// Adds `slot`, whose book (in `books`) has an id the table does not hold yet.
    mutating func insert(_ slot: UInt32, in books: [StoredBook]) {
        if (count + 1) * 4 > buckets.count * 3 { grow(books) }
        place(slot, id: books[Int(slot)].id)
        count += 1
    }

    /// Removes the book `id` and returns its slot, if the table holds it.
    mutating func remove(_ id: BookID, in books: [StoredBook]) -> UInt32? {
        guard !buckets.isEmpty else { return nil }
        let mask = buckets.count - 1
        var hole = home(of: id)
        while buckets[hole] != Self.empty, books[Int(buckets[hole])].id != id { hole = (hole + 1) & mask }
        let removed = buckets[hole]
        guard removed != Self.empty else { return nil }
        // Backward shift: an entry after the hole moves into it unless its home lies
        // (cyclically) after the hole and at or before the entry.
        var next = (hole + 1) & mask
        while buckets[next] != Self.empty {
            let home = home(of: books[Int(buckets[next])].id)
            let staysPut = hole <= next ? (home > hole && home <= next) : (home > hole || home <= next)
            if !staysPut {
                buckets[hole] = buckets[next]
                hole = next
            }
            next = (next + 1) & mask
        }
        buckets[hole] = Self.empty
        count -= 1
        return removed
    }

    private mutating func place(_ slot: UInt32, id: BookID) {
        var index = home(of: id)
        while buckets[index] != Self.empty { index = (index + 1) & (buckets.count - 1) }
        buckets[index] = slot
    }

    private mutating func grow(_ books: [StoredBook]) {
        let old = buckets
        buckets = Array(repeating: Self.empty, count: max(8, old.count * 2))
        for slot in old where slot != Self.empty { place(slot, id: books[Int(slot)].id) }
    }

    /// Where probing for `id` starts: its bits mixed (ids a test or an import spells in
    /// sequence differ only in their last digits) and scaled to the table.
    private func home(of id: BookID) -> Int {
        let mixed = (id.high ^ (id.low &* 0x9E37_79B9_7F4A_7C15)) &* 0xBF58_476D_1CE4_E5B9
        return Int(truncatingIfNeeded: mixed >> 32) & (buckets.count - 1)
    }
}
