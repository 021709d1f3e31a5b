import CSQLite
import LifelineAnalysis

/// `ll_merge_explorer_map(stored, incoming)`: the merge of two encoded ``ExplorerCellMap``s.
enum ExplorerMergeFunction {
    private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

    /// Registers the function on a connection.
    static func register(on handle: OpaquePointer) -> Int32 {
        sqlite3_create_function_v2(
            handle, "ll_merge_explorer_map", 2, SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS, nil,
            { context, _, arguments in ExplorerMergeFunction.merge(context, arguments) }, nil, nil, nil)
    }

    private static func result(_ context: OpaquePointer?, _ encoded: [UInt8]) {
        encoded.withUnsafeBytes { raw in
            sqlite3_result_blob(context, raw.baseAddress, Int32(raw.count), transient)
        }
    }

    /// Merges as bytes (``ExplorerCellMap/merging(encoded:with:)``: the stored row's cells that the
    /// incoming ones do not touch are copied undecoded). A stored row that does not read (only a damaged file holds one) is replaced by
    /// the incoming cells rather than stopping the fold for good; `lifeline refold` rebuilds it.
    /// Incoming cells that do not decode are an error (the fold wrote them: a bug).
    private static func merge(_ context: OpaquePointer?, _ arguments: UnsafeMutablePointer<OpaquePointer?>?) {
        guard let arguments else { return sqlite3_result_null(context) }
        let stored = RollupBlob.argumentBytes(arguments[0])
        let incoming = RollupBlob.argumentBytes(arguments[1])
        if let merged = try? ExplorerCellMap.merging(encoded: stored, with: incoming) {
            return result(context, merged)
        }
        guard let cells = try? ExplorerCellMap(decoding: incoming) else {
            return sqlite3_result_error(context, "ll_merge_explorer_map: undecodable incoming cells", -1)
        }
        result(context, cells.encoded())
    }
}
