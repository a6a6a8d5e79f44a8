#if canImport(Glibc)
import Glibc
#endif
import Journal
@testable import LearningServices
import Testing

/// What a client is told when the change log refuses a write: `storage_full` for a full file
/// system (contract version 4; `bad_request` for a client stating an older version), else
/// `unavailable`; never a server path.
@Suite struct AppendRefusalTests {
    static let path = "/var/lib/lyceum/books/journal.jsonl"

    @Test(arguments: [ENOSPC, EDQUOT])
    func aFullFileSystemIsStorageFull(errno number: Int32) {
        let error = ServiceError(refusedAppend: JournalError(.writeFailed, "no space", path: Self.path, offset: 4096, systemError: number))
        #expect(error.code == .storageFull)
        #expect(!error.message.contains(Self.path))
        #expect(error.forContractVersion(4) == error)
        #expect(error.forContractVersion(3).code == .badRequest)
        #expect(error.forContractVersion(3).message == error.message)
    }

    @Test func anotherWriteErrorIsUnavailableNamingTheJournalCodeOnly() {
        let error = ServiceError(refusedAppend: JournalError(.writeFailed, "bad", path: Self.path, systemError: EIO))
        #expect(error.code == .unavailable)
        #expect(error.message.contains("write_failed") && !error.message.contains(Self.path))
        let closed = ServiceError(refusedAppend: JournalError(.closed, "the journal is closed", path: Self.path))
        #expect(closed.code == .unavailable && !closed.message.contains(Self.path))
    }
}
