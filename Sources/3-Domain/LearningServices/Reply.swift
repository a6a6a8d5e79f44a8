import JSON

/// The two shapes of a reply frame.
enum Reply {
    /// `{"ok":true,"result":…}`
    static func success(_ result: JSONValue) -> [UInt8] {
        var output: [UInt8] = Array(#"{"ok":true,"result":"#.utf8)
        result.write(to: &output)
        output.append(UInt8(ascii: "}"))
        return output
    }

    /// `{"ok":true,"result":…}` around an already serialized result.
    static func success(serialized result: [UInt8]) -> [UInt8] {
        let prefix = #"{"ok":true,"result":"#.utf8
        var output: [UInt8] = []
        // One allocation of the reply's final size, not the prefix's and then a regrowth.
        output.reserveCapacity(prefix.count + result.count + 1)
        output.append(contentsOf: prefix)
        output.append(contentsOf: result)
        output.append(UInt8(ascii: "}"))
        return output
    }

    /// `{"ok":false,"error":{"code":…,"message":…,"field":…}}`
    static func failure(_ error: ServiceError) -> [UInt8] {
        var output: [UInt8] = Array(#"{"ok":false,"error":"#.utf8)
        error.json.write(to: &output)
        output.append(UInt8(ascii: "}"))
        return output
    }
}
