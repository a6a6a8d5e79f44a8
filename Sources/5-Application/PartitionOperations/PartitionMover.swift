import Foundation
import Journal
import JSON
import LearningServices
import LyceumLogging
import LyceumSupport
import Majordomo
import Partitions

/// The source's side of a partition move: have the target admit the partition (`begin`), stop
/// serving it, copy its journal
/// directory to the target's node service in checksummed chunks, rename its own copy away
/// durably, and only then tell the target to adopt. Before the rename every failure puts things
/// back (the target discards its copy, this node serves the partition again); after it, the
/// partition belongs to the target, and running the same move again sends the `adopt` that is
/// missing. At no point can both nodes serve the partition.
public struct PartitionMover: Sendable {
    /// Sends a request to a node service (`lyceum.node.<node>`) through the brokers and returns
    /// the reply's frames; throws when no reply comes.
    public typealias Call = @Sendable (_ service: String, _ frames: [[UInt8]]) throws -> [[UInt8]]

    let custody: any PartitionCustody
    let call: Call
    var chunkBytes = JournalChunk.maxBytes
    private let logger = Logger(component: "partmove")

    init(custody: any PartitionCustody, call: @escaping Call) {
        self.custody = custody
        self.call = call
    }

    /// Moves `partition` of `service` to the node `target`, or finishes such a move whose
    /// `adopt` did not arrive; returns what moved.
    /// - Throws: `PartitionMoveFailure` naming the step.
    func move(service: String, partition: Int, to target: String) throws(PartitionMoveFailure) -> JSONValue {
        let ticket = PartitionMoveTicket(service: service, partition: partition, from: custody.node, to: target)
        let started = ContinuousClock.now
        let directory = custody.directory(service: service, partition: partition)
        if let given = givenUp(directory, to: target) {
            let parent = (directory as NSString).deletingLastPathComponent
            try adopt(ticket) { try JournalExport(directory: parent + "/" + given).summaries() }
            logger.info("finished an earlier move", ["partition": ticket.name, "to": target, "moved_directory": given])
            return ["partition": .string(ticket.name), "from": .string(ticket.from), "to": .string(target),
                    "moved_directory": .string(given), "resumed": true]
        }
        guard target != custody.node else {
            throw PartitionMoveFailure(ticket: ticket, step: .release, cause: ServiceError(.badRequest, "the partition is already here", field: "$.to"))
        }
        // Checked before the target hears of it: its `begin` clears any copy of the partition
        // there, which may be one another node gave up and has yet to have adopted.
        guard custody.isServing(service: service, partition: partition) else {
            throw PartitionMoveFailure(ticket: ticket, step: .release, cause: ServiceError(.notFound, "\(ticket.name) is not served by node \(custody.node)"))
        }
        // The target admits the partition while this node still serves it: one that could not
        // serve it (its session budget) refuses here, and nothing has changed.
        do { try send(.begin(ticket), to: target) } catch {
            throw PartitionMoveFailure(ticket: ticket, step: .begin, cause: error)
        }
        do { try custody.release(service: service, partition: partition) } catch {
            discard(ticket)
            throw PartitionMoveFailure(ticket: ticket, step: .release, cause: error)
        }
        logger.info("partition released for a move", ["partition": ticket.name, "to": target])
        let moved = directory + ".moved-to-\(target)-\(Self.stamp(Date()))"
        var copied = (files: [JournalFileSummary](), chunks: 0)
        var step = PartitionMoveFailure.Step.copy
        do {
            let export = try JournalExport(directory: directory)
            let summaries = try export.forEachChunk(chunkBytes: chunkBytes) { chunk in
                try send(.chunk(ticket, chunk), to: target)
                copied.chunks += 1
            }
            try send(.finish(ticket, summaries), to: target)
            copied.files = summaries
            step = .rename
            try export.renameAway(to: moved)
        } catch {
            restore(ticket, after: error, step: step)
            throw PartitionMoveFailure(ticket: ticket, step: step, cause: error)
        }
        logger.info("partition given up", ["partition": ticket.name, "to": target, "moved_directory": moved])
        try adopt(ticket) { copied.files }
        let bytes = copied.files.reduce(0) { $0 + Int($1.bytes) }
        let elapsed = ContinuousClock.now - started
        logger.info("partition moved", [
            "partition": ticket.name, "to": target, "files": String(copied.files.count), "bytes": String(bytes),
            "chunks": String(copied.chunks), "ms": String(elapsed.milliseconds),
        ])
        return ["partition": .string(ticket.name), "from": .string(ticket.from), "to": .string(target),
                "moved_directory": .string((moved as NSString).lastPathComponent), "files": .integer(copied.files.count),
                "bytes": .integer(bytes), "chunks": .integer(copied.chunks), "ms": .integer(Int(elapsed.milliseconds)),
                "resumed": false]
    }

