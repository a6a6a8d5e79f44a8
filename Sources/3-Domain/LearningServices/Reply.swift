import JSON
import LyceumSupport

/// The two shapes of a reply frame.
enum Reply {
    /// `{"ok":true,"result":…}`
    static func success(_ result: JSONValue) -> [UInt8] {
        success(reservingCapacity: 128) { result.write(to: &$0) }
    }

    /// `{"ok":true,"result":…}` around an already serialized result.
    static func success(serialized result: [UInt8]) -> [UInt8] {
        // One allocation of the reply's final size, not the prefix's and then a regrowth.
        success(reservingCapacity: successPrefix.utf8CodeUnitCount + result.count + 1) { $0.append(contentsOf: result) }
    }

    /// `{"ok":true,"result":…}` with the result appended by `writeResult`, in a buffer of at
    /// least `capacity` bytes.
    static func success(reservingCapacity capacity: Int, _ writeResult: (inout [UInt8]) -> Void) -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(capacity)
        output.append(utf8: successPrefix)
        writeResult(&output)
        output.append(UInt8(ascii: "}"))
        return output
    }

    private static let successPrefix: StaticString = #"{"ok":true,"result":"#

    /// `{"ok":false,"error":{"code":…,"message":…,"field":…}}`
    static func failure(_ error: ServiceError) -> [UInt8] {
        var output: [UInt8] = []
        output.append(utf8: #"{"ok":false,"error":"#)
        error.json.write(to: &output)
        output.append(UInt8(ascii: "}"))
        return output
    }
}
