/// One slice of imported debug symbols.
package struct DebugSymbols: Sendable, Equatable {
    package var uuid: String
    package var app: String
    package var arch: String
    package var binaryName: String
    package var textVMAddress: UInt64
    package var size: Int
    package var uploadedAt: Int64
    /// Set once the file crashed `llvm-symbolizer` or ran past its time limit: lookups skip it.
    package var unusable: UnusableSymbols?

    package init(
        uuid: String, app: String, arch: String, binaryName: String, textVMAddress: UInt64, size: Int,
        uploadedAt: Int64, unusable: UnusableSymbols? = nil
    ) {
        self.uuid = uuid
        self.app = app
        self.arch = arch
        self.binaryName = binaryName
        self.textVMAddress = textVMAddress
        self.size = size
        self.uploadedAt = uploadedAt
        self.unusable = unusable
    }
}

/// Why a symbol file is no longer used, and since when (seconds since the epoch).
package struct UnusableSymbols: Sendable, Equatable {
    /// A ``SymbolFileFailure`` raw value (`crashed`, `timed_out`), kept as stored.
    package var reason: String
    package var at: Int64

    package init(reason: String, at: Int64) {
        self.reason = reason
        self.at = at
    }

    /// The stored columns as a mark: nil unless both are set.
    package init?(reason: String?, at: Int64?) {
        guard let reason, let at else { return nil }
        self.init(reason: reason, at: at)
    }
}

/// How `llvm-symbolizer` failed on a file: its process died answering (twice, on two processes),
/// or it did not answer within the request time limit.
package enum SymbolFileFailure: String, Sendable, CaseIterable {
    case crashed
    case timedOut = "timed_out"
}
