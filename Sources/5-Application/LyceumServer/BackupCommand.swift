import Backup
import CommandSyntax
import Configuration
import Journal
import Partitions

/// `lyceum backup --to DIR`, `lyceum backup verify DIR` and `lyceum restore --from DIR --data DIR`
/// (docs/backup.md): online backups of a running `serve`, their check, and the way back.
public enum BackupCommand {
    /// `lyceum backup` and its `verify` subcommand.
    public static let declaration = Command.withSettings(
        "backup", summary: "copy every journal of a running serve into a new directory, while it serves",
        discussion: """
            Each journal is copied as of one sequence (a snapshot taken under its service's write lock), in chunks,
            with progress on stderr; manifest.json is written last, so a directory without it is no backup. Over
            CURVE the key must be an admin's. exit status: 0 whole; 1 failed or refused (no manifest written);
            2 bad command line; 3 no reply from any broker
            """,
        keys: SettingKey.taken(by: .backup), options: [toOption, chunkOption], subcommands: [verify]
    ) { resolved, sources throws(UsageError) in
        let settings = resolved.settings
        var copy = BackupCopy(
            directory: sources.commandLine.text(toOption.name) ?? "", settings: settings.client, security: try LyceumCommands.clientSecurity(settings))
        copy.chunkBytes = sources.commandLine.integer(chunkOption.name) ?? JournalChunk.maxBytes
        return copy.run()
    }

    /// `lyceum backup verify DIR`.
    public static let verify = Command(
        "verify", summary: "check a backup: manifest, every file's length and checksum, every value decoded as serving does",
        discussion: "exit status: 0 the backup is whole; 1 it is not (the file at fault and why on stderr); 2 bad command line",
        positionals: [Positional("DIR", help: "the backup directory")]
    ) { parsed in
        do throws(BackupError) {
            let manifest = try BackupVerifier.verify(parsed.positionals[0])
            print("whole: \(manifest.journals.count) journals, \(manifest.totalBytes) bytes, taken \(manifest.created) from \(manifest.source)"
                  + " by Lyceum \(manifest.lyceumVersion), \(manifest.partitions) partitions")
            for journal in manifest.journals { print("  \(journal.file): sequence \(journal.sequence), \(journal.entries) entries") }
            return 0
        } catch {
            printError("lyceum backup verify: not whole: \(error)")
            return 1
        }
    }

    /// `lyceum restore --from DIR --data DIR [--partitions N --own RANGES]`.
    public static let restore = Command.withSettings(
        "restore", summary: "make a new data directory from a backup (verified first; nothing written when refused)",
        discussion: """
            For serve, --data DIR must not exist or be empty. For a cluster's worker host, give the cluster's
            --partitions N (the backup's count; a mismatch is refused with both numbers) and the partitions the host
            will hold with --own RANGES; each gets its PARTITION manifest. exit status: 0 restored; 1 refused or
            failed (nothing written); 2 bad command line
            """,
        keys: SettingKey.taken(by: .restore), options: [fromOption, ownOption]
    ) { resolved, sources throws(UsageError) in
        let settings = resolved.settings
        let parsed = sources.commandLine
        // The target of a restore is named on purpose, never taken from a default or the environment.
        guard parsed.contains(SettingKey.data.rawValue) else { throw UsageError(option: SettingKey.data.rawValue, "is required") }
        var owned: Set<Int>?
        if let scheme = settings.partitionScheme {
            guard let ranges = parsed.text(ownOption.name) else { throw UsageError(option: ownOption.name, "is required with --partitions") }
            do throws(PartitionError) {
                owned = Set(try scheme.partitions(inRanges: ranges))
            } catch {
                throw UsageError(option: ownOption.name, error.message)
            }
        } else if parsed.contains(ownOption.name) {
            throw UsageError(option: ownOption.name, "needs --partitions, the cluster's partition count")
        }
        return BackupRestore(source: parsed.text(fromOption.name) ?? "", data: settings.dataDirectory, partitions: settings.partitions, owned: owned).run()
    }

    private static let toOption = Option("to", .text(placeholder: "DIR"), help: "the backup directory to create (or an empty one)", required: true)
    private static let chunkOption = Option(
        "chunk-bytes", .integer(placeholder: "N", range: 1024...JournalChunk.maxBytes),
        help: "the most bytes asked for at once (default and maximum \(JournalChunk.maxBytes)): the client's memory bound")
    private static let fromOption = Option("from", .text(placeholder: "DIR"), help: "the backup directory (lyceum backup --to)", required: true)
    private static let ownOption = Option(
        "own", .text(placeholder: "RANGES"), help: "with --partitions: the partitions this host will hold, e.g. 0-5,9")
}
