/// A grouping signature that survives app rebuilds: kind + exception type + signal + the first
/// frames of the attributed thread that belong to the app's own binaries (binary name + offset),
/// falling back to system frames. Watchdog terminations (`0x8BADF00D`) get their own group kind.
package struct CrashSignature: Sendable, Equatable {
    /// Hex SHA-256-free stable hash (FNV-1a 64, 16 hex chars) of ``components``.
    package var fingerprint: String
    /// e.g. `crash`, `watchdog`, `hang`, `cpu_exception`…
    package var groupKind: String
    /// Human-readable title, e.g. `EXC_BAD_ACCESS / SIGSEGV at MyApp +0x1a2b`.
    package var title: String
    /// The frames that went into the fingerprint, top first.
    package var frames: [Frame]

    package init(fingerprint: String, groupKind: String, title: String, frames: [Frame]) {
        self.fingerprint = fingerprint
        self.groupKind = groupKind
        self.title = title
        self.frames = frames
    }
}
