import Foundation
import LyceumSupport

/// Blocking steps run side by side, a thread each: a node's replicas handed over or stopped one
/// after another pay each one's etcd round trips and thread wake-ups in turn (32 replicas took
/// over 5 s each way on the netns cluster: docs/cluster.md, *Rolling restarts*), side by side
/// about the slowest one's.
enum Concurrently {
    /// Calls `body` with each of `items`, each on a thread of its own, and returns once every call has.
    static func forEach<Item: Sendable>(_ items: [Item], _ body: @escaping @Sendable (Item) -> Void) {
        guard items.count > 1 else { return items.forEach(body) }
        let remaining = Monitor(items.count)
        for item in items {
            Thread.detachNewThread {
                body(item)
                remaining.update { $0 -= 1 }
            }
        }
        remaining.wait(until: { $0 == 0 })
    }
}
