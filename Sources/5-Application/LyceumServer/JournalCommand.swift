import CommandSyntax
import Foundation
import Journal
import Partitions
import ServiceHosting

/// `lyceum journal check|repair|compact --data DIR`: the journal's maintenance tools. DIR is a
/// journal's directory, or a data directory of `serve`/`worker`, whose services' journals (in
/// `DIR/books`, `DIR/progress`, and a partitioned worker's `DIR/books/p<N>`…) are each handled in turn. Each exits 0 when the journal is (now)
/// healthy, 1 when it is not or a step failed, 2 for a usage error.
public enum JournalCommand {
    /// `lyceum journal` and its three subcommands.
    public static let declaration = Command(
        "journal", summary: "check, repair or compact the journals of a data directory",
        subcommands: [
            action("check", summary: """
                read the journal without changing it, decoding every value as its service does; report
                records, size, live entities and the first problem (damage, or a value that does not
                decode) with its offset (exit 0 only if healthy)
                """, perform: check),
            action("repair", summary: """
                back the journal up, then cut it at its first damaged record (refused while a server
                holds the directory); a value that does not decode is reported, never cut
                """, perform: repair),
            action("compact", summary: """
                rewrite the journal as its live state (refused while a server holds the directory, and
                when a value does not decode)
                """, perform: compact),
        ])

    private static let dataOption = Option(
        "data", .text(placeholder: "DIR"), help: "a data directory of serve or worker (each service's journal in it,\nDIR/books and DIR/progress, and partitions' DIR/books/p<N>…, in turn)\nor one journal's directory",
        required: true)

    private static func action(
        _ name: String, summary: String, perform: @escaping @Sendable (String, ProgressPrinter) throws -> Int32
    ) -> Command {
        Command(name, summary: summary, options: [dataOption]) { parsed in
            let directories: [String]
            do throws(PartitionLayoutError) {
                directories = try journalDirectories(in: parsed.text(dataOption.name) ?? "")
            } catch {
                // A verification tool that took an unreadable listing for "no partitions" would
                // report a data directory as fine without looking at them.
                printError("lyceum journal \(name): \(error)")
                return 1
            }
            var status: Int32 = 0
            for directory in directories {
                if directories.count > 1 { print("== \(directory)") }
                // A partition made by `partitions init` (or a service's directory) before its first
                // write: nothing to check, repair or compact, and nothing wrong.
                if awaitsFirstWrite(directory) {
                    print("status:         empty (no journal yet: nothing was written)")
                    continue
                }
                do {
                    status = max(status, try perform(directory, ProgressPrinter()))
                } catch {
                    printError("lyceum journal \(name): \(error)")
                    status = 1
                }
            }
            return status
        }
    }
}

/// The journal directories under `root`: `root` itself when it holds a journal, else the
/// services' subdirectories that do and, in a partitioned worker's data directory, every
/// partition's (`DATA/<service>/p<N>`, in partition order, with a journal or not yet), else
/// `root` (so that the command reports what is missing).
/// - Throws: `PartitionLayoutError` naming a service's directory that exists and cannot be listed.
private func journalDirectories(in root: String) throws(PartitionLayoutError) -> [String] {
    guard !holdsJournal(root) else { return [root] }
    let services = ServiceRegistry.standard.descriptors.filter(\.isJournaled).map { (root as NSString).appendingPathComponent($0.name) }
    var directories: [String] = []
    for service in services {
        if holdsJournal(service) { directories.append(service) }
        for partition in try PartitionLayout.partitionDirectories(in: service) {
            directories.append((service as NSString).appendingPathComponent(PartitionName.directory(partition)))
        }
    }
    return directories.isEmpty ? [root] : directories
}

private func holdsJournal(_ directory: String) -> Bool { FileManager.default.fileExists(atPath: directory + "/journal.jsonl") }

