/// One slice of imported debug symbols.
package struct DebugSymbols: Sendable, Equatable {
    package var uuid: String
    package var app: String
    package var arch: String
    package var binaryName: String
    package var textVMAddress: UInt64
    package var size: Int
    package var uploadedAt: Int64

    package init(
        uuid: String, app: String, arch: String, binaryName: String, textVMAddress: UInt64, size: Int, uploadedAt: Int64
    ) {
        self.uuid = uuid
        self.app = app
        self.arch = arch
        self.binaryName = binaryName
        self.textVMAddress = textVMAddress
        self.size = size
        self.uploadedAt = uploadedAt
    }
}
