import DurableFiles
import Backup
import Configuration
import Foundation
import JSON
import Journal
import LearningServices
import LyceumSupport
import Majordomo
import ZeroMQ
#if canImport(Glibc)
import Glibc
#endif
import Partitions

/// `lyceum backup --to DIR`: asks a running `serve` (its `lyceum.backup`), or every partitioned
/// worker of a cluster (its node service), for a backup and copies it chunk by chunk into DIR, a new directory (mode 0700, files 0600), then writes the manifest
/// last: a backup with a manifest is whole, one without it (a client killed half-way) is not.
/// Memory stays at one chunk whatever the data's size; the server's writers carry on meanwhile.
struct BackupCopy {
    /// Exit statuses: 0 the backup is whole; 1 it failed (nothing usable is left in DIR: no
    /// manifest); 3 no broker answered.
    enum Status {
        static let complete: Int32 = 0
        static let failed: Int32 = 1
        static let noReply: Int32 = 3
    }

    /// Where the backup goes.
    let directory: String
    let settings: ClientSettings
    let security: ProcessSecurity
    /// The most bytes asked for in one `read`: the client's memory bound.
    var chunkBytes = JournalChunk.maxBytes
    /// How long `begin` may take: it writes every journal's snapshot before it answers.
    var beginTimeout: Duration = .seconds(600)

    /// One part of the backup: `serve`'s `lyceum.backup`, or one partitioned worker's node service.
    private struct Part {
        let service: String
        let opPrefix: String
        var id = ""
        var manifest: BackupManifest?

        init(service: String) {
            self.service = service
            opPrefix = service == BackupSource.serviceName ? "" : BackupRequest.nodeOpPrefix
        }

        /// The request `op` (`begin`, `read`, `end`) to this part, with `members`.
        func request(_ op: String, _ members: [String: JSONValue] = [:]) -> JSONValue {
            var object = JSONObject()
            object.append("op", .string(opPrefix + op))
            if !id.isEmpty { object.append("backup", .string(id)) }
            for (name, value) in members.sorted(by: { $0.key < $1.key }) { object.append(name, value) }
            return .object(object)
        }
    }

    /// Takes the backup, printing progress to stderr and a summary to stdout.
    func run() -> Int32 {
        let started = ContinuousClock.now
        do {
            try prepareDirectory()
        } catch {
            printError("lyceum backup: \(error)")
            return Status.failed
        }
        let context: Context
        let found: (endpoint: String, services: [String])
        do {
            context = try Context()
            found = try discover(context: context)
        } catch let error as BackupError {
            printError("lyceum backup: \(error)")
            return Status.failed
        } catch {
            return CallCommand.exitStatus(reporting: error, of: "lyceum backup", calling: ProcessReport.statusService, settings: settings)
        }
        let client = makeClient(found.endpoint, timeout: settings.timeout, context: context)
        let beginning = makeClient(found.endpoint, timeout: max(settings.timeout, beginTimeout), context: context)
        defer { client.close(); beginning.close() }
        var parts = found.services.map(Part.init)
        do {
            for index in parts.indices {
                let result = try call(beginning, parts[index].service, parts[index].request("begin")).result
                if case .string(let id)? = result["backup"] { parts[index].id = id }
                do throws(JSONReadError) {
                    parts[index].manifest = try BackupManifest(begun: result, source: found.endpoint)
                } catch {
                    throw BackupError(path: parts[index].service, "answered begin with something that is not a backup: \(error)")
                }
            }
            let manifest = try BackupManifest(combining: parts.compactMap(\.manifest), source: found.endpoint)
            var progress = CopyProgress(total: manifest.totalBytes)
            for part in parts {
                for journal in part.manifest?.journals ?? [] { try copy(journal, of: part, with: client, progress: &progress) }
            }
            try PrivateFiles.writeNew((directory as NSString).appendingPathComponent(BackupLayout.manifest), manifest.bytes)
            for part in parts {
                do {
                    _ = try call(client, part.service, part.request("end", ["complete": .bool(true)]))
                } catch {
                    printError("lyceum backup: warning: the backup is whole, but \(part.service) was not told so (its last-backup metric is not updated): \(error)")
                }
            }
            let elapsed = ContinuousClock.now - started
            let mebibytes = Double(manifest.totalBytes) / Double(1 << 20)
            print("backup complete: \(manifest.journals.count) journals, \(manifest.totalBytes) bytes in \(String(format: "%.1f", elapsed.seconds)) s"
                  + " (\(String(format: "%.1f", mebibytes / max(elapsed.seconds, 0.001))) MiB/s) → \(directory)")
            for journal in manifest.journals {
                print("  \(journal.file): sequence \(journal.sequence), \(journal.entries) entries, \(journal.bytes) bytes")
            }
            return Status.complete
        } catch {
            for part in parts where !part.id.isEmpty { _ = try? call(client, part.service, part.request("end", ["complete": .bool(false)])) }
            printError("lyceum backup: failed, no manifest written (the files in \(directory) are not a backup): \(error)")
            return Status.failed
        }
    }

