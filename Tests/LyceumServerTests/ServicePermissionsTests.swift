import Access
import LyceumServer
import Majordomo
@testable import PartitionOperations
import Testing

/// Lyceum's policy, which its brokers pass to `Majordomo`: the permissions of its own names.
struct LyceumServicePermissionsTests {
    @Test func nodeServicesNeedManagePartitionsLyceumsOtherServicesManageAndTheRestCallServices() {
        let policy = ServicePermissions.lyceum
        #expect(policy.permission(toCall: Array("\(NodeService.namePrefix)w1".utf8)) == .managePartitions)
        #expect(policy.permission(toCall: Array("lyceum.backup".utf8)) == .manage)
        #expect(policy.permission(toCall: Array("mmi.status".utf8)) == .manage)
        #expect(policy.permission(toCall: Array("books.p3".utf8)) == .callServices)
        #expect(policy.permission(toCall: Array("lyceumx".utf8)) == .callServices)
    }
}
