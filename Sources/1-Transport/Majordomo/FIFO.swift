/// A first-in first-out queue with O(1) push and pop, for requests and waiting workers.
struct FIFO<Element> {
    private var storage: [Element] = []
    private var head = 0

    var isEmpty: Bool { head == storage.count }
    var count: Int { storage.count - head }
    var first: Element? { isEmpty ? nil : storage[head] }

    mutating func append(_ element: Element) { storage.append(element) }

    /// Puts `element` before all the others, to be popped next: for one that was popped and
    /// must be served again.
    mutating func prepend(_ element: Element) {
        if head > 0 {
            head -= 1
            storage[head] = element
        } else {
            storage.insert(element, at: 0)
        }
    }

    mutating func popFirst() -> Element? {
        guard !isEmpty else { return nil }
        let element = storage[head]
        head += 1
        if head == storage.count {
            storage.removeAll(keepingCapacity: true)
            head = 0
        } else if head * 2 >= storage.count && head > 16 {
            // Reclaim the consumed prefix once it is the larger half, keeping pops amortised O(1).
            storage.removeFirst(head)
            head = 0
        }
        return element
    }

    /// Removes every element matching `shouldRemove`, keeping the order of the rest.
    mutating func removeAll(where shouldRemove: (Element) -> Bool) {
        storage.removeFirst(head)
        head = 0
        storage.removeAll(where: shouldRemove)
    }
}
