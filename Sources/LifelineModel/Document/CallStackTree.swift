/// A `callStackTree`.
package struct CallStackTree: Sendable, Equatable {
    package var callStackPerThread: Bool
    package var callStacks: [CallStack]

    package init(callStackPerThread: Bool, callStacks: [CallStack]) {
        self.callStackPerThread = callStackPerThread
        self.callStacks = callStacks
    }

    /// The frames of the attributed thread, top of stack first, following the first child at
    /// each level (for per-thread trees); for flame graphs, the heaviest root's first chain.
    package var attributedChain: [Frame] {
        guard let stack = callStacks.first(where: { $0.threadAttributed == true }) ?? callStacks.first else {
            return []
        }
        var chain: [Frame] = []
        var expectedDepth = 0
        for flat in stack.frames {
            if flat.depth == expectedDepth {
                chain.append(flat.frame)
                expectedDepth += 1
            } else if flat.depth < expectedDepth {
                break
            }
        }
        return chain
    }
}
