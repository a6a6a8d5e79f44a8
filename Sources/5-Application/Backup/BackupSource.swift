import DurableFiles
import Foundation
import JSON
import Journal
import LearningServices
import LyceumLogging
import Majordomo
import ServiceHosting
import Synchronization
#if canImport(Glibc)
import Glibc
#endif
import Partitions

/// Online backups of the journals a process holds, pulled by `lyceum backup` (protocol/backup.md):
/// `serve` answers them as the management service `lyceum.backup`, a partitioned worker as the
/// ops `backup_begin`, `backup_read` and `backup_end` of its node service. `begin` captures every journal's service
/// state under its write lock (the compaction's capture) and writes each as a snapshot file
/// under `DATA/.backups/<id>/`, on a thread of its own; `read` hands out those files in chunks;
/// `end` removes them. A backup not asked anything for `idleLimit` is removed, so a client
/// killed half-way leaves nothing behind; files left by a crash are removed at the next start.
package final class BackupSource: Sendable {
    /// The service's name; `lyceum.` names need the `manage` permission (an `admin` key).
    package static let serviceName = "lyceum.backup"
    /// At most this many backups are kept at once: each holds a copy of every journal's state on disk.
    static let maxBackups = 2

    private struct Backup {
        let directory: String
        let started: ContinuousClock.Instant
        var lastUsed: ContinuousClock.Instant
        /// Each snapshot file's length, by its path inside the backup; empty until written.
        var files: [String: UInt64] = [:]
    }

    private let services: @Sendable () -> [HostedService]
    private let root: String
    private let partitions: Int
    private let idleLimit: Duration
    private let backups = Mutex<[String: Backup]>([:])
    private let metrics = BackupMetrics()
    private let logger = Logger(component: "backup")
    private let lyceumVersion: String

    /// The backups of the journals of `services` (asked at each `begin`: a worker's partitions
    /// change with moves), written under `dataDirectory/.backups` (whatever a crash left there is
    /// removed now), for a cluster of `partitions` partitions (0: none); a backup whose client
    /// asks nothing for `idleLimit` (`backup-idle-limit`) is abandoned. Manifests name
    /// `lyceumVersion` as the version that took them.
    package init(
        services: @escaping @Sendable () -> [HostedService], dataDirectory: String, partitions: Int, lyceumVersion: String,
        idleLimit: Duration = .seconds(60)
    ) throws {
        self.services = services
        self.lyceumVersion = lyceumVersion
        root = (dataDirectory as NSString).appendingPathComponent(".backups")
        self.partitions = partitions
        self.idleLimit = idleLimit
        if FileManager.default.fileExists(atPath: root) { try FileManager.default.removeItem(atPath: root) }
    }

    /// `serve`'s broker's local service `lyceum.backup`.
    package var localService: LocalService {
        LocalService(name: Self.serviceName) { [self] body, _, later in answer(body, opPrefix: "", later: later) }
    }

    /// A node service's handler: requests whose op starts with `backup_` are answered here, the
    /// others by `otherwise`.
    package func handler(otherwise: @escaping WorkerPool.Handler) -> WorkerPool.Handler {
        { [self] body, caller, later in
            guard let first = body.first, case .string(let op) = JSONParser().member("op", in: first),
                  op.hasPrefix(BackupRequest.nodeOpPrefix) else { return otherwise(body, caller, later) }
            return answer(body, opPrefix: BackupRequest.nodeOpPrefix, later: later)
        }
    }

    private func answer(_ body: [[UInt8]], opPrefix: String, later: DeferredReply) -> [[UInt8]]? {
        do throws(ServiceError) {
            guard let first = body.first, body.count == 1 else {
                throw ServiceError(.badRequest, "a backup request is exactly one frame of JSON; this one has \(body.count)")
            }
            switch try BackupRequest(first, opPrefix: opPrefix) {
            case .begin:
                try begin(later)
                return nil
            case .read(let id, let file, let offset, let maxBytes): return try read(id, file: file, offset: offset, maxBytes: maxBytes)
            case .end(let id, let complete): return [try end(id, complete: complete).successReplyFrame]
            }
        } catch {
            return [error.replyFrame]
        }
    }

    private func begin(_ later: DeferredReply) throws(ServiceError) {
        let id = String(UInt64.random(in: 0...UInt64.max), radix: 16)
        let directory = (root as NSString).appendingPathComponent(id)
        let now = ContinuousClock.now
        try backups.withLock { (backups) throws(ServiceError) in
            guard backups.count < Self.maxBackups else {
                throw ServiceError(.unavailable, "\(backups.count) backups are being taken already; wait for one to end (or to be abandoned after \(idleLimit))")
            }
            backups[id] = Backup(directory: directory, started: now, lastUsed: now)
        }
        let thread = Thread { [self] in
            Thread.nameCurrent("backup")
            later.send([snapshot(id, into: directory)])
            removeWhenAbandoned(id)
        }
        thread.start()
    }

    /// Writes every journal's snapshot into `directory` and returns the reply to `begin`.
    private func snapshot(_ id: String, into directory: String) -> [UInt8] {
        var journals: [JSONValue] = []
        var files: [String: UInt64] = [:]
        do {
            try PrivateFiles.makeDirectory(directory, parents: true)
            for hosted in services() {
                guard let capture = hosted.capture else { continue }
                let relative = BackupLayout.file(service: hosted.service.name, partition: hosted.partition?.partition)
                let path = (directory as NSString).appendingPathComponent(relative)
                try PrivateFiles.makeDirectory(DurableFile.parentDirectory(of: path), parents: true)
                let captured = try capture()
                let written = try SnapshotFile.write(captured.state, sequence: captured.sequence, to: path)
                files[relative] = written.summary.bytes
                journals.append(BackupManifest.Entry(
                    service: hosted.service.name, partition: hosted.partition?.partition, file: relative, sequence: written.sequence,
                    entries: written.changes, bytes: written.summary.bytes, crc32c: written.summary.crc32c).json)
            }
        } catch {
            backups.withLock { _ = $0.removeValue(forKey: id) }
            try? FileManager.default.removeItem(atPath: directory)
            metrics.failed()
            logger.error("backup failed; nothing kept", ["backup": id, "error": "\(error)"])
            return ServiceError(.internal, "the backup could not be written: \(error)").replyFrame
        }
        let kept = backups.withLock { backups in
            backups[id]?.files = files
            backups[id]?.lastUsed = .now
            return backups[id] != nil
        }
        guard kept else { return ServiceError(.notFound, "backup \(id) was ended while it was being written").replyFrame }
        var result = JSONObject()
        result.append("backup", .string(id))
        result.append("lyceum_version", .string(lyceumVersion))
        result.append("value_formats", BackupLayout.valueFormats)
        result.append("partitions", .integer(partitions))
        result.append("journals", .array(journals))
        logger.info("backup snapshots written", ["backup": id, "journals": String(journals.count), "bytes": String(files.values.reduce(0, +))])
        return JSONValue.object(result).successReplyFrame
    }

    /// `[{"file","offset","bytes","crc32c"}, BYTES]`: at most `maxBytes` of a snapshot file from
    /// `offset`; none at its end.
    private func read(_ id: String, file: String, offset: Int, maxBytes: Int) throws(ServiceError) -> [[UInt8]] {
        let (directory, size) = try backups.withLock { (backups) throws(ServiceError) -> (String, UInt64) in
            guard var backup = backups[id] else { throw ServiceError(.notFound, "there is no backup \(id) (ended, abandoned, or never begun)", field: "$.backup") }
            guard let size = backup.files[file] else {
                throw ServiceError(.notFound, "backup \(id) has no file \(PeerText.excerpt(file))", field: "$.file")
            }
            backup.lastUsed = .now
            backups[id] = backup
            return (backup.directory, size)
        }
        guard UInt64(offset) <= size else { throw ServiceError(.badRequest, "the offset \(offset) is past the file's end (\(size) bytes)", field: "$.offset") }
        let count = Int(min(UInt64(maxBytes), size - UInt64(offset)))
        var bytes = [UInt8](repeating: 0, count: count)
        let path = (directory as NSString).appendingPathComponent(file)
        let fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { throw ServiceError(.internal, "cannot open the backup's file \(file): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        var done = 0
        while done < count {
            let got = bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress! + done, count - done, off_t(offset + done)) }
            if got < 0, errno == EINTR { continue }
            guard got > 0 else { throw ServiceError(.internal, "cannot read the backup's file \(file) at \(offset + done)") }
            done += got
        }
        let chunk = JournalChunk(file: file, offset: UInt64(offset), bytes: bytes)
        var header = JSONObject()
        header.append("file", .string(file))
        header.append("offset", .integer(offset))
        header.append("bytes", .integer(count))
        header.append("crc32c", .integer(Int(chunk.crc32c)))
        return [JSONValue.object(header).successReplyFrame, bytes]
    }

    /// Removes the backup's files; `complete` says the client holds a whole copy, which is
    /// logged and recorded as the last successful backup.
    private func end(_ id: String, complete: Bool) throws(ServiceError) -> JSONValue {
        guard let backup = backups.withLock({ $0.removeValue(forKey: id) }) else {
            throw ServiceError(.notFound, "there is no backup \(id) (ended, abandoned, or never begun)", field: "$.backup")
        }
        try? FileManager.default.removeItem(atPath: backup.directory)
        let bytes = backup.files.values.reduce(0, +)
        let elapsed = ContinuousClock.now - backup.started
        if complete {
            metrics.succeeded(bytes: bytes, elapsed: elapsed)
            logger.info("backup complete", ["backup": id, "bytes": String(bytes), "ms": String(elapsed.milliseconds)])
        } else {
            metrics.failed()
            logger.warning("backup ended incomplete by its client", ["backup": id])
        }
        return ["backup": .string(id), "ended": .bool(true)]
    }

    /// Waits until the backup ends or goes unused for `idleLimit`, then removes what is left.
    private func removeWhenAbandoned(_ id: String) {
        // Looks every second, or more often under a shorter limit, so none is overshot by much.
        let tick = min(Duration.seconds(1), idleLimit / 4)
        while true {
            Thread.sleep(forTimeInterval: Double(max(1, tick.milliseconds)) / 1000)
            let abandoned = backups.withLock { backups -> Backup?? in
                guard let backup = backups[id] else { return .some(nil) }
                guard ContinuousClock.now - backup.lastUsed > idleLimit else { return nil }
                return backups.removeValue(forKey: id)
            }
            guard let abandoned else { continue }
            guard let backup = abandoned else { return }
            try? FileManager.default.removeItem(atPath: backup.directory)
            metrics.failed()
            logger.warning("backup abandoned by its client; its files are removed", ["backup": id, "idle_limit": "\(idleLimit)"])
            return
        }
    }
}
