/// The parts a rollup level's cached cells are written in (migration 0025): a fold writes one part
/// of one level and moves that part's watermark alone (`rollup_watermarks`), so that no write of a
/// level's whole cache (the version level's ~9,400 rows took 46–72 ms on the reference load) holds
/// the door's batches back.
///
/// A row's part is a hash of its version-day (app, day, version): every row of one version and day,
/// at both levels and of every OS and device, is in one part, so that a part's rows lie together
/// in each table's key order and a page is written by one part (a hash of the whole key spread
/// each part over every page: 1.3× the bytes written). The hash is part of the file format: the
/// watermarks on disk say which documents each part's stored rows hold, so a replay after a
/// crash must put every row in the part it was written in. Never change it without a migration
/// that writes every part whole first.
package enum RollupParts {
    /// Parts per level.
    package static let count = 8

    /// The part of the rows of `cell` (its version-day's).
    static func part(_ cell: RollupDeltas.Cell) -> Int {
        var hash = mix(UInt64(bitPattern: cell.app))
        hash = mix(hash ^ UInt64(bitPattern: cell.day))
        hash = mix(hash ^ UInt64(bitPattern: cell.version))
        return Int(hash % UInt64(count))
    }

    /// The part of the rows of a version-day (tests delete a part's rows to rebuild it alone).
    package static func part(app: Int64, day: Int64, version: Int64) -> Int {
        part(RollupDeltas.Cell(app: app, day: day, version: version, os: 0, device: 0))
    }

    /// SplitMix64's finalizer.
    private static func mix(_ value: UInt64) -> UInt64 {
        var z = value &+ 0x9E37_79B9_7F4A_7C15
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
