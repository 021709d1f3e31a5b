import Foundation
import LifelineAnalysis

/// One page of a row-list answer (`exits`, `signposts`, `expiration-handlers`, `restoration`,
/// `launch`, `hangs`, `crashes`): at most `limit` rows (1…`query.max_rows`, default
/// `query.max_rows`) in the endpoint's deterministic order, starting after the row a `cursor`
/// names. An answer with rows left says `"truncated": true` and gives `next_cursor`.
///
/// A cursor is opaque to clients: base64url JSON of the query it belongs to (a hash of the path
/// and of every parameter but `limit` and `cursor`), how many rows came before, and a hash of
/// the identity of the last row returned (its group key and own keys, not its counts). The next
/// page starts after that row wherever it now is, so paging returns each row once even when
/// documents arrive between pages (a row new since the first page is given only if it sorts after
/// the cursor). Crash groups are ordered by count: their order holds for an unchanged window.
struct AnswerPage {
    /// Rows on this page at most.
    let limit: Int
    /// Where the page starts; nil: at the first row.
    let after: Cursor?
    /// Hash of the query the page is of.
    let query: UInt64

    struct Cursor: Codable, Equatable {
        /// Hash of the query, hex.
        var q: String
        /// Rows returned before the next page.
        var n: Int
        /// Hash of the identity of the last row returned, hex.
        var h: String
    }

    /// The page `parameters` ask for on `path` (`limit`, `cursor`), with `cap` rows at most.
    init(_ parameters: QueryParameters, path: String, cap: Int) throws(APIError) {
        limit = try parameters.integer("limit", in: 1...max(1, cap)) ?? max(1, cap)
        var text = path
        for (name, value) in parameters.values.sorted(by: { $0.key < $1.key }) where name != "limit" && name != "cursor"
        {
            text += "\u{1F}\(name)=\(value)"
        }
        query = Self.hash(text)
        guard let raw = parameters["cursor"] else {
            after = nil
            return
        }
        guard let cursor = Self.decode(raw), cursor.n >= 1, UInt64(cursor.h, radix: 16) != nil else {
            throw QueryParameters.invalid("cursor", "not a cursor given as next_cursor by this endpoint")
        }
        guard cursor.q == String(query, radix: 16) else {
            throw QueryParameters.invalid(
                "cursor", "belongs to another query: repeat the query of the first page (only limit may change)")
        }
        after = cursor
    }

    /// This page of `rows`: the rows, and the cursor of the next page when rows are left.
    /// `identity` names a row by its keys (never its counts).
    func cut<Row>(_ rows: [Row], identity: (Row) -> String) throws(APIError) -> (rows: ArraySlice<Row>, next: String?) {
        var start = 0
        if let after, let wanted = UInt64(after.h, radix: 16) {
            if after.n <= rows.count, Self.hash(identity(rows[after.n - 1])) == wanted {
                start = after.n
            } else if let index = rows.firstIndex(where: { Self.hash(identity($0)) == wanted }) {
                start = index + 1
            } else {
                throw QueryParameters.invalid(
                    "cursor", "the row it continues after is no longer in this answer; start again without cursor")
            }
        }
        let end = min(rows.count, start + limit)
        guard end < rows.count, end > 0 else { return (rows[start..<end], nil) }
        let next = Cursor(
            q: String(query, radix: 16), n: end, h: String(Self.hash(identity(rows[end - 1])), radix: 16))
        return (rows[start..<end], Self.encode(next))
    }

    /// The identity of a group key: its dimensions' values.
    static func identity(_ key: GroupKey) -> String {
        key.labels.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: "\u{1F}")
    }

    /// FNV-1a, 64 bits: stable across processes and releases (Swift's `Hasher` is seeded per run).
    static func hash(_ text: String) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in text.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01b3
        }
        return hash
    }

    static func encode(_ cursor: Cursor) -> String {
        let data = (try? JSONEncoder().encode(cursor)) ?? Data()
        return data.base64EncodedString().replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }

    static func decode(_ text: String) -> Cursor? {
        guard text.utf8.count <= 512 else { return nil }
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.utf8.count % 4) % 4)
        guard let data = Data(base64Encoded: base64) else { return nil }
        return try? JSONDecoder().decode(Cursor.self, from: data)
    }
}
