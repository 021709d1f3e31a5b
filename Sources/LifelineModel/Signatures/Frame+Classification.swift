/// Frame helpers for crash signatures: normalized text offsets and system-binary detection.
extension Frame {
    /// The offset of ``address`` into its binary's text segment.
    ///
    /// iOS 14.0.x wrongly sends the image load address in `offsetIntoBinaryTextSegment`. Rule: when
    /// the value is at least 4 GiB (`0x1_0000_0000`, the bottom of every 64-bit Darwin image, while
    /// no text segment is 4 GiB long) and not above ``address``, it is a load address and the offset
    /// is `address − value`; otherwise the value is the true offset.
    package var textOffset: UInt64 {
        let value = offsetIntoBinaryTextSegment
        if value >= 0x1_0000_0000 && value <= address { return address - value }
        return value
    }

    /// Whether this frame belongs to an Apple system binary (see ``SystemBinaries``).
    package var isSystemFrame: Bool {
        if let binaryName, SystemBinaries.isSystemName(binaryName) { return true }
        return address >= SystemBinaries.sharedCacheBase
    }
}
