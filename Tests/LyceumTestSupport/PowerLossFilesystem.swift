import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// `scripts/powerloss_fs.py` mounted over a backing directory for one test: the mount passes
/// everything through, and ``cut(torn:)`` loses what was not synced, as a power loss would.
public final class PowerLossFilesystem: @unchecked Sendable {
    /// The repository's root (this file is in Tests/LyceumTestSupport/).
    public static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../..").standardized
    static let script = repository.appendingPathComponent("scripts/powerloss_fs.py").path

    /// Why the filesystem cannot be mounted here (not root, no /dev/fuse, no fusepy), or `nil`.
    public static let unavailability: String? = {
        guard getuid() == 0 else { return "the power-loss filesystem needs root to mount" }
        guard FileManager.default.fileExists(atPath: "/dev/fuse") else { return "the power-loss filesystem needs /dev/fuse" }
        // A python that cannot even be started has no fusepy either: the same answer.
        let probe = try? ChildProcess.run("/usr/bin/python3", ["-c", "import fusepy"], timeout: .seconds(30))
        guard probe?.status == 0 else { return "the power-loss filesystem needs Debian's python3-fusepy (scripts/ensure-deps.sh test)" }
        return nil
    }()

    /// Where the disk's durable bytes live between mounts.
    public let backing: String
    /// The directory the processes under test use.
    public let mountpoint: String
    private let control: String
    private var process: ChildProcess?

    /// Mounts a filesystem over `directory/backing` on `directory/mount`.
    public init(in directory: String) throws {
        backing = directory + "/backing"
        mountpoint = directory + "/mount"
        control = directory + "/disk.sock"
        for path in [backing, mountpoint] { try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true) }
        try mount()
    }

    deinit { unmount() }

    /// Mounts again what the backing directory holds (after a cut: the power back on).
    public func mount() throws {
        let child = try ChildProcess("/usr/bin/python3", [Self.script, "mount", backing, mountpoint, "--control", control],
                                     standardOutput: .discarded, writableInput: false)
        process = child
        var exited = false
        let mounted = eventually {
            exited = !child.isRunning
            return exited || (isMounted && FileManager.default.fileExists(atPath: control))
        }
        guard mounted, !exited else { throw FilesystemError(description: "powerloss_fs.py did not mount: \(child.standardError)") }
    }

    /// The power lost: everything not synced dropped (with `torn`, part of the last write kept),
    /// then the mount ends. Returns the filesystem's summary (JSON: unsynced bytes, lost entries).
    @discardableResult
    public func cut(torn: Bool = false) throws -> String {
        let result = try ChildProcess.run("/usr/bin/python3", [Self.script, "cut", control] + (torn ? ["--torn"] : []), timeout: .hangLimit)
        guard result.status == 0 else { throw FilesystemError(description: "powerloss_fs.py cut failed: \(result)") }
        _ = process?.waitForExit()
        process = nil
        return result.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Unmounts without a cut (what was written stays), if mounted.
    public func unmount() {
        guard let child = process else { return }
        // An unmount that fails is followed by the kill below, which ends the mount as well.
        if isMounted { _ = try? ChildProcess.run("/usr/bin/fusermount", ["-u", "-z", mountpoint], timeout: .seconds(60)) }
        // The filesystem ends once unmounted; stop() kills it if it did not.
        _ = child.waitForExit(timeout: .seconds(60))
        child.stop()
        process = nil
    }

    private var isMounted: Bool {
        // /proc/self/mounts always exists on Linux; unreadable, nothing counts as mounted.
        let mounts = (try? String(contentsOfFile: "/proc/self/mounts", encoding: .utf8)) ?? ""
        return mounts.split(separator: "\n").contains { $0.split(separator: " ").dropFirst().first.map(String.init) == mountpoint }
    }
}

/// The power-loss filesystem did not do what a test asked of it.
public struct FilesystemError: Error, CustomStringConvertible {
    /// What went wrong, with what the filesystem printed.
    public let description: String

    /// An error saying `description`.
    public init(description: String) { self.description = description }
}
