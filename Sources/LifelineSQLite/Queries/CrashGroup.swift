/// A row of `crash_groups`: diagnostics sharing one signature, per app.
package struct CrashGroup: Sendable, Equatable {
    package var id: Int64
    /// Bundle id.
    package var app: String
    package var fingerprint: String
    /// e.g. `crash`, `watchdog`, `hang`.
    package var groupKind: String
    package var title: String
    /// Epoch seconds of the earliest and latest diagnostic.
    package var firstSeen: Int64
    package var lastSeen: Int64
    /// Number of diagnostics counted in the group.
    package var count: Int64

    package init(
        id: Int64, app: String, fingerprint: String, groupKind: String, title: String, firstSeen: Int64,
        lastSeen: Int64, count: Int64
    ) {
        self.id = id
        self.app = app
        self.fingerprint = fingerprint
        self.groupKind = groupKind
        self.title = title
        self.firstSeen = firstSeen
        self.lastSeen = lastSeen
        self.count = count
    }
}