    /// Moves the leadership of `partition` of `service` (replicated), led here, to the replica on
    /// the node `target`: this node hands it over (``PartitionCustody/handOff(service:partition:to:)``)
    /// and stops serving it; `target` leads once it has won its campaign and recovered.
    /// - Throws: `PartitionMoveFailure` (step `release`: nothing changed) when this node does not
    ///   lead the partition, or it is not replicated.
    func handOff(service: String, partition: Int, to target: String) throws(PartitionMoveFailure) -> JSONValue {
        let ticket = PartitionMoveTicket(service: service, partition: partition, from: custody.node, to: target)
        let started = ContinuousClock.now
        do { try custody.handOff(service: service, partition: partition, to: target) } catch {
            throw PartitionMoveFailure(ticket: ticket, step: .release, cause: error)
        }
        logger.info("leadership handed over", ["partition": ticket.name, "to": target])
        return ["partition": .string(ticket.name), "from": .string(ticket.from), "to": .string(target), "leadership": true,
                "ms": .integer(Int((ContinuousClock.now - started).milliseconds))]
    }

    /// Puts a move that failed before the rename back: the target forgets its copy (adopting
    /// needs this node's rename) and this node serves the partition again.
    private func restore(_ ticket: PartitionMoveTicket, after error: any Error, step: PartitionMoveFailure.Step) {
        logger.warning("partition move failed; serving the partition again", ["partition": ticket.name, "to": ticket.to, "step": step.rawValue, "error": "\(error)"])
        discard(ticket)
        do { try custody.serve(service: ticket.service, partition: ticket.partition) } catch {
            logger.critical("cannot serve the partition again after a failed move", ["partition": ticket.name, "error": "\(error)"])
        }
    }

    /// Tells the target to forget its copy, best effort: a copy it keeps is never adopted, and
    /// the next `begin` clears it.
    private func discard(_ ticket: PartitionMoveTicket) {
        do { try send(.abort(ticket), to: ticket.to) } catch {
            logger.warning("the target did not discard its copy", ["partition": ticket.name, "to": ticket.to, "error": "\(error)"])
        }
    }

    /// Tells the target to adopt the copy holding the files `summaries` returns.
    private func adopt(_ ticket: PartitionMoveTicket, _ summaries: () throws -> [JournalFileSummary]) throws(PartitionMoveFailure) {
        do { try send(.adopt(ticket, summaries()), to: ticket.to) } catch {
            throw PartitionMoveFailure(ticket: ticket, step: .adopt, cause: error)
        }
    }

    /// The name of this node's renamed-away copy of the partition for `target`, when the
    /// partition's directory is gone because a move to `target` renamed it.
    private func givenUp(_ directory: String, to target: String) -> String? {
        guard !FileManager.default.fileExists(atPath: directory) else { return nil }
        let parent = (directory as NSString).deletingLastPathComponent
        let prefix = (directory as NSString).lastPathComponent + ".moved-to-\(target)-"
        let names = (try? FileManager.default.contentsOfDirectory(atPath: parent)) ?? []
        return names.filter { $0.hasPrefix(prefix) && $0.count == prefix.count + 16 }.max()
    }

    /// Sends `request` to the node service of `node` and throws the error it answers with.
    private func send(_ request: PartitionMoveRequest, to node: String) throws {
        let reply: [[UInt8]]
        do {
            reply = try call(NodeService.namePrefix + node, request.frames)
        } catch let error as MajordomoError where error.code.isBrokerRejection {
            throw ServiceError(.unavailable, "the broker refused the request to node \(node): \(error.code.rawValue): \(error.detail)")
        }
        guard reply.count == 1, let value = try? JSONParser().parse(reply[0]), case .object(let object) = value else {
            throw ServiceError(.internal, "node \(node) answered with something other than one JSON reply frame")
        }
        guard object["ok"] == .bool(true) else {
            let error = object["error"]
            let code = error?["code"].flatMap { if case .string(let code) = $0 { ServiceError.Code(rawValue: code) } else { nil } }
            let message = error?["message"].flatMap { if case .string(let text) = $0 { text } else { nil } }
            throw ServiceError(code ?? .internal, "node \(node): \(message ?? "an error reply without a message")")
        }
    }

    /// The partition and target a renamed-away copy's directory name (`p3.moved-to-w2-20261201T220455Z`)
    /// stands for; `nil` for any other name.
    static func movedAway(_ name: String) -> (partition: Int, to: String)? {
        guard let marker = name.range(of: ".moved-to-"), name.count > 17,
              let partition = PartitionName.partition(ofDirectory: name[..<marker.lowerBound]) else { return nil }
        let rest = name[marker.upperBound...]
        guard rest.count > 17, rest[rest.index(rest.endIndex, offsetBy: -17)] == "-" else { return nil }
        return (partition, String(rest.dropLast(17)))
    }

    /// `20261201T220455Z`: RFC 3339's UTC instant to the second, without the separators that do
    /// not belong in a directory name; sortable.
    public static func stamp(_ date: Date) -> String {
        let text = RFC3339.string(millisecondsSince1970: Int64(date.timeIntervalSince1970 * 1000))
        return String(text.prefix(19).filter { $0 != "-" && $0 != ":" }) + "Z"
    }
}
