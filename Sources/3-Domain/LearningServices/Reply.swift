import JSON
import LyceumSupport

/// The two shapes of a reply frame.
enum Reply {
    /// `{"ok":true,"result":…}`
    static func success(_ result: JSONValue) -> [UInt8] {
        var output: [UInt8] = []
        output.append(utf8: #"{"ok":true,"result":"#)
        result.write(to: &output)
        output.append(UInt8(ascii: "}"))
        return output
    }

    /// `{"ok":true,"result":…}` around an already serialized result.
    static func success(serialized result: [UInt8]) -> [UInt8] {
        let prefix: StaticString = #"{"ok":true,"result":"#
        var output: [UInt8] = []
        // One allocation of the reply's final size, not the prefix's and then a regrowth.
        output.reserveCapacity(prefix.utf8CodeUnitCount + result.count + 1)
        output.append(utf8: prefix)
        output.append(contentsOf: result)
        output.append(UInt8(ascii: "}"))
        return output
    }

    /// `{"ok":false,"error":{"code":…,"message":…,"field":…}}`
    static func failure(_ error: ServiceError) -> [UInt8] {
        var output: [UInt8] = []
        output.append(utf8: #"{"ok":false,"error":"#)
        error.json.write(to: &output)
        output.append(UInt8(ascii: "}"))
        return output
    }
}
