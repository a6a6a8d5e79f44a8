import Majordomo

/// `lyceum status`: asks the first broker that answers (of `broker`, tried in order) its
/// `mmi.status` management service and prints its answer, a
/// JSON object of the broker's services, worker counts, queue depths, uptime and (for
/// `serve`) journals.
public enum StatusCommand {
    /// Exit statuses: 0 with the answer printed; 1 when the broker does not answer `mmi.status`
    /// (it is not a Lyceum broker); 3 when no reply came.
    public static func run(settings: Settings, security: ProcessSecurity = .plaintext) -> Int32 {
        let reply: [[UInt8]]
        do {
            reply = try CallCommand.callOnce(ProcessReport.statusService, body: [[]], settings: settings, security: security)
        } catch {
            printError("lyceum status: no reply from \(settings.brokers.joined(separator: ", ")) within \(settings.timeout) each: \(error)")
            return CallCommand.Status.noReply
        }
        guard reply.count == 1, reply[0] != MDP.notImplemented else {
            printError("lyceum status: the broker at \(settings.brokers.joined(separator: ", ")) does not answer \(ProcessReport.statusService)")
            return CallCommand.Status.errorReply
        }
        print(String(decoding: reply[0], as: UTF8.self))
        return CallCommand.Status.ok
    }
}
