import Configuration
import Foundation
import JSON
import Majordomo
import ZeroMQ

/// `lyceum call SERVICE JSON`: one request through the broker, the reply on stdout.
public enum CallCommand {
    /// Exit statuses: 0 for an `"ok": true` reply, 1 for an error reply (the service's or the
    /// broker's), 3 when no reply came (timeout, unreachable broker).
    public enum Status {
        /// The reply says `"ok": true`.
        public static let ok: Int32 = 0
        /// The reply is an error, from the service or the broker.
        public static let errorReply: Int32 = 1
        /// No reply arrived.
        public static let noReply: Int32 = 3

        /// The status of a call that failed with `error`: ``errorReply`` when the broker answered
        /// with a refusal (`queue_full`, `overloaded`, `service_unknown`, `forbidden`,
        /// `unauthenticated`: a reply, which the README counts with the service's error replies),
        /// ``noReply`` for everything else, where no reply came at all.
        static func of(_ error: any Error) -> Int32 {
            (error as? MajordomoError)?.code.isBrokerRejection == true ? errorReply : noReply
        }
    }

    /// Sends `body` to `service` through the first broker of `settings.brokers` that answers,
    /// and prints the reply; problems go to stderr as one sentence each.
    public static func run(service: String, body: String, settings: ClientSettings, security: ProcessSecurity = .plaintext) -> Int32 {
        let reply: [[UInt8]]
        do {
            reply = try callOnce(service, body: [Array(body.utf8)], settings: settings, security: security)
        } catch {
            return exitStatus(reporting: error, of: "lyceum call", calling: service, settings: settings)
        }
        for frame in reply { print(String(decoding: frame, as: UTF8.self)) }
        return isSuccess(reply) ? Status.ok : Status.errorReply
    }

    /// Says on stderr why `command`'s call to `service` failed with `error` (a broker's refusal,
    /// or no reply from any broker) and returns the exit status that says the same.
    static func exitStatus(reporting error: any Error, of command: String, calling service: String, settings: ClientSettings) -> Int32 {
        let status = Status.of(error)
        if status == Status.errorReply, let refusal = error as? MajordomoError {
            printError("\(command): the broker at \(refusal.endpoint ?? "?") refused the request: \(refusal.code): \(refusal.detail)")
        } else {
            printError("\(command): no reply from \(service) at \(settings.brokers.joined(separator: ", ")) within \(settings.timeout) each: \(error)")
        }
        return status
    }

    /// One request to `service` through the brokers of `settings.brokers`, as `call` and
    /// `status` make it: a single attempt at each broker in order, waiting `settings.timeout`
    /// each for the reply (and, but for the last, ``connectionWaitBeforeNextBroker`` for a
    /// connection), with CURVE when `security` has keys. It moves on to the next broker only when one
    /// was unreachable, did not answer, or had no worker for the service; when none answered
    /// otherwise it throws the last broker's refusal if any refused, else the last error (so a
    /// refusal is not hidden behind a later broker's silence). A write that timed out may have
    /// been applied by the broker left behind: the caller's `request_id` is what keeps its retry
    /// from applying it twice.
    static func callOnce(_ service: String, body: [[UInt8]], settings: ClientSettings, security: ProcessSecurity) throws -> [[UInt8]] {
        let context = try Context()
        var configuration = ClientConfiguration(timeout: settings.timeout, attempts: 1)
        configuration.security = security.connecting
        var lastError: MajordomoError?
        for (index, endpoint) in settings.brokers.enumerated() {
            // A broker that is down gets no connection: with another broker to try, waiting for
            // one longer than a handshake takes only delays the answer (the whole timeout, 5 s,
            // before). Nothing was sent without a connection, so moving on applies nothing twice.
            configuration.connectTimeout = index < settings.brokers.count - 1 ? connectionWaitBeforeNextBroker : nil
            let client = Client(endpoint: endpoint, configuration: configuration, context: context)
            let outcome = Result { () throws(MajordomoError) in try client.call(service, body: body) }
            client.close()
            switch outcome {
            case .success(let reply): return reply
            case .failure(let error) where error.code.callsForAnotherBroker:
                if error.code.isBrokerRejection || lastError?.code.isBrokerRejection != true { lastError = error }
            case .failure(let error): throw error
            }
        }
        // `brokers` always holds one endpoint or more (a repeatable setting starts from its default).
        throw lastError ?? MajordomoError(code: .invalidArgument, service: service, detail: "no broker to call")
    }

    /// How long `callOnce` waits for a connection to a broker that is not the last to try.
    static let connectionWaitBeforeNextBroker = Duration.milliseconds(500)

    /// Whether the reply is one frame of JSON saying `"ok": true`.
    static func isSuccess(_ reply: [[UInt8]]) -> Bool {
        guard reply.count == 1 else { return false }
        do {
            return try JSONParser().parse(reply[0])["ok"] == .bool(true)
        } catch {
            // A reply that is not JSON is not a success; it was printed for the user as it came.
            return false
        }
    }
}

func printError(_ text: String) {
    FileHandle.standardError.write(Data((text + "\n").utf8))
}
