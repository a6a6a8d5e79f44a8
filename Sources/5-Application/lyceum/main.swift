import CommandSyntax
import Foundation
import LoadTest
import LyceumLifecycle
import LyceumServer
import ProgressWatch

// Before anything starts a thread (a ZeroMQ context, a journal's syncer): the ComponentGroup
// owns SIGINT, SIGTERM and SIGHUP.
TerminationSignals.blockInAllThreads()

let lyceum = LyceumCommands.program([
    LyceumCommands.serve, LyceumCommands.broker, LyceumCommands.worker, LyceumCommands.call, LyceumCommands.status,
    LyceumCommands.config, JournalCommand.declaration, WatchCommand.declaration, BenchCommand.declaration, KeysCommand.declaration,
    PartitionsCommand.declaration, BackupCommand.declaration, BackupCommand.restore, LyceumCommands.version,
])
exit(lyceum.main(Array(CommandLine.arguments.dropFirst())))
