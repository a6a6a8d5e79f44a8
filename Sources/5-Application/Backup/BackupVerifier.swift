import DurableFiles
import Journal
import ServiceHosting
import Partitions

/// `lyceum backup verify DIR`, and the check every restore makes first: the manifest reads and
/// comes from a build whose value formats this one reads; every journal file it names is a
/// regular file (never a link) of exactly its length and checksum, and opens as a journal whose
/// every value decodes as its service decodes it (the checks of `lyceum journal check`), ending
/// at the manifest's sequence with its number of entries.
package enum BackupVerifier {
    /// The manifest of the backup in `directory`, once every check has passed.
    /// - Throws: `BackupError` naming the first file at fault and why.
    package static func verify(_ directory: String) throws(BackupError) -> BackupManifest {
        guard PrivateFiles.isDirectory(directory) else {
            throw BackupError(path: directory, "is not a backup directory (missing, not a directory, or a link)")
        }
        let manifestPath = path(directory, BackupLayout.manifest)
        guard PrivateFiles.exists(manifestPath) else {
            throw BackupError(path: manifestPath, "is missing: the backup is incomplete (its copy never finished)")
        }
        let manifest: BackupManifest
        do {
            manifest = try BackupManifest(bytes: try PrivateFiles.contents(of: manifestPath, limit: BackupManifest.maximumBytes))
        } catch let error as BackupError {
            throw error
        } catch {
            throw BackupError(path: manifestPath, "\(error)")
        }
        for (kind, format) in manifest.valueFormats.sorted(by: { $0.key < $1.key }) {
            let newest = BackupLayout.newestValueFormats[kind] ?? 0
            guard format <= newest else {
                throw BackupError(path: manifestPath, "written by a newer Lyceum (\(manifest.lyceumVersion)): value format v\(format) of \(kind), this build reads up to v\(newest)")
            }
        }
        for journal in manifest.journals { try check(journal, in: directory) }
        return manifest
    }

    private static func check(_ journal: BackupManifest.Entry, in directory: String) throws(BackupError) {
        let file = path(directory, journal.file)
        let summary: JournalFileSummary
        do {
            summary = try SnapshotFile.summary(of: file)
        } catch {
            throw BackupError(path: file, "cannot be read (missing, or a link): \(error)")
        }
        guard summary.bytes == journal.bytes else {
            throw BackupError(path: file, "has \(summary.bytes) bytes; the manifest says \(journal.bytes)")
        }
        guard summary.crc32c == journal.crc32c else {
            throw BackupError(path: file, "has CRC-32C \(summary.crc32c); the manifest says \(journal.crc32c): the file is damaged")
        }
        let journalDirectory = DurableFile.parentDirectory(of: file)
        var state = CheckedState(directory: journalDirectory)
        let report: JournalReport
        do {
            report = try Journal.check(directory: journalDirectory, state: &state)
        } catch {
            throw BackupError(path: file, "cannot be checked: \(error)")
        }
        if let problem = report.problem {
            throw BackupError(path: file, "\(problem.code) at offset \(problem.offset.map(String.init) ?? "?"): \(problem.message)")
        }
        let entries = state.keyed.liveCounts.values.reduce(0, +)
        guard report.lastSequence == journal.sequence, entries == journal.entries else {
            throw BackupError(path: file, "ends at sequence \(report.lastSequence) with \(entries) entries; the manifest says \(journal.sequence) with \(journal.entries)")
        }
    }

    private static func path(_ directory: String, _ name: String) -> String {
        directory.hasSuffix("/") ? directory + name : directory + "/" + name
    }
}
