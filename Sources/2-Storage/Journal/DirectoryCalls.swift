import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The directory-level calls a partition move makes on journal directories.
extension SystemCall {
    /// Whether `path` is a directory (following a symbolic link).
    static func isDirectory(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR
    }

    /// Whether `path` itself is a regular file (a symbolic link is not).
    static func isRegularFile(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFREG
    }

    /// Renames `from` to `to` and syncs the parent directory of each (once when they share it),
    /// so that the rename survives a crash once this returns.
    static func renameDurably(_ from: String, to: String) throws {
        try rename(from, to: to)
        for parent in Set([from, to].map(parentDirectory)) {
            try syncDirectoryOrStop(parent, outcome: "renamed \(from) to \(to), which may not last")
        }
    }

    /// Removes the directory `path` and everything in it, if present, and syncs its parent.
    static func removeDirectoryDurably(_ path: String) throws {
        guard exists(path) else { return }
        do {
            try FileManager.default.removeItem(atPath: path)
        } catch {
            throw JournalError(.io, "cannot remove the directory: \(error.localizedDescription)", path: path)
        }
        try syncDirectoryOrStop(parentDirectory(path), outcome: "removed \(path), which may come back")
    }

    /// The directories of `path` and its ancestors that do not exist, deepest first.
    static func missingDirectories(_ path: String) -> [String] {
        var missing: [String] = []
        var candidate = path
        while !exists(candidate), !missing.contains(candidate) {
            missing.append(candidate)
            candidate = parentDirectory(candidate)
        }
        return missing
    }

    static func parentDirectory(_ path: String) -> String {
        let parent = (path as NSString).deletingLastPathComponent
        return parent.isEmpty ? "." : parent
    }
}
