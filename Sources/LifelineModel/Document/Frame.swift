/// One frame of a call-stack tree. `address` needs 64 bits.
package struct Frame: Sendable, Equatable {
    package var binaryUUID: String?
    package var binaryName: String?
    package var address: UInt64
    /// As sent. On iOS 14.0.x this wrongly holds the image load address.
    package var offsetIntoBinaryTextSegment: UInt64
    package var sampleCount: Int64?

    package init(
        binaryUUID: String?, binaryName: String?, address: UInt64, offsetIntoBinaryTextSegment: UInt64,
        sampleCount: Int64?
    ) {
        self.binaryUUID = binaryUUID
        self.binaryName = binaryName
        self.address = address
        self.offsetIntoBinaryTextSegment = offsetIntoBinaryTextSegment
        self.sampleCount = sampleCount
    }
}