    /// Creates the backup directory (0700), or takes an empty one that is a real directory.
    private func prepareDirectory() throws(BackupError) {
        if PrivateFiles.exists(directory) {
            guard try PrivateFiles.isEmptyDirectory(directory) else {
                throw BackupError(path: directory, "is not empty; a backup goes into a new or empty directory")
            }
            guard chmod(directory, 0o700) == 0 else { throw BackupError(path: directory, "cannot set mode 0700: \(String(cString: strerror(errno)))") }
        } else {
            try PrivateFiles.makeDirectory(directory)
        }
    }

    /// The first broker that answers `mmi.status`, and what to ask there: `lyceum.backup` when
    /// it is `serve`, else every node service (a partitioned cluster's workers).
    private func discover(context: Context) throws -> (endpoint: String, services: [String]) {
        var lastError: (any Error)?
        for endpoint in settings.brokers {
            let client = makeClient(endpoint, timeout: settings.timeout, context: context)
            defer { client.close() }
            let outcome = Result { () throws(MajordomoError) in try client.call(ProcessReport.statusService, body: [[]]) }
            let reply: [[UInt8]]
            switch outcome {
            case .success(let frames): reply = frames
            case .failure(let error) where error.code.callsForAnotherBroker:
                lastError = error
                continue
            case .failure(let error): throw error
            }
            guard reply.count == 1, case .object(let status)? = try? JSONParser().parse(reply[0]) else {
                throw BackupError(path: endpoint, "does not answer \(ProcessReport.statusService) as a Lyceum broker")
            }
            var names: [String] = []
            if case .array(let services)? = status["services"] {
                for service in services { if case .string(let name)? = service["name"] { names.append(name) } }
            }
            if names.contains(BackupSource.serviceName) { return (endpoint, [BackupSource.serviceName]) }
            let nodes = StatusCommand.nodeServices(in: status)
            guard !nodes.isEmpty else {
                throw BackupError(path: endpoint, "serves neither \(BackupSource.serviceName) (serve) nor node services (partitioned workers): nothing to back up")
            }
            return (endpoint, nodes)
        }
        throw lastError ?? BackupError(path: "", "no broker to call")
    }

    private func makeClient(_ endpoint: String, timeout: Duration, context: Context) -> Client {
        var configuration = ClientConfiguration(timeout: timeout, attempts: 1)
        configuration.security = security.connecting
        return Client(endpoint: endpoint, configuration: configuration, context: context)
    }

    /// Copies one journal's snapshot into its file, checking every chunk and then the whole.
    private func copy(_ journal: BackupManifest.Entry, of part: Part, with client: Client, progress: inout CopyProgress) throws {
        let path = (directory as NSString).appendingPathComponent(journal.file)
        try PrivateFiles.makeDirectory(DurableFile.parentDirectory(of: path), parents: true)
        let descriptor = try PrivateFiles.create(path)
        defer { close(descriptor) }
        var offset: UInt64 = 0
        var crc: UInt32 = 0
        while offset < journal.bytes {
            let (header, frames) = try call(client, part.service, part.request("read", [
                "file": .string(journal.file), "offset": .integer(Int(offset)), "max_bytes": .integer(chunkBytes),
            ]))
            guard frames.count == 2, header["offset"] == .integer(Int(offset)), header["bytes"] == .integer(frames[1].count),
                  !frames[1].isEmpty, header["crc32c"] == .integer(Int(CRC32C.checksum(frames[1]))) else {
                throw BackupError(path: path, "the chunk at offset \(offset) arrived damaged or misdelivered")
            }
            try PrivateFiles.write(descriptor, frames[1], at: offset, path: path)
            crc = CRC32C.checksum(frames[1], continuing: crc)
            offset += UInt64(frames[1].count)
            progress.advance(by: UInt64(frames[1].count))
        }
        guard crc == journal.crc32c else {
            throw BackupError(path: path, "has CRC-32C \(crc) after copying; the server wrote \(journal.crc32c)")
        }
        try PrivateFiles.sync(descriptor, path: path)
    }

    /// Sends one backup request to `service` and returns its `result` and the reply's frames.
    /// - Throws: `BackupError` for an error reply, `MajordomoError` when none came.
    private func call(_ client: Client, _ service: String, _ request: JSONValue) throws -> (result: JSONValue, frames: [[UInt8]]) {
        let frames = try client.call(service, body: [request.serialized()])
        guard let first = frames.first, let reply = try? JSONParser(maxBytes: BackupManifest.maximumBytes).parse(first) else {
            throw BackupError(path: client.endpoint, "answered with something other than a JSON reply")
        }
        guard reply["ok"] == .bool(true), let result = reply["result"] else {
            let error = reply["error"]
            let text = [error?["code"], error?["message"]].compactMap { if case .string(let text)? = $0 { text } else { nil } }
            throw BackupError(path: service, "refused: \(text.isEmpty ? "an error reply" : text.joined(separator: ": "))")
        }
        return (result, frames)
    }
}

/// Progress on stderr: after the first chunk, then at most once a second, and at the end, as a
/// percentage of the bytes.
private struct CopyProgress {
    let total: UInt64
    var done: UInt64 = 0
    var lastShown: ContinuousClock.Instant?

    init(total: UInt64) { self.total = total }

    mutating func advance(by count: UInt64) {
        done += count
        let now = ContinuousClock.now
        guard lastShown.map({ now - $0 >= .seconds(1) }) ?? true || done == total else { return }
        lastShown = now
        printError("backup: \(total == 0 ? 100 : done * 100 / total)% (\(done) of \(total) bytes)")
    }
}
