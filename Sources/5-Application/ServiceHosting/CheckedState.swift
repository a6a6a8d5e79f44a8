import Foundation
import Journal
import Partitions

/// Every live value by collection, and for a service's journal (a directory named after the
/// service, or a partition's directory in it) the service's own state too, so that every value is decoded as serving decodes it.
package struct CheckedState: JournalState {
    /// Every live value, byte for byte, by collection.
    package var keyed = KeyedJournalState()
    /// The service's own state, when the directory is a service's journal.
    package var decoded: (any JournalState)?
    /// The service the directory is named after, if any.
    package let service: String?

    /// The state to check the journal in `directory` with (`DATA/books`, `DATA/books/p3`).
    package init(directory: String) {
        var components = (directory as NSString).standardizingPath.components(separatedBy: "/")
        // A partition's journal (DATA/books/p3) is its service's.
        if let last = components.last, PartitionName.partition(ofDirectory: Substring(last)) != nil { components.removeLast() }
        let name = components.last ?? ""
        // A directory named after no service (one journal of another kind) is checked as a
        // journal only: its values are not decoded.
        let descriptor = ServiceRegistry.standard[name]
        service = descriptor?.name
        decoded = descriptor?.emptyState?()
    }

    package mutating func apply(_ change: JournalChange) throws(UndecodableValue) {
        try decoded?.apply(change)
        keyed.apply(change)
    }

    /// The values byte for byte as stored: compaction rewrites nothing it did not have to.
    package func snapshot() -> [JournalChange] { keyed.snapshot() }

    /// How the values were decoded, for `lyceum journal check`'s report.
    package var decodedAs: String {
        guard decoded != nil, let service else { return "not decoded (not a directory named after a service: books, progress)" }
        return "decoded as \(service), as serving does"
    }
}
