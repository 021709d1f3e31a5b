extension CrashSignature {
    /// How many frames go into a fingerprint.
    package static let frameCount = 3

    /// Computes the grouping signature of a diagnostic (DOMAIN.md §3).
    ///
    /// - Group kind: the diagnostic kind's raw value, or `watchdog` for a crash whose termination
    ///   reason mentions `0x8badf00d` (any case).
    /// - Frames: the attributed thread's chain (per-thread trees) or the heaviest chain (flame
    ///   graphs: the root with the most samples, then the child with the most samples at each
    ///   level); the first ``frameCount`` app frames (``Frame/isSystemFrame`` false), else the
    ///   first ``frameCount`` frames of the chain.
    /// - Fingerprint: FNV-1a 64 of the components `kind`, exception type, signal and
    ///   `binaryName+0xtextOffset` of each frame, separated by U+001F; 16 lowercase hex digits.
    ///   Using the text offset (not the address) makes it survive ASLR; the binary name (not the
    ///   UUID) makes it survive rebuilds as long as the code does not move.
    package static func compute(
        kind: DiagnosticKind, exceptionType: Int64?, signal: Int64?, terminationReason: String?,
        callStackTree: CallStackTree?
    ) -> CrashSignature {
        var groupKind = kind.rawValue
        if kind == .crash, let terminationReason, terminationReason.lowercased().contains("0x8badf00d") {
            groupKind = "watchdog"
        }
        let chain = callStackTree.map(signatureChain) ?? []
        var frames = Array(chain.lazy.filter { !$0.isSystemFrame }.prefix(frameCount))
        if frames.isEmpty { frames = Array(chain.prefix(frameCount)) }

        var components = [groupKind, exceptionType.map { String($0) } ?? "", signal.map { String($0) } ?? ""]
        for frame in frames { components.append(frameLabel(frame)) }
        var hash = FNV1a()
        for (index, component) in components.enumerated() {
            if index > 0 { hash.combine(CollectionOfOne(0x1F)) }
            hash.combine(component.utf8)
        }

        var title: String
        switch groupKind {
        case "watchdog": title = "Watchdog termination (0x8badf00d)"
        case DiagnosticKind.hang.rawValue: title = "Hang"
        case DiagnosticKind.cpuException.rawValue: title = "CPU exception"
        case DiagnosticKind.diskWriteException.rawValue: title = "Disk-write exception"
        case DiagnosticKind.appLaunch.rawValue: title = "Slow launch"
        default:
            var parts: [String] = []
            if let exceptionType { parts.append(exceptionTypeName(exceptionType) ?? "exception \(exceptionType)") }
            if let signal { parts.append(signalName(signal) ?? "signal \(signal)") }
            title = parts.isEmpty ? "Crash" : parts.joined(separator: " / ")
        }
        if let top = frames.first { title += " at " + frameLabel(top, separator: " ") }
        return CrashSignature(fingerprint: hash.hex, groupKind: groupKind, title: title, frames: frames)
    }

    /// `MyApp+0x1a2b` (or `MyApp +0x1a2b` with a space separator).
    private static func frameLabel(_ frame: Frame, separator: String = "") -> String {
        let name = frame.binaryName ?? frame.binaryUUID ?? "?"
        return name + separator + "+0x" + String(frame.textOffset, radix: 16)
    }

    /// The chain of frames a signature is taken from, top first.
    ///
    /// Linear in the frames of the tree: the flattened frames are in pre-order, so one pass with a
    /// stack finds where each frame's subtree ends, and the walk then visits each frame's children
    /// by jumping from subtree to subtree instead of rescanning descendants at every level.
    package static func signatureChain(_ tree: CallStackTree) -> [Frame] {
        if tree.callStackPerThread { return tree.attributedChain }
        // Flame graph: heaviest root across all stacks, then heaviest child at each level.
        var best: (stack: Int, index: Int, samples: Int64)?
        for (s, stack) in tree.callStacks.enumerated() {
            for (i, flat) in stack.frames.enumerated() where flat.depth == 0 {
                let samples = flat.frame.sampleCount ?? 0
                if let current = best, samples <= current.samples { continue }
                best = (s, i, samples)
            }
        }
        guard let best else { return [] }
        let frames = tree.callStacks[best.stack].frames
        let subtreeEnd = subtreeEnds(frames)
        var chain = [frames[best.index].frame]
        var current = best.index
        while true {
            var child: (index: Int, samples: Int64)?
            var k = current + 1
            while k < subtreeEnd[current] {
                let samples = frames[k].frame.sampleCount ?? 0
                if child == nil || samples > (child?.samples ?? 0) { child = (k, samples) }
                k = subtreeEnd[k]
            }
            guard let child else { break }
            chain.append(frames[child.index].frame)
            current = child.index
        }
        return chain
    }

    /// For each pre-order frame, the index just past its last descendant (one pass, O(n)).
    static func subtreeEnds(_ frames: [FlatFrame]) -> [Int] {
        var ends = Array(repeating: frames.count, count: frames.count)
        var open: [Int] = []
        for (i, flat) in frames.enumerated() {
            while let top = open.last, frames[top].depth >= flat.depth {
                ends[top] = i
                open.removeLast()
            }
            open.append(i)
        }
        return ends
    }
}
