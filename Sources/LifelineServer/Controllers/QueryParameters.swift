import Foundation
import Hummingbird
import LifelineAnalysis
import LifelineModel

/// The query string of a read endpoint, parsed once at the edge: `from`, `to` (YYYY-MM-DD,
/// inclusive, 2000-01-01…9999-12-31), `version`, `os`, `device`, `app_state` (comma lists; a state
/// as `domain/label`), `group_by` (comma list of version, os, device, day, app_state), plus the
/// endpoint's own parameters (`kind`, `limit`).
///
/// Values are form-decoded (`+` is a space, then `%XX`), each parameter may appear once, and
/// anything invalid is a ``APIError`` 400 `invalid_parameter` naming the parameter and what was
/// expected. Nothing past this type re-parses a query string.
struct QueryParameters {
    /// Longest window a query may span.
    static let maxDays = 3_660
    /// Longest query value accepted, in bytes.
    static let maxValueBytes = 4_096
    /// Parameters every endpoint accepts.
    static let known: Set<String> = ["from", "to", "version", "os", "device", "app_state", "group_by"]

    /// The decoded parameters by name.
    private(set) var values: [String: String] = [:]

    /// Parses `request`'s query string; `extra` names the endpoint's own parameters.
    init(_ request: Request, extra: Set<String> = []) throws(APIError) {
        try self.init(query: request.uri.query ?? "", extra: extra)
    }

    /// Parses a raw query string (without `?`).
    init(query: String, extra: Set<String> = []) throws(APIError) {
        let accepted = Self.known.union(extra)
        for pair in query.split(separator: "&", omittingEmptySubsequences: true) {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = try Self.formDecode(parts[0], parameter: "query")
            let value = parts.count > 1 ? try Self.formDecode(parts[1], parameter: name) : ""
            guard accepted.contains(name) else {
                throw Self.invalid(
                    Self.printable(name), "unknown parameter; accepted: \(accepted.sorted().joined(separator: ", "))")
            }
            guard values[name] == nil else { throw Self.invalid(name, "given more than once") }
            guard value.utf8.count <= Self.maxValueBytes else {
                throw Self.invalid(name, "longer than \(Self.maxValueBytes) bytes")
            }
            values[name] = value
        }
    }

    subscript(_ name: String) -> String? { values[name] }

    /// The scope of a query over `app`: window (default: the 30 days ending `today`), filters, grouping.
    func scope(
        app: String, defaultGroupBy: [GroupDimension],
        today: UTCDay = .today
    ) throws(APIError) -> Scope {
        let to = try day("to") ?? today.clamped
        let from = try day("from") ?? DayRange(last: to, count: 30).from
        guard from <= to else {
            throw Self.invalid("from", "\(from) is after to (\(to))")
        }
        guard to.ordinal - from.ordinal < Self.maxDays else {
            throw Self.invalid("from", "the window spans more than \(Self.maxDays) days")
        }
        var groupBy = defaultGroupBy
        if let raw = values["group_by"] {
            groupBy = []
            for part in Self.list(raw) {
                guard let dimension = GroupDimension(rawValue: part) else {
                    throw Self.invalid(
                        "group_by",
                        "\"\(Self.printable(part))\" is not one of \(GroupDimension.allCases.map(\.rawValue).joined(separator: ", "))"
                    )
                }
                if !groupBy.contains(dimension) { groupBy.append(dimension) }
            }
        }
        let states = Self.list(values["app_state"])
        for state in states {
            guard let slash = state.firstIndex(of: "/"), slash != state.startIndex,
                state.index(after: slash) != state.endIndex
            else {
                throw Self.invalid("app_state", "\"\(Self.printable(state))\" is not domain/label")
            }
        }
        return Scope(
            app: app, days: DayRange(from: from, to: to),
            versions: Self.list(values["version"]), oses: Self.list(values["os"]), devices: Self.list(values["device"]),
            appStates: states, groupBy: groupBy)
    }

    /// An integer parameter within `range`, or `nil` when absent.
    func integer(_ name: String, in range: ClosedRange<Int>) throws(APIError) -> Int? {
        guard let raw = values[name] else { return nil }
        guard raw.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }), raw.utf8.count <= 9,
            let value = Int(raw), range.contains(value)
        else {
            throw Self.invalid(
                name, "\"\(Self.printable(raw))\" is not an integer \(range.lowerBound)…\(range.upperBound)")
        }
        return value
    }

    /// A day parameter, or `nil` when absent.
    private func day(_ name: String) throws(APIError) -> UTCDay? {
        guard let value = values[name] else { return nil }
        guard let day = UTCDay(value) else {
            throw Self.invalid(
                name, "\"\(Self.printable(value))\" is not a date YYYY-MM-DD between 2000-01-01 and 9999-12-31")
        }
        return day
    }

    static func invalid(_ parameter: String, _ message: String) -> APIError {
        APIError(.badRequest, code: "invalid_parameter", "\(parameter): \(message)")
    }

    /// `application/x-www-form-urlencoded` decoding of one name or value: `+` → space, then `%XX`.
    static func formDecode(_ raw: Substring, parameter: String) throws(APIError) -> String {
        let spaced = raw.replacingOccurrences(of: "+", with: " ")
        guard let decoded = spaced.removingPercentEncoding else {
            throw invalid(Self.printable(parameter), "malformed percent-encoding")
        }
        return decoded
    }

    /// `text` cut to 64 characters with control characters replaced, for error messages.
    static func printable(_ text: String) -> String {
        let cut = text.unicodeScalars.prefix(64).map { $0.properties.generalCategory == .control ? "?" : Character($0) }
        return String(cut) + (text.unicodeScalars.count > 64 ? "…" : "")
    }

    /// A comma list; empty items dropped. Device types contain commas (`iPhone15,2`), so a part
    /// that is only digits is glued back to the previous one.
    static func list(_ value: String?) -> [String] {
        guard let value, !value.isEmpty else { return [] }
        var items: [String] = []
        for part in value.split(separator: ",", omittingEmptySubsequences: true) {
            let trimmed = part.trimmingCharacters(in: .whitespaces)
            if let last = items.last, !trimmed.isEmpty, trimmed.allSatisfy(\.isNumber), last.last?.isNumber == true,
                last.contains(where: \.isLetter)
            {
                items[items.count - 1] = last + "," + trimmed
            } else if !trimmed.isEmpty {
                items.append(trimmed)
            }
        }
        return items
    }
}
