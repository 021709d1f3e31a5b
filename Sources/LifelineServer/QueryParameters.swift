import Foundation
import Hummingbird
import LifelineAnalysis

/// The query string of the aggregate endpoints: `from`, `to` (YYYY-MM-DD, inclusive), `version`,
/// `os`, `device` (comma lists), `group_by` (comma list of version, os, device, day).
struct QueryParameters {
    /// Longest window a query may span.
    static let maxDays = 3_660
    /// Parameters every endpoint accepts.
    static let known: Set<String> = ["from", "to", "version", "os", "device", "group_by"]

    /// Reads the scope of a request; unknown or invalid parameters → 400 naming the parameter.
    static func scope(
        app: String, request: Request, defaultGroupBy: [GroupDimension], extra: Set<String> = [],
        today: String = Day.of(epochSeconds: Int64(Date().timeIntervalSince1970))
    ) throws(APIError) -> Scope {
        let query = request.uri.queryParameters
        for (name, _) in query where !known.contains(String(name)) && !extra.contains(String(name)) {
            throw invalid(
                String(name),
                "unknown parameter; accepted: \((known.union(extra)).sorted().joined(separator: ", "))")
        }
        let to = try day(query["to"].map(String.init), name: "to") ?? today
        let toOrdinal = Day.ordinal(to)!
        let from = try day(query["from"].map(String.init), name: "from") ?? Day.string(toOrdinal - 29)
        let fromOrdinal = Day.ordinal(from)!
        guard fromOrdinal <= toOrdinal else { throw invalid("from", "\(from) is after to (\(to))") }
        guard toOrdinal - fromOrdinal < maxDays else {
            throw invalid("from", "the window spans more than \(maxDays) days")
        }
        var groupBy = defaultGroupBy
        if let raw = query["group_by"] {
            groupBy = []
            for part in list(String(raw)) {
                guard let dimension = GroupDimension(rawValue: part) else {
                    throw invalid("group_by", "\"\(part)\" is not one of version, os, device, day")
                }
                if !groupBy.contains(dimension) { groupBy.append(dimension) }
            }
        }
        return Scope(
            app: app, days: DayRange(from: from, to: to), versions: list(query["version"].map(String.init)),
            oses: list(query["os"].map(String.init)), devices: list(query["device"].map(String.init)),
            groupBy: groupBy)
    }

    static func invalid(_ parameter: String, _ message: String) -> APIError {
        APIError(.badRequest, code: "invalid_parameter", "\(parameter): \(message)")
    }

    private static func day(_ value: String?, name: String) throws(APIError) -> String? {
        guard let value else { return nil }
        guard Day.ordinal(value) != nil else { throw invalid(name, "\"\(value)\" is not a date YYYY-MM-DD") }
        return value
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
