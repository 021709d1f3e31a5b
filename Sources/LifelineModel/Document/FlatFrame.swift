/// A frame with its position in the tree, produced by an iterative walk (pre-order).
package struct FlatFrame: Sendable, Equatable {
    /// 0 for a root frame.
    package var depth: Int
    package var frame: Frame

    package init(depth: Int, frame: Frame) {
        self.depth = depth
        self.frame = frame
    }
}
