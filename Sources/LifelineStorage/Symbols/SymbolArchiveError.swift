/// Why a zip of `.dSYM` bundles was refused, before or while anything in it was inflated. The
/// ``message`` names the problem and is safe to show to the uploader (no server path in it).
package struct SymbolArchiveError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What kind of refusal this is; the HTTP edge answers it with ``status`` and this code.
    package enum Code: String, Sendable, Equatable, CaseIterable {
        /// Not a zip this server reads: no end-of-central-directory record in the file's last
        /// 64 KiB + 22 bytes, a central directory that does not fit the file, a damaged header,
        /// several disks, an encrypted entry or an unknown compression method.
        case invalidZip = "invalid_zip"
        /// An entry name that is absolute, climbs out with `..`, names a drive or holds a NUL, or
        /// an entry that is a symbolic link.
        case unsafeEntry = "unsafe_zip_entry"
        /// More entries than ``SymbolArchiveLimits/maxEntries``, or a central directory larger than
        /// ``SymbolArchiveLimits/maxDirectoryBytes``.
        case tooManyEntries = "zip_too_many_entries"
        /// The DWARF files declare (or, inflating, reach) more than
        /// ``SymbolArchiveLimits/maxExtractedBytes`` in all.
        case tooLarge = "zip_too_large"
        /// An entry declares more than ``SymbolArchiveLimits/maxRatio`` times its compressed size.
        case zipBomb = "zip_bomb"
        /// The zip holds no `<name>.dSYM/Contents/Resources/DWARF/<name>`.
        case noDWARF = "no_dwarf_in_zip"
        /// Inflating took more than ``SymbolArchiveLimits/maxCPUSeconds`` of a core.
        case overBudget = "upload_over_budget"
        /// The server could not write the inflated files (disk): retry later.
        case unavailable
    }

    /// The kind of refusal.
    package var code: Code
    /// What was wrong, for the uploader.
    package var message: String

    package init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// The HTTP status of the refusal: 413 for sizes over a bound, 503 for the server's own
    /// failure, 422 for the rest.
    package var status: Int {
        switch code {
        case .tooLarge: 413
        case .unavailable: 503
        default: 422
        }
    }

    package var description: String { "\(code.rawValue): \(message)" }
}
