import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// The central directory of a zip, read and checked before anything in it is inflated: the
/// end-of-central-directory record is looked for only where the zip format allows it (the last
/// 64 KiB + 22 bytes: its 22 bytes and a comment of at most 65,535), zip64 included, then the
/// central directory it points to is read whole and every entry checked against the file's size
/// and ``SymbolArchiveLimits``. At most the tail and the directory are read, whatever the file's
/// size: a 200 MB file of random bytes behind a zip signature is refused after reading 64 KiB.
///
/// (ZIPFoundation looks for the record byte by byte from the end of the file to its start, one
/// seek and one 4-byte read each: about a minute of a core for 200 MB without a record. Once this
/// check has passed, its search stops in the tail, at the record found here.)
package struct ZipDirectory: Sendable, Equatable {
    /// One entry as the central directory declares it.
    package struct Entry: Sendable, Equatable {
        /// The name, decoded as UTF-8 (bytes that are not are replaced).
        package var path: String
        /// 0 stored, 8 deflated (the only two read).
        package var method: UInt16
        package var compressedSize: UInt64
        package var uncompressedSize: UInt64
        /// Where the entry's local header starts.
        package var localHeaderOffset: UInt64
        /// A folder (the name ends with `/`).
        package var isDirectory: Bool
        /// A symbolic link (Unix mode `S_IFLNK` in the external attributes).
        package var isSymbolicLink: Bool
        /// General purpose flag bit 0.
        package var isEncrypted: Bool
    }

    /// Every entry, in the directory's order.
    package var entries: [Entry]
    /// Where the central directory starts and its size.
    package var directoryOffset: UInt64
    package var directorySize: UInt64
    /// Whether the archive has a zip64 end record.
    package var isZip64: Bool
    /// How many bytes of the file were read to check it (its tail and its central directory).
    package var bytesRead: Int

    static let endRecordSize = 22
    static let maxCommentBytes = 65_535
    static let zip64LocatorSize = 20
    static let zip64EndRecordSize = 56
    static let centralHeaderSize = 46
    static let localHeaderSize = 30
    static let endSignature: UInt32 = 0x0605_4B50
    static let zip64LocatorSignature: UInt32 = 0x0706_4B50
    static let zip64EndSignature: UInt32 = 0x0606_4B50
    static let centralSignature: UInt32 = 0x0201_4B50

    /// The entries that are extracted: regular files at `*.dSYM/Contents/Resources/DWARF/<name>`.
    package var dwarfEntries: [Entry] {
        entries.filter { !$0.isDirectory && !$0.isSymbolicLink && SymbolFiles.isDWARFEntry($0.path) }
    }

    /// Reads and checks the central directory of `file` within `limits`; throws naming the first
    /// problem: ``SymbolArchiveError/Code/invalidZip`` (no record, a directory that does not fit the
    /// file, damaged entries, several disks, encryption, unknown methods),
    /// ``SymbolArchiveError/Code/unsafeEntry``, ``SymbolArchiveError/Code/tooManyEntries``,
    /// ``SymbolArchiveError/Code/zipBomb``, ``SymbolArchiveError/Code/tooLarge``. Reads only.
    package static func read(_ file: URL, limits: SymbolArchiveLimits) throws(SymbolArchiveError) -> ZipDirectory {
        let descriptor = open(file.path, O_RDONLY)
        guard descriptor >= 0 else { throw SymbolArchiveError(.unavailable, "cannot read the uploaded file") }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else {
            throw SymbolArchiveError(.unavailable, "cannot read the uploaded file")
        }
        var reader = Reader(descriptor: descriptor, size: UInt64(clamping: status.st_size))
        return try read(&reader, limits: limits)
    }

    private static func read(_ reader: inout Reader, limits: SymbolArchiveLimits) throws(SymbolArchiveError)
        -> ZipDirectory
    {
        let size = reader.size
        guard size >= UInt64(endRecordSize) else {
            throw invalid("the file (\(size) bytes) is shorter than a zip's end-of-central-directory record")
        }
        // The record: the last signature from the end within the tail the format allows.
        let tailLength = Int(min(size, UInt64(endRecordSize + maxCommentBytes)))
        let tailStart = size - UInt64(tailLength)
        let tail = try reader.bytes(at: tailStart, count: tailLength)
        var found: Int?
        var at = tailLength - endRecordSize
        while at >= 0 {
            if tail[at] == 0x50, tail[at + 1] == 0x4B, tail[at + 2] == 0x05, tail[at + 3] == 0x06 {
                found = at
                break
            }
            at -= 1
        }
        guard let record = found else {
            throw invalid(
                "no end-of-central-directory record in the file's last \(tailLength) bytes "
                    + "(where the zip format puts it): not a zip, or cut short")
        }
        let endOffset = tailStart + UInt64(record)
        let commentLength = UInt64(u16(tail, record + 20))
        guard endOffset + UInt64(endRecordSize) + commentLength == size else {
            throw invalid(
                "the end-of-central-directory record at byte \(endOffset) announces a comment of "
                    + "\(commentLength) bytes, but the file ends \(size - endOffset - UInt64(endRecordSize)) bytes "
                    + "after it: cut short, or bytes appended")
        }
        var disk = UInt32(u16(tail, record + 4))
        var directoryDisk = UInt32(u16(tail, record + 6))
        var entriesOnDisk = UInt64(u16(tail, record + 8))
        var entryCount = UInt64(u16(tail, record + 10))
        var directorySize = UInt64(u32(tail, record + 12))
        var directoryOffset = UInt64(u32(tail, record + 16))
        var directoryEnd = endOffset
        let isZip64 =
            entryCount == 0xFFFF || entriesOnDisk == 0xFFFF || directorySize == 0xFFFF_FFFF
            || directoryOffset == 0xFFFF_FFFF
        if isZip64 {
            guard endOffset >= UInt64(zip64LocatorSize + zip64EndRecordSize) else {
                throw invalid("the end record asks for zip64 but there is no room for its locator before it")
            }
            let locatorOffset = endOffset - UInt64(zip64LocatorSize)
            let locator = try reader.bytes(at: locatorOffset, count: zip64LocatorSize)
            guard u32(locator, 0) == zip64LocatorSignature else {
                throw invalid("the end record asks for zip64 but no zip64 locator precedes it")
            }
            guard u32(locator, 16) <= 1 else { throw invalid("the zip spans several disks") }
            let recordOffset = u64(locator, 8)
            // The zip64 record without extensible data, right before its locator (as ZIPFoundation reads it).
            guard recordOffset == locatorOffset - UInt64(zip64EndRecordSize) else {
                throw invalid(
                    "the zip64 end record is at byte \(recordOffset), not right before its locator "
                        + "(\(locatorOffset - UInt64(zip64EndRecordSize))): damaged, or with extensible data")
            }
            let zip64 = try reader.bytes(at: recordOffset, count: zip64EndRecordSize)
            guard u32(zip64, 0) == zip64EndSignature, u64(zip64, 4) == UInt64(zip64EndRecordSize - 12) else {
                throw invalid("the zip64 end-of-central-directory record is damaged")
            }
            disk = u32(zip64, 16)
            directoryDisk = u32(zip64, 20)
            entriesOnDisk = u64(zip64, 24)
            entryCount = u64(zip64, 32)
            directorySize = u64(zip64, 40)
            directoryOffset = u64(zip64, 48)
            directoryEnd = recordOffset
        }
        guard disk == 0, directoryDisk == 0, entriesOnDisk == entryCount else {
            throw invalid("the zip spans several disks")
        }
        guard entryCount <= UInt64(limits.maxEntries) else {
            throw SymbolArchiveError(
                .tooManyEntries, "the zip declares \(entryCount) entries (over \(limits.maxEntries))")
        }
        guard directorySize <= UInt64(limits.maxDirectoryBytes) else {
            throw SymbolArchiveError(
                .tooManyEntries,
                "the zip's central directory is \(directorySize) bytes (over \(limits.maxDirectoryBytes))")
        }
        guard directoryOffset <= directoryEnd, directoryEnd - directoryOffset == directorySize else {
            throw invalid(
                "the central directory (\(directorySize) bytes at byte \(directoryOffset)) does not end where "
                    + "the end record starts (byte \(directoryEnd)) in a file of \(size) bytes: cut short, "
                    + "or not a zip")
        }
        guard entryCount * UInt64(centralHeaderSize) <= directorySize else {
            throw invalid(
                "the central directory (\(directorySize) bytes) is too short for the \(entryCount) entries "
                    + "it declares")
        }
        let directory = try reader.bytes(at: directoryOffset, count: Int(directorySize))
        var entries: [Entry] = []
        entries.reserveCapacity(Int(entryCount))
        var cursor = 0
        var declared: UInt64 = 0
        for index in 0..<Int(entryCount) {
            let entry = try readEntry(directory, at: &cursor, index: index, dataEnd: directoryOffset)
            if let problem = SymbolFiles.unsafePath(entry.path) {
                throw SymbolArchiveError(
                    .unsafeEntry, "unsafe path in the zip: \(problem): \(SymbolFiles.printable(entry.path))")
            }
            guard !entry.isSymbolicLink else {
                throw SymbolArchiveError(
                    .unsafeEntry, "the zip holds a symbolic link: \(SymbolFiles.printable(entry.path))")
            }
            entries.append(entry)
            guard !entry.isDirectory, SymbolFiles.isDWARFEntry(entry.path) else { continue }
            // What is inflated: read as ZIPFoundation can, within the ratio and the total.
            let name = SymbolFiles.printable(entry.path)
            guard !entry.isEncrypted else { throw invalid("\(name) is encrypted") }
            guard entry.method == 0 || entry.method == 8 else {
                throw invalid("\(name) uses compression method \(entry.method) (only stored and deflated are read)")
            }
            guard entry.method != 0 || entry.compressedSize == entry.uncompressedSize else {
                throw invalid(
                    "\(name) is stored but declares \(entry.uncompressedSize) bytes from \(entry.compressedSize)")
            }
            let ratio = entry.uncompressedSize / max(entry.compressedSize, 1)
            guard ratio <= UInt64(limits.maxRatio) else {
                throw SymbolArchiveError(
                    .zipBomb, "\(name) expands \(ratio):1 (over \(limits.maxRatio):1): refused as a zip bomb")
            }
            declared = declared.addingReportingOverflow(entry.uncompressedSize).partialValue
            guard declared <= UInt64(max(limits.maxExtractedBytes, 0)) else {
                throw SymbolArchiveError(
                    .tooLarge,
                    "the zip's DWARF files declare more than \(limits.maxExtractedBytes) bytes in all")
            }
        }
        guard cursor == directory.count else {
            throw invalid(
                "the central directory has \(directory.count - cursor) bytes after the last of its "
                    + "\(entryCount) entries")
        }
        return ZipDirectory(
            entries: entries, directoryOffset: directoryOffset, directorySize: directorySize, isZip64: isZip64,
            bytesRead: reader.bytesRead)
    }

    /// The central directory entry at `cursor` (moved past it); its data must end before `dataEnd`.
    private static func readEntry(_ directory: [UInt8], at cursor: inout Int, index: Int, dataEnd: UInt64)
        throws(SymbolArchiveError) -> Entry
    {
        let start = cursor
        guard start + centralHeaderSize <= directory.count, u32(directory, start) == centralSignature else {
            throw invalid("central directory entry \(index + 1) is damaged or cut short")
        }
        let madeBy = u16(directory, start + 4)
        let flags = u16(directory, start + 8)
        let method = u16(directory, start + 10)
        var compressed = UInt64(u32(directory, start + 20))
        var uncompressed = UInt64(u32(directory, start + 24))
        let nameLength = Int(u16(directory, start + 28))
        let extraLength = Int(u16(directory, start + 30))
        let commentLength = Int(u16(directory, start + 32))
        let diskStart = u16(directory, start + 34)
        let external = u32(directory, start + 38)
        var localOffset = UInt64(u32(directory, start + 42))
        let nameEnd = start + centralHeaderSize + nameLength
        let extraEnd = nameEnd + extraLength
        let end = extraEnd + commentLength
        guard end <= directory.count else {
            throw invalid("central directory entry \(index + 1) runs past the end of the directory")
        }
        let path = String(decoding: directory[(start + centralHeaderSize)..<nameEnd], as: UTF8.self)
        // The zip64 extended information: the 64-bit values of the fields set to 0xFFFFFFFF, in order.
        var extra = nameEnd
        while extra + 4 <= extraEnd {
            let id = u16(directory, extra)
            let length = Int(u16(directory, extra + 2))
            let data = extra + 4
            guard data + length <= extraEnd else {
                throw invalid("an extra field of \(SymbolFiles.printable(path)) runs past its entry")
            }
            if id == 0x0001 {
                var field = data
                func next() throws(SymbolArchiveError) -> UInt64 {
                    guard field + 8 <= data + length else {
                        throw invalid("the zip64 field of \(SymbolFiles.printable(path)) is too short")
                    }
                    defer { field += 8 }
                    return u64(directory, field)
                }
                if uncompressed == 0xFFFF_FFFF { uncompressed = try next() }
                if compressed == 0xFFFF_FFFF { compressed = try next() }
                if localOffset == 0xFFFF_FFFF { localOffset = try next() }
            }
            extra = data + length
        }
        guard diskStart == 0 || diskStart == 0xFFFF else { throw invalid("the zip spans several disks") }
        // The local header and the data must lie before the central directory.
        let (dataStart, overflow) = localOffset.addingReportingOverflow(UInt64(localHeaderSize))
        guard !overflow, dataStart <= dataEnd, compressed <= dataEnd - dataStart else {
            throw invalid(
                "\(SymbolFiles.printable(path)) declares \(compressed) bytes at byte \(localOffset), past the "
                    + "start of the central directory (byte \(dataEnd)): cut short, or inconsistent")
        }
        cursor = end
        let isUnix = madeBy >> 8 == 3
        return Entry(
            path: path, method: method, compressedSize: compressed, uncompressedSize: uncompressed,
            localHeaderOffset: localOffset, isDirectory: path.hasSuffix("/"),
            isSymbolicLink: isUnix && (external >> 16) & 0o170000 == 0o120000, isEncrypted: flags & 1 != 0)
    }

    private static func invalid(_ message: String) -> SymbolArchiveError { SymbolArchiveError(.invalidZip, message) }

    private static func u16(_ bytes: [UInt8], _ at: Int) -> UInt16 {
        UInt16(bytes[at]) | UInt16(bytes[at + 1]) << 8
    }

    private static func u32(_ bytes: [UInt8], _ at: Int) -> UInt32 {
        (0..<4).reduce(UInt32(0)) { $0 | UInt32(bytes[at + $1]) << (8 * UInt32($1)) }
    }

    private static func u64(_ bytes: [UInt8], _ at: Int) -> UInt64 {
        (0..<8).reduce(UInt64(0)) { $0 | UInt64(bytes[at + $1]) << (8 * UInt64($1)) }
    }

    /// Positioned reads of the file, counted.
    private struct Reader {
        let descriptor: Int32
        let size: UInt64
        var bytesRead = 0

        init(descriptor: Int32, size: UInt64) {
            self.descriptor = descriptor
            self.size = size
        }

        /// `count` bytes at `offset`; the caller has checked they lie in the file.
        mutating func bytes(at offset: UInt64, count: Int) throws(SymbolArchiveError) -> [UInt8] {
            guard offset <= size, UInt64(count) <= size - offset else {
                throw SymbolArchiveError(.invalidZip, "a zip record lies outside the file")
            }
            var buffer = [UInt8](repeating: 0, count: count)
            var done = 0
            let descriptor = self.descriptor
            while done < count {
                let got = buffer.withUnsafeMutableBytes { raw -> Int in
                    guard let base = raw.baseAddress else { return -1 }
                    return pread(descriptor, base + done, count - done, off_t(clamping: offset + UInt64(done)))
                }
                if got < 0, errno == EINTR { continue }
                guard got > 0 else { throw SymbolArchiveError(.unavailable, "cannot read the uploaded file") }
                done += got
            }
            bytesRead += count
            return buffer
        }
    }
}
