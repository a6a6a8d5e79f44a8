import Synchronization

/// Sync failures a test asks for: every sync of a file under a given directory fails with a
/// given errno, as a failing disk's would, without a disk that fails. Only the package's tests
/// can reach it; a process is driven from outside with libfiu instead (`fiu-run`, `fiu-ctrl`).
package enum SyncFaults {
    private static let failing = Mutex<[(prefix: String, errno: Int32)]>([])

    /// From now on, every sync of a path under `directory` fails with `errno`.
    package static func fail(under directory: String, errno: Int32) {
        failing.withLock { $0.append((directory.hasSuffix("/") ? directory : directory + "/", errno)) }
    }

    /// Syncs under `directory` work again.
    package static func clear(under directory: String) {
        let prefix = directory.hasSuffix("/") ? directory : directory + "/"
        failing.withLock { $0.removeAll { $0.prefix == prefix } }
    }

    /// The errno a sync of `path` is to fail with, if a test asked for one.
    static func injected(for path: String) -> Int32? {
        failing.withLock { faults in
            guard !faults.isEmpty else { return nil }
            return faults.first { path.hasPrefix($0.prefix) || path + "/" == $0.prefix }?.errno
        }
    }
}
