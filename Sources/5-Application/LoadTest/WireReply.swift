import JSON

/// A Lyceum reply as the protocol defines it: `{"ok":true,"result":…}` or
/// `{"ok":false,"error":{"code":…}}`.
enum WireReply {
    case success(JSONValue)
    case failure(code: String)
    /// Not a reply the protocol allows at all.
    case malformed(String)

    private static let successPrefix = Array(#"{"ok":true,"#.utf8)

    /// Whether `body` is a success, judged from its first bytes (replies are compact, `ok` first).
    static func isSuccess(_ body: [[UInt8]]) -> Bool {
        body.count == 1 && body[0].starts(with: successPrefix)
    }

    init(body: [[UInt8]]) {
        guard body.count == 1 else {
            self = .malformed("\(body.count) frames instead of one")
            return
        }
        let value: JSONValue
        do {
            value = try JSONParser().parse(body[0])
        } catch {
            self = .malformed("not JSON: \(error)")
            return
        }
        switch value["ok"] {
        case .bool(true)?:
            guard let result = value["result"], case .object = result else {
                self = .malformed("ok without a result object")
                return
            }
            self = .success(result)
        case .bool(false)?:
            guard case .string(let code)? = value["error"]?["code"] else {
                self = .malformed("an error without error.code")
                return
            }
            self = .failure(code: code)
        default:
            self = .malformed("no boolean ok member")
        }
    }
}
