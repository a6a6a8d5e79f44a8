import Foundation

/// The C broker and echo workers of `mdp_reference.c`, running in a process of their own: the
/// reference Lyceum's broker is measured against in the same run.
final class CReference {
    /// Where the C workers connect: loopback TCP from a context of their own, or inproc in the
    /// broker's context. Clients always connect over TCP.
    enum WorkerTransport: String {
        case tcp, inproc
    }

    /// Why the reference could not be started.
    struct StartError: Error, CustomStringConvertible {
        let executable: String
        let detail: String

        var description: String { "C reference \(executable): \(detail)" }
    }

    /// The broker's TCP endpoint, as the program printed it.
    let endpoint: String
    private let process: Process
    private let input: Pipe

    /// Starts `executable` with `workers` echo worker sessions, runs `body` with it, and stops it
    /// whether `body` returns or throws.
    static func running<Result>(_ executable: String, workers: Int, transport: WorkerTransport,
                                _ body: (CReference) throws -> Result) throws -> Result {
        let reference = try CReference(executable: executable, workers: workers, transport: transport)
        defer { reference.stop() }
        return try body(reference)
    }

    /// Starts `executable` with `workers` echo worker sessions and waits for its endpoint line.
    private init(executable: String, workers: Int, transport: WorkerTransport) throws {
        let process = Process()
        let input = Pipe()
        let output = Pipe()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = [transport.rawValue, String(workers)]
        process.standardInput = input
        process.standardOutput = output
        do {
            try process.run()
        } catch {
            throw StartError(executable: executable, detail: "cannot start: \(error)")
        }
        var line = Data()
        while !line.contains(UInt8(ascii: "\n")) {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty {
                process.waitUntilExit()
                throw StartError(executable: executable,
                                 detail: "exited (status \(process.terminationStatus)) before printing its endpoint")
            }
            line.append(chunk)
        }
        self.process = process
        self.input = input
        endpoint = String(decoding: line, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        progress("C reference on \(endpoint), \(workers) worker sessions over \(transport.rawValue)")
    }

    /// Closes the program's stdin, which tells it to stop, and waits until it has; a program that
    /// has not stopped within 5 s is killed.
    private func stop() {
        do {
            try input.fileHandleForWriting.close()
        } catch {
            progress("C reference: closing its stdin failed (\(error)); killing it")
            kill(process.processIdentifier, SIGKILL)
        }
        let deadline = ContinuousClock.now + .seconds(5)
        while process.isRunning && ContinuousClock.now < deadline { usleep(10_000) }
        if process.isRunning {
            progress("C reference did not stop within 5 s; killing it")
            kill(process.processIdentifier, SIGKILL)
        }
        process.waitUntilExit()
        if process.terminationStatus != 0 {
            progress("C reference exited with status \(process.terminationStatus)")
        }
    }
}
