/// Foreground or background, for exit counts.
package enum AppState: String, Sendable, Equatable, CaseIterable {
    case foreground
    case background
}
