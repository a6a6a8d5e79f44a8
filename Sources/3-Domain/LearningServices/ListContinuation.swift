import JSON

/// The request for the next page of a list whose page was just answered: what a streamed reply
/// (an 18/MDP client's PARTIALs, protocol/majordomo.md "Streamed replies") asks the service
/// next, exactly as a client paging by `next_cursor` would (protocol/README.md, "Lists").
public enum ListContinuation {
    /// `request` with its `cursor` set to the `next_cursor` of `reply`, when `reply` is a
    /// successful page with more to come; `nil` otherwise (an error, a reply that is not a page,
    /// or the last page). Neither is trusted to be well formed: anything unexpected is `nil`.
    public static func nextRequest(after reply: [UInt8], to request: [UInt8]) -> [UInt8]? {
        // Most replies are no page with more to come; a scan of the tail, where a page's
        // `next_cursor` is (the last member, a cursor at most 8,192 bytes), spares them the parse.
        guard reply.starts(with: successPrefix), contains(reply.suffix(tailScanned), nextCursorMarker) else { return nil }
        let parser = JSONParser()
        guard case .string(let cursor)? = (try? parser.parse(reply))?["result"]?["next_cursor"],
              case .object(let object)? = try? parser.parse(request) else { return nil }
        var next = JSONObject(object.members.filter { $0.key != "cursor" })
        next.append("cursor", .string(cursor))
        return JSONValue.object(next).serialized()
    }

    private static let successPrefix = Array(#"{"ok":true,"result":{"#.utf8)
    private static let nextCursorMarker = Array(#""next_cursor":""#.utf8)

    /// How much of a reply's end the scan reads: the longest cursor and the members' syntax.
    private static let tailScanned = 8192 + 64

    private static func contains(_ bytes: ArraySlice<UInt8>, _ part: [UInt8]) -> Bool {
        guard bytes.count >= part.count else { return false }
        return (bytes.startIndex...(bytes.endIndex - part.count)).contains { start in bytes[start..<(start + part.count)].elementsEqual(part) }
    }
}
