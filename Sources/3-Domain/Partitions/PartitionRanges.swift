extension PartitionScheme {
    /// The partitions a list of ranges names, e.g. `0-5,9` (each item a partition or an
    /// inclusive `FIRST-LAST` range, separated by commas, no spaces), sorted and without repeats.
    /// - Throws: ``PartitionError`` naming the item at fault: empty, not decimal, outside
    ///   `0..<count`, a range whose first is above its last, or a partition named twice.
    public func partitions(inRanges text: String) throws(PartitionError) -> [Int] {
        guard !text.isEmpty else { throw PartitionError("the partition list is empty; write e.g. 0-5,9") }
        var chosen = Set<Int>()
        for item in text.split(separator: ",", omittingEmptySubsequences: false) {
            let bounds = item.split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
            let first = try number(bounds[0], in: item)
            let last = bounds.count == 2 ? try number(bounds[1], in: item) : first
            guard first <= last else { throw PartitionError("'\(item)' runs backwards: write \(last)-\(first)") }
            for partition in first...last {
                guard chosen.insert(partition).inserted else { throw PartitionError("partition \(partition) is named twice in '\(text)'") }
            }
        }
        return chosen.sorted()
    }

    /// One bound of a range item: decimal digits naming a partition of this scheme.
    private func number(_ text: Substring, in item: Substring) throws(PartitionError) -> Int {
        guard !text.isEmpty, text.utf8.count <= 9, text.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }),
              let value = Int(text) else {
            throw PartitionError("'\(item)' is not a partition or a range FIRST-LAST of partitions")
        }
        guard all.contains(value) else { throw PartitionError("partition \(value) (in '\(item)') is outside 0-\(count - 1)") }
        return value
    }
}