/// Whether `directory` is a partition's directory (`p<N>`) or a service's that exists without a
/// journal: a journal is created by its first write, so such a directory is empty, not damaged.
private func awaitsFirstWrite(_ directory: String) -> Bool {
    var isDirectory: ObjCBool = false
    guard FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory), isDirectory.boolValue, !holdsJournal(directory) else { return false }
    let name = ((directory as NSString).standardizingPath as NSString).lastPathComponent
    return PartitionName.partition(ofDirectory: Substring(name)) != nil || ServiceRegistry.standard[name]?.isJournaled == true
}

private func check(_ directory: String, progress: ProgressPrinter) throws -> Int32 {
    var state = CheckedState(directory: directory)
    let report = try Journal.check(directory: directory, state: &state, progress: progress.report)
    let live = state.keyed.liveCounts.sorted { $0.key < $1.key }
    print("journal:        \(report.path)")
    print("size:           \(report.fileSize) bytes (\(report.validBytes) valid)")
    print("snapshot:       sequence \(report.snapshotSequence), \(report.snapshotParts) parts")
    print("records:        \(report.records) after the snapshot, last sequence \(report.lastSequence)")
    print("live entities:  \(live.reduce(0) { $0 + $1.value })" + (live.isEmpty ? "" : " (" + live.map { "\($0.key)=\($0.value)" }.joined(separator: " ") + ")"))
    print("values:         \(state.decodedAs)")
    guard let problem = report.problem else {
        print("status:         healthy")
        return 0
    }
    print("status:         \(problem.code) at offset \(problem.offset.map(String.init) ?? "?")" + (problem.sequence.map { ", sequence \($0)" } ?? ""))
    print("problem:        \(problem.message)")
    return 1
}

private func repair(_ directory: String, progress: ProgressPrinter) throws -> Int32 {
    let repair = try Journal.repair(directory: directory, progress: progress.report)
    guard let problem = repair.problem else {
        // Repair only cuts damage; a value that does not decode needs a person, never a cut.
        var state = CheckedState(directory: directory)
        if let undecodable = try Journal.check(directory: directory, state: &state).problem {
            print("not repaired: \(undecodable.code) at offset \(undecodable.offset.map(String.init) ?? "?"): \(undecodable.message)")
            return 1
        }
        print("healthy: nothing to repair")
        return 0
    }
    print("problem:  \(problem.code): \(problem.message)")
    print("backup:   \(repair.backupPath ?? "none")")
    print("dropped:  \(repair.droppedBytes) bytes (\(repair.droppedRecords) lines) from offset \(repair.droppedFromOffset)")
    return 0
}

private func compact(_ directory: String, progress: ProgressPrinter) throws -> Int32 {
    // Opening would create an empty journal; a maintenance tool must not invent one.
    guard holdsJournal(directory) else {
        printError("lyceum journal compact: no journal in \(directory)")
        return 1
    }
    // A value the service cannot decode makes `open` throw: compaction never drops a change.
    var state = CheckedState(directory: directory)
    let journal: Journal
    do {
        journal = try Journal.open(directory: directory, state: &state, progress: progress.report)
    } catch let error as JournalError where error.code == .undecodableValue {
        printError("lyceum journal compact: refusing to compact, which would drop a change that does not decode: \(error)")
        return 1
    }
    defer { journal.close() }
    let sequence = journal.lastSequence
    let report = try journal.compact(progress: progress.report) { (state, sequence) }
    print("compacted: \(report.bytesBefore) → \(report.bytesAfter) bytes, \(report.snapshotChanges) live entities at sequence \(report.snapshotSequence)")
    return 0
}

/// Prints progress to stderr, at most once per percent, so that long replays show they move.
private final class ProgressPrinter {
    private var lastPercent = -1

    func report(_ progress: JournalProgress) {
        let percent = Int(progress.fraction * 100)
        guard percent != lastPercent, progress.bytesTotal > 8 << 20 else { return }
        lastPercent = percent
        printError("\(progress.phase.rawValue): \(percent)% (\(progress.bytesDone) of \(progress.bytesTotal) bytes)")
    }
}
