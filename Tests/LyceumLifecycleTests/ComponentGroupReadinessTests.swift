import Foundation
import LyceumLifecycle
import LyceumTestSupport
import Synchronization
import Testing

@Suite("ComponentGroup readiness")
struct ComponentGroupReadinessTests {
    /// What happened, in order, across the services' threads.
    final class Journal: Sendable {
        let entries = Mutex<[String]>([])
        func note(_ entry: String) { entries.withLock { $0.append(entry) } }
    }

    /// A dependency (a ZAP handler, say) that is ready once `run()` starts, or never.
    final class Dependency: ReadinessReporting {
        let journal: Journal
        let becomesReady: Bool
        private let started = Gate()
        private let stopped = Mutex(false)
        init(_ journal: Journal, becomesReady: Bool = true) {
            self.journal = journal
            self.becomesReady = becomesReady
        }
        func run() throws {
            if becomesReady { started.open() } else { throw CancellationError() }
            while !stopped.withLock({ $0 }) { Thread.sleep(forTimeInterval: 0.001) }
            journal.note("dependency stopped")
        }
        func shutdown() { stopped.withLock { $0 = true } }
        func waitUntilReady(timeout: Duration) throws {
            guard started.wait(within: .milliseconds(200)) else { throw CancellationError() }
        }
    }

    /// A service that works a little after being asked to stop, then returns.
    final class Dependent: Component {
        let journal: Journal
        private let stopped = Mutex(false)
        init(_ journal: Journal) { self.journal = journal }
        func run() {
            journal.note("dependent started")
            while !stopped.withLock({ $0 }) { Thread.sleep(forTimeInterval: 0.001) }
            Thread.sleep(forTimeInterval: 0.05)
            journal.note("dependent stopped")
        }
        func shutdown() { stopped.withLock { $0 = true } }
    }

    /// Stops by itself at once, which makes the group stop the others.
    final class Quitter: Component {
        func run() {}
        func shutdown() {}
    }

    @Test("a ReadinessReporting service is stopped only after every service started after it has stopped")
    func dependenciesStopLast() {
        let journal = Journal()
        let group = ComponentGroup([("dependency", Dependency(journal)), ("dependent", Dependent(journal)), ("quitter", Quitter())])
        _ = group.run()
        #expect(journal.entries.withLock { $0 } == ["dependent started", "dependent stopped", "dependency stopped"])
    }

    @Test("when a dependency cannot become ready, the services after it never start and the group fails")
    func noServiceStartsAfterAnUnreadyDependency() {
        let journal = Journal()
        let group = ComponentGroup([("dependency", Dependency(journal, becomesReady: false)), ("dependent", Dependent(journal))])
        #expect(group.run() == 1)
        #expect(journal.entries.withLock { $0 }.isEmpty)
    }
}
