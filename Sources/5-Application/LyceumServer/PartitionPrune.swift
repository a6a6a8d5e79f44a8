#if canImport(Glibc)
import Glibc
#endif
import Foundation
import PartitionOperations
import Partitions

/// `lyceum partitions prune`: removes, from a worker host's data directory, the copies of
/// partitions that moves renamed away (`MovedAwayCopy`), once they are old enough. A copy is
/// removed only when it is a directory (not a link) whose manifest names the very partition its
/// name says; a live `p<N>` never matches. Pruning is safe only once the target has adopted the
/// partition (`lyceum status` shows it as the owner): until then the copy is what finishes the move.
struct PartitionPrune {
    /// Exit statuses.
    enum Status {
        /// Every moved-away copy old enough was removed (or none was there).
        static let pruned: Int32 = 0
        /// A directory named like a moved-away copy is not one, or could not be removed: it is kept.
        static let kept: Int32 = 1
    }

    /// The data directory.
    let dataDirectory: String
    /// The partitioned services whose directories are looked at.
    let services: [String]
    /// Only copies renamed away longer ago than this are removed; `nil`: any.
    let olderThan: Duration?
    /// Whether to only print what would be removed.
    let dryRun: Bool

    /// Removes the copies, printing each with its bytes and the total freed to standard output,
    /// and each copy kept and why to standard error; returns the exit status.
    func run(now: Date = Date()) -> Int32 {
        let cutoff = olderThan.map { PartitionMover.stamp(now.addingTimeInterval(-Double($0.components.seconds))) }
        var status = Status.pruned
        var removed = (copies: 0, bytes: 0)
        let verb = dryRun ? "would remove" : "removed"
        for copy in MovedAwayCopy.all(in: dataDirectory, services: services) {
            if let cutoff, copy.stamp >= cutoff { continue }
            if let refusal = Self.refusal(copy) {
                printError("lyceum partitions prune: kept \(copy.directory): \(refusal)")
                status = Status.kept
                continue
            }
            let bytes = Self.bytes(under: copy.directory)
            if !dryRun {
                do { try FileManager.default.removeItem(atPath: copy.directory) } catch {
                    printError("lyceum partitions prune: kept \(copy.directory): cannot be removed: \(error.localizedDescription)")
                    status = Status.kept
                    continue
                }
            }
            print("\(verb) \(copy.directory) (\(copy.service).p\(copy.partition) moved to \(copy.to), \(bytes) bytes)")
            removed.copies += 1
            removed.bytes += bytes
        }
        print("\(verb) \(removed.copies) moved-away \(removed.copies == 1 ? "copy" : "copies"), \(removed.bytes) bytes\(dryRun ? "" : " freed")")
        return status
    }

    /// Why `copy` is not removed though named like a moved-away copy; `nil` when it is one.
    private static func refusal(_ copy: MovedAwayCopy) -> String? {
        var status = stat()
        guard lstat(copy.directory, &status) == 0, status.st_mode & S_IFMT == S_IFDIR else { return "is not a directory" }
        do throws(PartitionLayoutError) {
            let manifest = try PartitionManifest.read(in: copy.directory)
            guard manifest.service == copy.service, manifest.partition == copy.partition else {
                return "its manifest names partition \(manifest.partition) of \(manifest.service), not \(copy.partition) of \(copy.service)"
            }
            return nil
        } catch {
            return "has no readable partition manifest: \(error)"
        }
    }

    /// The bytes of the files under `directory`, links not followed.
    private static func bytes(under directory: String) -> Int {
        guard let names = FileManager.default.enumerator(atPath: directory) else { return 0 }
        var total = 0
        for case let name as String in names {
            var status = stat()
            guard lstat((directory as NSString).appendingPathComponent(name), &status) == 0, status.st_mode & S_IFMT == S_IFREG else { continue }
            total += Int(status.st_size)
        }
        return total
    }
}
