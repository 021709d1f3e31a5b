import Foundation

/// Progress on standard error: a redrawn bar on a terminal, a plain line every 10 % otherwise.
final class Progress {
    let total: Int
    let label: String
    private var done = 0
    private var lastPercent = -1
    private let isTTY = isatty(STDERR_FILENO) == 1
    private let started = ContinuousClock.now

    init(total: Int, label: String) {
        self.total = total
        self.label = label
    }

    func advance(by count: Int = 1) {
        done += count
        let percent = total == 0 ? 100 : done * 100 / total
        if isTTY {
            guard percent != lastPercent || done == total else { return }
            let width = 30
            let filled = width * percent / 100
            let bar = String(repeating: "#", count: filled) + String(repeating: ".", count: width - filled)
            FileHandle.standardError.write(Data("\r\(label) [\(bar)] \(done)/\(total)".utf8))
        } else if percent / 10 != lastPercent / 10 {
            printError("\(label): \(done)/\(total) (\(percent)%)")
        }
        lastPercent = percent
    }

    /// Prints a message on its own line without breaking the bar.
    func interrupt(_ message: String) {
        if isTTY { FileHandle.standardError.write(Data("\r\u{1B}[K".utf8)) }
        printError(message)
    }

    func finish() {
        if isTTY { FileHandle.standardError.write(Data("\n".utf8)) }
        let seconds =
            Double((ContinuousClock.now - started).components.attoseconds) / 1e18
            + Double((ContinuousClock.now - started).components.seconds)
        printError("\(label): \(done) in \(String(format: "%.1f", seconds)) s")
    }
}
