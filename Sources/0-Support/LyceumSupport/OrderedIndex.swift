/// Elements kept in an order the caller defines, in chunks of at most `chunkCapacity`, so that
/// finding a place costs two binary searches (O(log n)), inserting or removing there moves at
/// most one chunk's elements, and walking on from a place costs O(1) an element. It is how a list
/// request pays for its page and not for everything one owner keeps (issue 40): a sorted array
/// moved half of itself on every insert, and sorting per request cost O(n log n).
///
/// The order is not stored: every call that needs it takes it as a predicate, so that elements
/// can be small handles (a slot number) whose order lives in a table beside them. Callers must
/// pass the same strict total order every time; ties are the caller's to break.
public struct OrderedIndex<Element: Sendable>: Sendable {
    /// The most elements one chunk holds: a split or an insert moves at most this many.
    public static var chunkCapacity: Int { 512 }

    @usableFromInline var chunks: [[Element]] = []
    /// How many elements the index holds.
    public var count: Int { stored }
    @usableFromInline var stored = 0

    /// A place in the index: before the element at `chunk`, `offset`, or the end.
    public struct Position: Comparable, Sendable {
        @usableFromInline let chunk: Int
        @usableFromInline let offset: Int

        @usableFromInline init(chunk: Int, offset: Int) {
            self.chunk = chunk
            self.offset = offset
        }

        /// Whether `lhs` comes before `rhs` in the index.
        public static func < (lhs: Position, rhs: Position) -> Bool { (lhs.chunk, lhs.offset) < (rhs.chunk, rhs.offset) }
    }

    /// An empty index.
    public init() {}

    /// An index of `sorted`, which must already be in the order later calls will pass: how a
    /// whole table is indexed at once (one sort of extracted keys) instead of by n inserts,
    /// each paying O(log n) comparisons that reach into the table.
    public init(sorted: [Element]) {
        chunks = stride(from: 0, to: sorted.count, by: Self.chunkCapacity).map { Array(sorted[$0..<min($0 + Self.chunkCapacity, sorted.count)]) }
        stored = sorted.count
    }

    /// Whether the index holds nothing.
    public var isEmpty: Bool { count == 0 }

    /// The place after the last element.
    @inlinable public var endPosition: Position { Position(chunk: chunks.count, offset: 0) }

    /// The element at `position`, which must not be `endPosition`.
    @inlinable public subscript(position: Position) -> Element { chunks[position.chunk][position.offset] }

    /// The first place whose element `isPast` holds for, or `endPosition`. `isPast` must be
    /// false and then true along the order (a partition point): `{ !precedes($0, x) }` finds
    /// where `x` is or would go. O(log n) calls of `isPast`.
    @inlinable
    public func firstPosition(where isPast: (Element) throws -> Bool) rethrows -> Position {
        var low = 0
        var high = chunks.count
        while low < high {
            let middle = (low + high) / 2
            if try isPast(chunks[middle][chunks[middle].count - 1]) { high = middle } else { low = middle + 1 }
        }
        guard low < chunks.count else { return endPosition }
        let chunk = chunks[low]
        var first = 0
        var last = chunk.count - 1
        while first < last {
            let middle = (first + last) / 2
            if try isPast(chunk[middle]) { last = middle } else { first = middle + 1 }
        }
        return Position(chunk: low, offset: first)
    }

    /// The place after `position`, which must not be `endPosition`.
    @inlinable
    public func position(after position: Position) -> Position {
        position.offset + 1 < chunks[position.chunk].count
            ? Position(chunk: position.chunk, offset: position.offset + 1) : Position(chunk: position.chunk + 1, offset: 0)
    }

    /// The place before `position`, or `nil` at the first element.
    @inlinable
    public func position(before position: Position) -> Position? {
        if position.offset > 0 { return Position(chunk: position.chunk, offset: position.offset - 1) }
        guard position.chunk > 0 else { return nil }
        return Position(chunk: position.chunk - 1, offset: chunks[position.chunk - 1].count - 1)
    }

    /// The elements from `position` to the end, in order.
    @inlinable
    public func elements(from position: Position) -> some Sequence<Element> {
        sequence(state: position) { next in
            guard next.chunk < chunks.count else { return nil }
            let element = chunks[next.chunk][next.offset]
            next = self.position(after: next)
            return element
        }
    }

    /// The elements before `position`, last first.
    @inlinable
    public func elements(before position: Position) -> some Sequence<Element> {
        sequence(state: self.position(before: position)) { next in
            guard let current = next else { return nil }
            next = self.position(before: current)
            return chunks[current.chunk][current.offset]
        }
    }

    /// Inserts `element` before the first element it precedes (after its equals).
    /// - Parameter precedes: the order, as a strict "comes before".
    @inlinable
    public mutating func insert(_ element: Element, by precedes: (Element, Element) -> Bool) {
        stored += 1
        guard !chunks.isEmpty else {
            chunks.append([element])
            return
        }
        // After the last element, as an order of creation times mostly is: one comparison.
        var place = !precedes(element, chunks[chunks.count - 1][chunks[chunks.count - 1].count - 1])
            ? endPosition : firstPosition { precedes(element, $0) }
        if place.chunk == chunks.count { place = Position(chunk: chunks.count - 1, offset: chunks[chunks.count - 1].count) }
        guard chunks[place.chunk].count == Self.chunkCapacity else {
            chunks[place.chunk].insert(element, at: place.offset)
            return
        }
        // A full chunk. At the very end (an order that mostly grows there, such as creation
        // time) a new chunk starts, so that chunks stay full; elsewhere the chunk is halved.
        if place.chunk == chunks.count - 1, place.offset == Self.chunkCapacity {
            chunks.append([element])
            return
        }
        let half = Self.chunkCapacity / 2
        let upper = Array(chunks[place.chunk][half...])
        chunks[place.chunk].removeSubrange(half...)
        chunks.insert(upper, at: place.chunk + 1)
        if place.offset <= half {
            chunks[place.chunk].insert(element, at: place.offset)
        } else {
            chunks[place.chunk + 1].insert(element, at: place.offset - half)
        }
    }

    /// Removes and returns the element at `position`, which must not be `endPosition`. A chunk
    /// left with a quarter or less of its room joins a neighbour that has room for it, so that
    /// deletions cannot leave many small chunks.
    @inlinable
    @discardableResult
    public mutating func remove(at position: Position) -> Element {
        stored -= 1
        let chunk = position.chunk
        let removed = chunks[chunk].remove(at: position.offset)
        let left = chunks[chunk].count
        if left == 0 {
            chunks.remove(at: chunk)
        } else if left <= Self.chunkCapacity / 4 {
            if chunk + 1 < chunks.count, chunks[chunk + 1].count + left <= Self.chunkCapacity / 2 {
                let next = chunks.remove(at: chunk + 1)
                chunks[chunk].append(contentsOf: next)
            } else if chunk > 0, chunks[chunk - 1].count + left <= Self.chunkCapacity / 2 {
                let this = chunks.remove(at: chunk)
                chunks[chunk - 1].append(contentsOf: this)
            }
        }
        return removed
    }

    /// Every element in order: for checks and tests, O(n).
    public var elements: [Element] { chunks.flatMap { $0 } }
}
