import LyceumSupport

/// One learner's progress records by course, and in the order `progress list` gives them (most
/// recently updated first, ties by course id), kept up to date as records are stored and
/// removed (issue 40): a page is a seek and a walk, not a sort of every course the learner
/// started.
struct LearnerRecords: Sendable {
    /// A record's place in the list's order.
    struct Place: Sendable, Equatable {
        let updatedAt: Int64
        let course: String

        /// Whether this place comes first in the list: later updates first, then course ids in order.
        func precedes(_ other: Place) -> Bool {
            updatedAt != other.updatedAt ? updatedAt > other.updatedAt : course < other.course
        }
    }

    private(set) var byCourse: [String: CourseProgress] = [:]
    private var order = OrderedIndex<Place>()

    var isEmpty: Bool { byCourse.isEmpty }

    /// Stores `record`, returning the one it replaces.
    mutating func store(_ record: CourseProgress) -> CourseProgress? {
        let old = byCourse.updateValue(record, forKey: record.course)
        if let old { unindex(old) }
        order.insert(Place(updatedAt: record.updatedAt, course: record.course)) { $0.precedes($1) }
        return old
    }

    /// Removes the record of `course`, returning it.
    mutating func remove(course: String) -> CourseProgress? {
        guard let old = byCourse.removeValue(forKey: course) else { return nil }
        unindex(old)
        return old
    }

    /// At most `limit` records in the list's order, starting after `after` when given.
    func records(after: Place?, limit: Int) -> [CourseProgress] {
        let start = after.map { after in order.firstPosition { after.precedes($0) } } ?? order.firstPosition { _ in true }
        return order.elements(from: start).prefix(limit).map { byCourse[$0.course]! }
    }

    private mutating func unindex(_ record: CourseProgress) {
        let place = Place(updatedAt: record.updatedAt, course: record.course)
        let position = order.firstPosition { !$0.precedes(place) }
        precondition(position != order.endPosition && order[position] == place, "a progress record missing from its learner's order")
        order.remove(at: position)
    }
}
