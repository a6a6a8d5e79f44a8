import LyceumSupport
import Testing

/// `OrderedIndex` against a sorted array: random inserts and removals across chunk splits and
/// merges, seeks, and walks both ways (issue 40).
@Suite struct OrderedIndexTests {
    @Test func randomInsertsAndRemovalsKeepTheOrderOfASortedArray() {
        var index = OrderedIndex<Int>()
        var reference: [Int] = []
        var state: UInt64 = 1
        func next() -> Int {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return Int(state >> 40)
        }
        for round in 0..<30_000 {
            if round % 3 == 2, !reference.isEmpty {
                let victim = reference[next() % reference.count]
                let place = index.firstPosition { $0 >= victim }
                #expect(index[place] == victim)
                index.remove(at: place)
                reference.remove(at: reference.firstIndex(of: victim)!)
            } else {
                // Growing values half the time, as creation times do: appended at the end.
                let value = round % 2 == 0 ? 1_000_000 + round : next() % 1_000_000
                index.insert(value, by: <)
                reference.insert(value, at: reference.firstIndex { $0 > value } ?? reference.count)
            }
        }
        #expect(index.elements == reference && index.count == reference.count)
        for probe in stride(from: 0, to: 1_040_000, by: 9_973) {
            let place = index.firstPosition { $0 > probe }
            let after = Array(index.elements(from: place))
            #expect(after == reference.filter { $0 > probe })
            #expect(Array(index.elements(before: place)) == reference.filter { $0 <= probe }.reversed())
        }
        #expect(OrderedIndex(sorted: reference).elements == reference)
        for value in reference { index.remove(at: index.firstPosition { $0 >= value }) }
        #expect(index.isEmpty && index.elements.isEmpty && index.firstPosition { _ in true } == index.endPosition)
    }
}
