import Books
import Configuration
import Coordination
import EventSubscription
import LearningServices
import Partitions
import Testing

/// The settings are plain values, checked by their declarations in `Configuration`, which links
/// none of the modules that apply them. Where such a module has bounds or defaults of its own,
/// the settings' are the same, so that a value the settings accept is one the module takes.
struct SettingBoundsTests {
    @Test func thePartitionCountsAreThePartitionSchemes() {
        #expect(SettingKey.partitionCounts == PartitionScheme.counts)
    }

    @Test func theSnapshotPageBytesAreThePublishers() {
        #expect(SettingKey.snapshotPageBytesRange == SnapshotProtocol.pageBytesRange)
        #expect(Settings().snapshotPageBytes == SnapshotProtocol.defaultPageBytes)
    }

    @Test func theServicesDefaultsAreTheServicesStandards() {
        #expect(Settings().maxReplyBytes == ReplyBudget.standard.maxBytes)
        #expect(Settings().maxBooksPerLearner == LibraryLimits.standard.books)
        #expect(Settings().maxLibraryBytes == LibraryLimits.standard.contentBytes)
    }

    @Test func theLeaseDefaultsAreTheStandardTiming() {
        let settings = Settings()
        #expect(settings.leaseTTLSeconds == LeaseTiming.standard.ttlSeconds)
        #expect(settings.leaseKeepAlive == LeaseTiming.standard.keepAlivePeriod)
        #expect(settings.leaseRetry == LeaseTiming.standard.retry)
    }
}
