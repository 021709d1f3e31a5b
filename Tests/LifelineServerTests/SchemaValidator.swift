import Foundation
import LifelineTestSupport
import Yams

/// Checks JSON values against the OpenAPI document's schemas: the subset Lifeline's spec uses
/// (`$ref`, `type` incl. type lists, `properties`, `required`, `items`, `allOf`, `oneOf`, `enum`,
/// `additionalProperties`). Returns every violation with its JSON path.
struct SchemaValidator: @unchecked Sendable {  // immutable after init
    let document: [String: Any]

    init(yaml: String) throws {
        guard let document = try Yams.load(yaml: yaml) as? [String: Any] else {
            throw TestFailure("openapi.yaml is not a mapping")
        }
        self.document = document
    }

    /// The response schema of `method path status` (path as written in the spec, e.g. `/v1/apps/{bundleId}/exits`).
    func responseSchema(path: String, method: String, status: Int) throws -> [String: Any] {
        guard let paths = document["paths"] as? [String: Any], let item = paths[path] as? [String: Any],
            let operation = item[method] as? [String: Any], let responses = operation["responses"] as? [String: Any],
            var response = responses[String(status)] as? [String: Any]
        else { throw TestFailure("spec has no response \(status) for \(method.uppercased()) \(path)") }
        if let ref = response["$ref"] as? String { response = try resolve(ref) }
        guard let content = response["content"] as? [String: Any],
            // application/json, or a vendor JSON type (perfPowerMetrics' application/vnd.apple.xcode-metrics+json).
            let json = (content["application/json"] ?? content.first { $0.key.hasSuffix("+json") }?.value)
                as? [String: Any], let schema = json["schema"] as? [String: Any]
        else { throw TestFailure("response \(status) of \(path) has no JSON schema") }
        return schema
    }

    func resolve(_ ref: String) throws -> [String: Any] {
        guard ref.hasPrefix("#/") else { throw TestFailure("unsupported $ref \(ref)") }
        var node: Any = document
        for part in ref.dropFirst(2).split(separator: "/") {
            guard let next = (node as? [String: Any])?[String(part)] else { throw TestFailure("dangling $ref \(ref)") }
            node = next
        }
        guard let schema = node as? [String: Any] else { throw TestFailure("$ref \(ref) is not a schema") }
        return schema
    }

    func violations(of value: Any, against schema: [String: Any], at path: String = "$") throws -> [String] {
        if let ref = schema["$ref"] as? String {
            return try violations(of: value, against: try resolve(ref), at: path)
        }
        var problems: [String] = []
        if let all = schema["allOf"] as? [[String: Any]] {
            for sub in all { problems += try violations(of: value, against: sub, at: path) }
        }
        if let one = schema["oneOf"] as? [[String: Any]] {
            let matching = try one.filter { try violations(of: value, against: $0, at: path).isEmpty }
            if matching.count != 1 { problems.append("\(path): matches \(matching.count) of oneOf") }
        }
        if let types = (schema["type"] as? [String]) ?? (schema["type"] as? String).map({ [$0] }) {
            if !types.contains(where: { Self.matches(value, $0) }) {
                problems.append("\(path): \(Self.describe(value)) is not \(types.joined(separator: "|"))")
                return problems
            }
        }
        if let allowed = schema["enum"] as? [Any], !(value is NSNull) {
            if !allowed.contains(where: { "\($0)" == "\(value)" }) { problems.append("\(path): \(value) not in enum") }
        }
        if let object = value as? [String: Any] {
            for name in schema["required"] as? [String] ?? [] where object[name] == nil {
                problems.append("\(path): missing required \(name)")
            }
            let properties = schema["properties"] as? [String: Any] ?? [:]
            for (name, child) in object {
                if let sub = properties[name] as? [String: Any] {
                    problems += try violations(of: child, against: sub, at: "\(path).\(name)")
                } else if let extra = schema["additionalProperties"] as? [String: Any] {
                    problems += try violations(of: child, against: extra, at: "\(path).\(name)")
                }
            }
        }
        if let array = value as? [Any], let items = schema["items"] as? [String: Any] {
            for (i, element) in array.enumerated() {
                problems += try violations(of: element, against: items, at: "\(path)[\(i)]")
            }
        }
        return problems
    }

    static func matches(_ value: Any, _ type: String) -> Bool {
        // Linux Foundation's JSONSerialization returns NSNumber for numbers and booleans alike;
        // its objCType tells them apart ("c" for booleans, "d"/"f" for doubles).
        let number: (isBool: Bool, isIntegral: Bool)? = (value as? NSNumber).map { n in
            let code = String(cString: n.objCType)
            return (code == "c" || code == "B", code != "d" && code != "f" || n.doubleValue.rounded() == n.doubleValue)
        }
        switch type {
        case "null": return value is NSNull
        case "object": return value is [String: Any]
        case "array": return value is [Any]
        case "string": return value is String
        case "boolean": return number?.isBool ?? (value is Bool)
        case "integer": return number.map { !$0.isBool && $0.isIntegral } ?? false
        case "number": return number.map { !$0.isBool } ?? false
        default: return true
        }
    }

    static func describe(_ value: Any) -> String {
        value is NSNull ? "null" : "\(type(of: value)) \(value)"
    }
}
