import Access
import Testing

@Suite struct CallerTests {
    @Test func unverifiedCallersMayDoEverything() {
        for permission in Permission.allCases { #expect(Caller.unverified.may(permission)) }
        #expect(Caller.unverified.mayActFor(learner: "ada"))
    }

    @Test func learnerKeysActOnlyForTheirLearners() {
        let caller = Caller.authenticated(Principal(name: "ada-phone", role: .learner, learners: ["ada", "ada2"]))
        #expect(caller.mayActFor(learner: "ada"))
        #expect(caller.mayActFor(learner: "ada2"))
        #expect(!caller.mayActFor(learner: "bob"))
        #expect(caller.may(.callServices))
        #expect(!caller.may(.callTrustedOperations))
        #expect(!caller.may(.registerWorker))
        #expect(!caller.may(.subscribeEvents))
    }

    @Test func onlyLearnerKeysKeepALearnerList() {
        #expect(Principal(name: "backend", role: .app, learners: ["ada"]).learners.isEmpty)
    }

    @Test func rolesGrantWhatTheContractSays() {
        #expect(Role.worker.permissions == [.registerWorker, .publishEvents, .managePartitions, .replicatePartitions])
        #expect(Role.admin.permissions.contains(.managePartitions))
        #expect(!Role.app.permissions.contains(.managePartitions) && !Role.learner.permissions.contains(.managePartitions))
        #expect(Role.dashboard.permissions == [.subscribeEvents])
        #expect(Caller.authenticated(Principal(name: "backend", role: .app)).mayActFor(learner: "anyone"))
        #expect(!Caller.authenticated(Principal(name: "screen", role: .dashboard)).mayActFor(learner: "ada"))
        #expect(!Caller.authenticated(Principal(name: "w1", role: .worker)).may(.callServices))
        #expect(Caller.authenticated(Principal(name: "ops", role: .admin)).may(.manage))
        #expect(!Caller.authenticated(Principal(name: "backend", role: .app)).may(.manage))
    }
}
