import Access
import LyceumLogging

// The services' per-operation rules (protocol/README.md, "Who may call what"): the broker has
// already checked the role's coarse rights; these are the ones that depend on the request.
extension Caller {
    /// Throws `forbidden` (field `$.learner`) unless the caller may read or change `learner`'s data.
    func authorize(actingFor learner: String) throws(ServiceError) {
        guard mayActFor(learner: learner) else {
            throw ServiceError(.forbidden, "this key may not act for learner \(PeerText.excerpt(learner))", field: "$.learner")
        }
    }

    /// Throws `forbidden` (field `$.op`) unless the caller's role may perform operations over
    /// every learner's data, such as `course_stats`.
    func authorizeTrustedOperation(_ op: String) throws(ServiceError) {
        guard may(.callTrustedOperations) else {
            throw ServiceError(.forbidden, "\(PeerText.excerpt(op)) is for app and admin keys only", field: "$.op")
        }
    }
}
