import JSON
import LearningServices
import Synchronization

/// A clock that starts at 2026-01-05T09:00:00Z and advances one second per reading, and UUIDs
/// numbered from 1, so that replies are reproducible.
func deterministicEnvironment() -> ServiceEnvironment {
    let counters = Counters()
    return ServiceEnvironment(
        now: { 1_767_603_600_000 + 1_000 * counters.next(\.ticks) },
        makeID: {
            let number = String(counters.next(\.ids) + 1)
            return "00000000-0000-4000-8000-" + String(repeating: "0", count: 12 - number.count) + number
        })
}

private final class Counters: Sendable {
    struct Values {
        var ticks: Int64 = 0
        var ids: Int64 = 0
    }

    private let values = Mutex(Values())

    func next(_ counter: WritableKeyPath<Values, Int64>) -> Int64 {
        values.withLock { values in
            defer { values[keyPath: counter] += 1 }
            return values[keyPath: counter]
        }
    }
}

extension LearningService {
    /// Sends `request` (JSON text) and parses the reply.
    func call(_ request: String) throws -> JSONValue {
        try JSONParser().parse(handle(Array(request.utf8)))
    }
}

/// The `result` of a successful reply, or `nil`.
func result(_ reply: JSONValue) -> JSONValue? {
    reply["ok"] == true ? reply["result"] : nil
}

/// The error `code` of a failed reply, or `nil`.
func errorCode(_ reply: JSONValue) -> String? {
    if case .string(let code)? = reply["error"]?["code"] { return code }
    return nil
}
