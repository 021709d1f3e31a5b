/// One thread (per-thread trees) or one root set (flame-graph trees) of a call-stack tree.
package struct CallStack: Sendable, Equatable {
    package var threadAttributed: Bool?
    /// The frames, flattened in pre-order with their depth.
    package var frames: [FlatFrame]

    package init(threadAttributed: Bool?, frames: [FlatFrame]) {
        self.threadAttributed = threadAttributed
        self.frames = frames
    }
}
