import DurableFiles
import Backup
import Foundation
import Journal
import Partitions
#if canImport(Glibc)
import Glibc
#endif

/// `lyceum restore --from BACKUP --data DIR`: makes DIR, which must not exist or be empty, the
/// data directory the backup was taken of (for `serve`), or with `partitions` and `owned` a
/// cluster worker host's share of it (the partitions it will hold, each with its `PARTITION`
/// manifest). The backup is verified whole first, and the copy is built beside DIR and renamed
/// into place at the end, so a refusal or a failure leaves nothing written.
struct BackupRestore {
    /// The backup directory.
    let source: String
    /// The data directory to create.
    let data: String
    /// The cluster's partition count, 0 for an unpartitioned `serve`; must be the backup's.
    let partitions: Int
    /// The partitions this host will hold, for a partitioned restore; `nil` for all.
    let owned: Set<Int>?

    /// Restores, printing what it did; returns 0 when DIR holds the backup, 1 when refused or failed.
    func run() -> Int32 {
        do {
            let manifest = try BackupVerifier.verify(source)
            let chosen = try choose(from: manifest)
            try restore(chosen)
            let bytes = chosen.reduce(0) { $0 + $1.bytes }
            print("restored \(chosen.count) journals (\(bytes) bytes) from the backup of \(manifest.created) into \(data)")
            for journal in chosen { print("  \(journal.file): sequence \(journal.sequence), \(journal.entries) entries") }
            return 0
        } catch {
            printError("lyceum restore: refused, nothing written: \(error)")
            return 1
        }
    }

    /// The journals this restore writes, after checking the partition count and the target.
    private func choose(from manifest: BackupManifest) throws(BackupError) -> [BackupManifest.Entry] {
        guard manifest.partitions == partitions else {
            throw BackupError(path: source, "the backup holds \(manifest.partitions) partitions (0: unpartitioned); this restore is for \(partitions) (--partitions)")
        }
        if PrivateFiles.exists(data) {
            guard try PrivateFiles.isEmptyDirectory(data) else {
                throw BackupError(path: data, "is not empty; a restore goes into a new or empty data directory")
            }
        }
        guard !PrivateFiles.exists(staging) else {
            throw BackupError(path: staging, "is left by an interrupted restore; remove it first")
        }
        guard let owned else { return manifest.journals }
        let chosen = manifest.journals.filter { $0.partition.map(owned.contains) ?? false }
        guard !chosen.isEmpty else { throw BackupError(path: source, "holds none of the partitions given with --own") }
        return chosen
    }

    /// Where the copy is built before it is renamed to `data`.
    private var staging: String { (data.hasSuffix("/") ? String(data.dropLast()) : data) + ".restoring" }

    private func restore(_ journals: [BackupManifest.Entry]) throws(BackupError) {
        try PrivateFiles.makeDirectory(staging)
        do throws(BackupError) {
            for journal in journals {
                let target = (staging as NSString).appendingPathComponent(journal.file)
                try PrivateFiles.makeDirectory(DurableFile.parentDirectory(of: target), parents: true)
                try copy((source as NSString).appendingPathComponent(journal.file), to: target, expecting: journal)
                if let partition = journal.partition {
                    do throws(PartitionLayoutError) {
                        try PartitionManifest(service: journal.service, partition: partition, partitions: partitions)
                            .write(in: DurableFile.parentDirectory(of: target))
                    } catch {
                        throw BackupError(path: error.path, error.message)
                    }
                }
            }
            if PrivateFiles.exists(data) {
                guard rmdir(data) == 0 else { throw BackupError(path: data, "cannot replace the empty directory: \(String(cString: strerror(errno)))") }
            }
            try PrivateFiles.rename(staging, to: data)
        } catch {
            try? FileManager.default.removeItem(atPath: staging)
            throw error
        }
    }

    /// Copies `source` to the new file `target`, checking that what was copied is still what the
    /// manifest describes (the backup may have changed since it was verified), and syncs it.
    private func copy(_ source: String, to target: String, expecting journal: BackupManifest.Entry) throws(BackupError) {
        let input = open(source, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard input >= 0 else { throw BackupError(path: source, "cannot open: \(String(cString: strerror(errno)))") }
        defer { close(input) }
        let output = try PrivateFiles.create(target)
        defer { close(output) }
        var buffer = [UInt8](repeating: 0, count: JournalChunk.maxBytes)
        var offset: UInt64 = 0
        var crc: UInt32 = 0
        while true {
            let count = buffer.withUnsafeMutableBytes { pread(input, $0.baseAddress!, $0.count, off_t(offset)) }
            if count < 0, errno == EINTR { continue }
            guard count >= 0 else { throw BackupError(path: source, "cannot read at \(offset): \(String(cString: strerror(errno)))") }
            if count == 0 { break }
            let bytes = Array(buffer[0..<count])
            try PrivateFiles.write(output, bytes, at: offset, path: target)
            crc = CRC32C.checksum(bytes, continuing: crc)
            offset += UInt64(count)
        }
        guard offset == journal.bytes, crc == journal.crc32c else {
            throw BackupError(path: source, "changed while it was restored: \(offset) bytes with CRC-32C \(crc); the manifest says \(journal.bytes) with \(journal.crc32c)")
        }
        try PrivateFiles.sync(output, path: target)
    }
}
