import Foundation
import JSON

/// The subset of JSON Schema 2020-12 that `protocol/schemas` uses: `$ref` (into `common.json` or
/// the same file), `type`, `const`, `enum`, `anyOf`, `properties`, `required`,
/// `additionalProperties: false`, `items`, `minItems`, `maxItems`, `minimum`, `maximum`,
/// `minLength`, `maxLength` and `pattern`. Keywords outside it make validation fail loudly.
struct SchemaValidator {
    let schemas: [String: JSONValue]

    init(directory: URL) throws {
        var schemas: [String: JSONValue] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: directory.path) where name.hasSuffix(".json") {
            schemas[name] = try JSONParser().parse(Array(try Data(contentsOf: directory.appendingPathComponent(name))))
        }
        self.schemas = schemas
    }

    /// Problems of `value` against schema file `name`, empty when it conforms.
    func problems(_ value: JSONValue, against name: String) -> [String] {
        guard let schema = schemas[name] else { return ["no schema \(name)"] }
        var problems: [String] = []
        check(value, schema, file: name, path: "$", into: &problems)
        return problems
    }

    /// Problems of `value` against an inline `schema` (e.g. a `$ref` into `common.json`).
    func problems(_ value: JSONValue, matching schema: JSONValue) -> [String] {
        var problems: [String] = []
        check(value, schema, file: "common.json", path: "$", into: &problems)
        return problems
    }

    private static let annotations: Set<String> = ["$schema", "$id", "title", "description", "default", "$defs"]

    private func check(_ value: JSONValue, _ schema: JSONValue, file: String, path: String, into problems: inout [String]) {
        guard case .object(let keywords) = schema else {
            problems.append("\(path): schema is not an object")
            return
        }
        for keyword in keywords {
            switch (keyword.key, keyword.value) {
            case ("$ref", .string(let reference)):
                let parts = reference.split(separator: "#", maxSplits: 1).map(String.init)
                let target = reference.hasPrefix("#") ? file : parts[0]
                var resolved = schemas[target]
                for component in (parts.last ?? "").split(separator: "/") { resolved = resolved?[String(component)] }
                guard let resolved else {
                    problems.append("\(path): unresolved $ref \(reference)")
                    continue
                }
                check(value, resolved, file: target, path: path, into: &problems)
            case ("type", let types):
                let names: [String] = switch types {
                case .string(let name): [name]
                case .array(let list): list.compactMap { if case .string(let name) = $0 { name } else { nil } }
                default: []
                }
                if !names.contains(where: { Self.has(value, type: $0) }) { problems.append("\(path): \(value.typeName) is not \(names)") }
            case ("const", let constant):
                if value != constant { problems.append("\(path): is not the constant \(constant)") }
            case ("enum", .array(let options)):
                if !options.contains(value) { problems.append("\(path): is not one of the enumerated values") }
            case ("anyOf", .array(let options)):
                let matches = options.contains { option in
                    var nested: [String] = []
                    check(value, option, file: file, path: path, into: &nested)
                    return nested.isEmpty
                }
                if !matches { problems.append("\(path): matches none of anyOf") }
            case ("properties", .object(let properties)):
                guard case .object(let object) = value else { continue }
                for member in object {
                    if let property = properties[member.key] {
                        check(member.value, property, file: file, path: path + "." + member.key, into: &problems)
                    } else if keywords["additionalProperties"] == .bool(false) {
                        problems.append("\(path).\(member.key): is not allowed")
                    }
                }
            case ("required", .array(let names)):
                guard case .object(let object) = value else { continue }
                for case .string(let name) in names where object[name] == nil { problems.append("\(path).\(name): is required") }
            case ("additionalProperties", .bool(false)):
                continue
            case ("items", let itemSchema):
                guard case .array(let elements) = value else { continue }
                for (index, element) in elements.enumerated() {
                    check(element, itemSchema, file: file, path: "\(path)[\(index)]", into: &problems)
                }
            case ("minItems", .integer(let bound)):
                if case .array(let elements) = value, elements.count < bound { problems.append("\(path): fewer than \(bound) items") }
            case ("maxItems", .integer(let bound)):
                if case .array(let elements) = value, elements.count > bound { problems.append("\(path): more than \(bound) items") }
            case ("minimum", let bound):
                if let number = Self.number(value), let limit = Self.number(bound), number < limit { problems.append("\(path): below \(limit)") }
            case ("maximum", let bound):
                if let number = Self.number(value), let limit = Self.number(bound), number > limit { problems.append("\(path): above \(limit)") }
            case ("minLength", .integer(let bound)):
                if case .string(let text) = value, text.count < bound { problems.append("\(path): shorter than \(bound)") }
            case ("maxLength", .integer(let bound)):
                if case .string(let text) = value, text.count > bound { problems.append("\(path): longer than \(bound)") }
            case ("pattern", .string(let pattern)):
                guard case .string(let text) = value else { continue }
                do {
                    if try Regex(pattern).firstMatch(in: text) == nil { problems.append("\(path): does not match \(pattern)") }
                } catch {
                    problems.append("\(path): pattern \(pattern) does not compile: \(error)")
                }
            case (let name, _) where Self.annotations.contains(name):
                continue
            default:
                problems.append("\(path): unsupported schema keyword \(keyword.key)")
            }
        }
    }

    private static func has(_ value: JSONValue, type: String) -> Bool {
        switch (type, value) {
        case ("null", .null), ("boolean", .bool), ("string", .string), ("array", .array), ("object", .object),
            ("integer", .integer), ("number", .integer), ("number", .double):
            true
        case ("integer", .double(let number)): number.rounded() == number
        default: false
        }
    }

    private static func number(_ value: JSONValue) -> Double? {
        switch value {
        case .integer(let number): Double(number)
        case .double(let number): number
        default: nil
        }
    }
}
