import EventSubscription
/// The snapshot table's topics in the byte order of their UTF-8, so that a page is a binary
/// search and a walk rather than a sort of the whole table: with pages, a snapshot of n entries
/// is many requests, and sorting on each would cost n² / page size.
///
/// Topics only ever join (a learner starts a course); they are collected unsorted and merged in
/// when a page is next asked for, so a publish pays an append and a burst of new learners one
/// sort of the burst.
struct SnapshotTopicIndex {
    /// One entry's place: its topic and the key of its ``ProgressTable`` entry.
    struct Topic {
        let topic: String
        let course: String
        let learner: String
    }

    private var sorted: [Topic] = []
    private var added: [Topic] = []

    /// Adds the topic of a new entry of the table.
    mutating func add(course: String, learner: String) {
        added.append(Topic(topic: EventTopic.progress(course: course, learner: learner), course: course, learner: learner))
    }

    /// Removes the topics of the learners `learners`, whose entries left the table.
    mutating func remove(learners: Set<String>) {
        sorted.removeAll { learners.contains($0.learner) }
        added.removeAll { learners.contains($0.learner) }
    }

    /// The topics that start with `prefix` and come after `cursor` (all of them without one), in order.
    mutating func topics(startingWith prefix: String, after cursor: String?) -> some Sequence<Topic> {
        mergeAdded()
        // A cursor starts with the prefix, so the topics after it that share the prefix follow it at once.
        let start = cursor.map { cursor in firstIndex { Self.precedes(cursor, $0.topic) } } ?? firstIndex { !Self.precedes($0.topic, prefix) }
        return sorted[start...].lazy.prefix { $0.topic.utf8.starts(with: prefix.utf8) }
    }

    /// The first index where `isPastStart` holds; it is false and then true along the sorted topics.
    private func firstIndex(where isPastStart: (Topic) -> Bool) -> Int {
        var low = 0
        var high = sorted.count
        while low < high {
            let middle = (low + high) / 2
            if isPastStart(sorted[middle]) { high = middle } else { low = middle + 1 }
        }
        return low
    }

    private mutating func mergeAdded() {
        guard !added.isEmpty else { return }
        added.sort { Self.precedes($0.topic, $1.topic) }
        var merged: [Topic] = []
        merged.reserveCapacity(sorted.count + added.count)
        var old = sorted.makeIterator()
        var new = added.makeIterator()
        var nextOld = old.next()
        var nextNew = new.next()
        while let left = nextOld, let right = nextNew {
            if Self.precedes(right.topic, left.topic) {
                merged.append(right)
                nextNew = new.next()
            } else {
                merged.append(left)
                nextOld = old.next()
            }
        }
        if let left = nextOld { merged.append(left) }
        if let right = nextNew { merged.append(right) }
        merged.append(contentsOf: IteratorSequence(old))
        merged.append(contentsOf: IteratorSequence(new))
        sorted = merged
        added.removeAll()
    }

    /// Byte order, in which the topics sharing a prefix are always adjacent.
    private static func precedes(_ left: String, _ right: String) -> Bool {
        left.utf8.lexicographicallyPrecedes(right.utf8)
    }
}
